import StudioCore
import StudioConfig

/// A usage error: the message names the command (`studio serve: ...`); `studio` exits 2.
public struct UsageError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A failure while running a command: `studio: MESSAGE`, exit code 1 unless said otherwise. Its
/// description is the message, so a server that passes one on (`studio reload` re-reads the config through
/// the CLI's loader) says the sentence and not the type.
public struct ClientFailure: Error, CustomStringConvertible {
    public let message: String
    public let exitCode: Int32
    public init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }
    public var description: String { message }
}

/// The words after a command, parsed strictly by its declaration: `--name value`, `--name=value`,
/// repeatable options, switches and positionals. Anything not declared is an error that names the
/// command, and so are positionals that do not fit.
public struct ParsedArguments: Sendable {
    public let command: String
    private var values: [String: [String]] = [:]
    private var switches: Set<String> = []
    public private(set) var positionals: [String] = []

    public init(_ words: [String], for spec: CommandSpec) throws(UsageError) {
        command = spec.name
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("--") || word == "-" {
                if word.hasPrefix("-") && word.count > 1 && !onlyPositionals && word != "-" && Int(word) == nil {
                    throw UsageError("studio \(command): unknown option \(word) (see `studio \(command) --help`)")
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
            guard let option = spec.option(name) else {
                throw UsageError("studio \(command): unknown option --\(name) (see `studio \(command) --help`)")
            }
            if option.takesValue {
                let value: String
                if let inlineValue { value = inlineValue } else {
                    guard index < words.count else { throw UsageError("studio \(command): --\(name) needs a value") }
                    value = words[index]
                    index += 1
                }
                values[name, default: []].append(value)
            } else {
                guard inlineValue == nil else { throw UsageError("studio \(command): --\(name) takes no value") }
                switches.insert(name)
            }
        }
        let required = spec.positionals.filter { !$0.optional }.count
        let most = spec.positionals.last?.repeating == true ? Int.max : spec.positionals.count
        if positionals.count < required || positionals.count > most {
            if let message = spec.positionalsError { throw UsageError("studio \(command): \(message)") }
            if positionals.count > spec.positionals.count {
                throw UsageError("studio \(command): unexpected argument \(positionals[spec.positionals.count]) (see `studio \(command) --help`)")
            }
            throw UsageError("studio \(command): expected \(spec.positionals.map(\.synopsis).joined(separator: " ")) (see `studio \(command) --help`)")
        }
    }

    public func flag(_ name: String) -> Bool { switches.contains(name) }
    public func value(_ name: String) -> String? { values[name]?.last }
    public func values(_ name: String) -> [String] { values[name] ?? [] }

    /// The option's value read by `syntax`; nil when it was not given. A refused value is a usage
    /// error that names the option and the value (not a URL: it may hold a stream key).
    public func parse<T>(_ name: String, _ syntax: ValueSyntax<T>) throws(UsageError) -> T? {
        guard let text = value(name) else { return nil }
        return try parseOne(name, text, syntax)
    }

    /// Every value of a repeatable option, read by `syntax`.
    public func parseAll<T>(_ name: String, _ syntax: ValueSyntax<T>) throws(UsageError) -> [T] {
        var result: [T] = []
        for text in values(name) { result.append(try parseOne(name, text, syntax)) }
        return result
    }

    /// A positional (`NAME` in the command's usage) read by `syntax`; a refused value is a usage error.
    public func parse<T>(positional index: Int, _ placeholder: String, _ syntax: ValueSyntax<T>) throws(UsageError) -> T? {
        guard positionals.indices.contains(index) else { return nil }
        do { return try syntax.parse(positionals[index]) } catch {
            throw UsageError("studio \(command): \(placeholder) \(positionals[index]): \(error.message)")
        }
    }

    private func parseOne<T>(_ name: String, _ text: String, _ syntax: ValueSyntax<T>) throws(UsageError) -> T {
        do { return try syntax.parse(text) } catch {
            // A URL is not echoed: in a malformed one the stream key may sit where masking does not
            // look (the message shows it masked where that is safe).
            let shown = text.contains("://") ? "" : " " + text
            throw UsageError("studio \(command): --\(name)\(shown): \(error.message)")
        }
    }
}
