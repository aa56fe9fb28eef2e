/// A small, strict command-line parser: `--name value`, `--name=value`, repeatable options, flags and
/// positionals. Anything it was not told about is an error that names the command.
struct Arguments {
    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// `valued` options take a value; `switches` are boolean flags.
    init(_ words: [String], command: String, valued: Set<String>, switches: Set<String>) throws(Failure) {
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("--") || word == "-" {
                if word.hasPrefix("-") && word.count > 1 && !onlyPositionals && word != "-" && Int(word) == nil {
                    throw Failure(message: "studio \(command): unknown option \(word) (see `studio \(command) --help`)")
                }
                positionals.append(word)
                continue
            }
            if word == "--" { onlyPositionals = true; continue }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if switches.contains(name) {
                guard inlineValue == nil else { throw Failure(message: "studio \(command): --\(name) takes no value") }
                flags.insert(name)
            } else if valued.contains(name) {
                let value: String
                if let inlineValue { value = inlineValue } else {
                    guard index < words.count else { throw Failure(message: "studio \(command): --\(name) needs a value") }
                    value = words[index]
                    index += 1
                }
                options[name, default: []].append(value)
            } else {
                throw Failure(message: "studio \(command): unknown option --\(name) (see `studio \(command) --help`)")
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }
}
