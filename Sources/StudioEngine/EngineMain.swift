import Foundation
import StudioCLI

/// How `studio` enters the engine library: each engine command's `@_cdecl` entry (`studio_engine_NAME`,
/// `EngineLibrary.entryPoint(of:)`) hands this process's argc/argv (`studio NAME ...`) to `run`, which runs
/// the command exactly as `studio` runs its own: the words after the name parsed by its spec, its errors
/// mapped to messages and exit codes by `runCommand`.
enum EngineMain {
    static func run(_ command: any Command.Type, argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
        let words = (0..<Int(argc)).map { argv[$0].map { String(cString: $0) } ?? "" }
        // words[0] is the binary, words[1] the command's name.
        return runCommand(command, Array(words.dropFirst(2)), environment: ProcessInfo.processInfo.environment)
    }
}
