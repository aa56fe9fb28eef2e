import StudioViews
#if canImport(Glibc)
import Glibc
#endif

/// One `studio` command: its declaration (name, positionals, options, help) and what it does.
/// `studio`'s `Help.commands` lists the commands; parsing, `--help` and the overview come from `spec`.
/// A command whose spec says `engine` is declared here in StudioCLI (`EngineCommands.swift`) and runs
/// in the engine library: its `run` is the default below, which loads the library and enters it.
public protocol Command {
    static var spec: CommandSpec { get }
    /// Runs with the words already parsed by `spec`; returns the exit code.
    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32
}

extension Command {
    /// An engine command (`spec.engine`): the engine library runs it with this process's own argv.
    public static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        precondition(spec.engine, "studio \(spec.name) declares no run of its own and is no engine command")
        return try EngineLibrary.run(spec.name, argc: CommandLine.argc, argv: CommandLine.unsafeArgv)
    }
}

/// Runs `command` with `words` (what follows its name) and maps its errors to what the operator sees
/// and the exit code: a usage error (it names the command) exits 2, a `ClientFailure` its code, anything
/// else 1 with `studio: ` before it. `studio` and the engine library both run their commands through it.
public func runCommand(_ command: any Command.Type, _ words: [String], environment: [String: String]) -> Int32 {
    do {
        return try command.run(ParsedArguments(words, for: command.spec), environment: environment)
    } catch let error as UsageError {
        // These already name the command ("studio serve: ...").
        writeStandardError(error.message + "\n")
        return 2
    } catch let error as ClientFailure {
        writeStandardError("studio: " + error.message + "\n")
        return error.exitCode
    } catch {
        writeStandardError("studio: \(error)\n")
        return 1
    }
}
