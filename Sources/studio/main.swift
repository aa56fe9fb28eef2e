import Foundation
import StudioCLI
import StudioViews
#if canImport(Glibc)
import Glibc
#endif

/// `studio`: the operator's CLI that talks to the server over the control socket or reads its database,
/// and the server itself (`studio serve`), which runs in the engine library (`EngineLibrary`) with the
/// other commands whose spec says `engine`.
let words = Array(CommandLine.arguments.dropFirst())

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
guard let command else {
    writeStandardError("studio: unknown command \"\(name)\" (see `studio --help`)\n")
    exit(2)
}
exit(runCommand(command, rest, environment: ProcessInfo.processInfo.environment))
