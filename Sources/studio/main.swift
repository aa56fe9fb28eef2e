import Foundation
import StudioCLI
import StudioServer
#if canImport(Glibc)
import Glibc
#endif

/// `studio`: the server (`studio serve`) and the operator's CLI that talks to it over the control socket.
let words = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment

func fail(_ message: String, code: Int32 = 1) -> Never {
    writeStandardError("studio: " + message + "\n")
    exit(code)
}

guard let name = words.first else {
    print(Help.overview)
    exit(2)
}
let rest = Array(words.dropFirst())
let command = Help.commands.first { $0.spec.name == name } ?? Help.aliases[name]
if rest.contains("--help") || rest.contains("-h") {
    print(command?.spec.helpText ?? Help.overview)
    exit(0)
}

do {
    guard let command else { fail("unknown command \"\(name)\" (see `studio --help`)", code: 2) }
    exit(try command.run(ParsedArguments(rest, for: command.spec), environment: environment))
} catch let error as UsageError {
    // These already name the command ("studio serve: ...").
    writeStandardError(error.message + "\n")
    exit(2)
} catch let error as ClientFailure {
    fail(error.message, code: error.exitCode)
} catch {
    fail("\(error)")
}
