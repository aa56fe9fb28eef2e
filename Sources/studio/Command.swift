import StudioCLI

/// One `studio` command: its declaration (name, positionals, options, help) and what it does.
/// `main.swift` lists the commands; parsing, `--help` and the overview come from `spec`.
protocol Command {
    static var spec: CommandSpec { get }
    /// Runs with the words already parsed by `spec`; returns the exit code.
    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32
}
