import Foundation
import StudioCore
import StudioSystem
import StudioServer
import StudioConfig
import EventStore
import Control
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

guard let command = words.first else {
    print(Help.overview)
    exit(2)
}
let rest = Array(words.dropFirst())
if rest.contains("--help") || rest.contains("-h") || command == "help" {
    let topic = command == "help" ? rest.first ?? "" : command
    print(Help.text(for: topic) ?? Help.overview)
    exit(0)
}

do {
    switch command {
    case "--help", "-h": print(Help.overview)
    case "--version", "version": print("studio 0.1.0")
    case "serve": exit(try ServeCommand.run(rest, environment: environment))
    case "doctor": exit(try DoctorCommand.run(rest, environment: environment))
    case "cameras", "switch", "status", "sessions", "log", "recordings", "watch", "camera", "controls", "control":
        exit(try ClientCommands.run(command, rest, environment: environment))
    default:
        fail("unknown command \"\(command)\" (see `studio --help`)", code: 2)
    }
} catch let error as Arguments.Failure {
    // These already name the command ("studio serve: ...").
    writeStandardError(error.message + "\n")
    exit(2)
} catch let error as ClientFailure {
    fail(error.message, code: error.exitCode)
} catch {
    fail("\(error)")
}
