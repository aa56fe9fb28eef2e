import Foundation
import StudioCore
import StudioSystem
import StudioServer
import StudioCLI
import Control
#if canImport(Glibc)
import Glibc
#endif

/// `studio serve` (declared in StudioCLI's EngineCommands.swift): the server in the foreground, until a stop signal.
@_cdecl("studio_engine_serve")
public func studioEngineServe(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    EngineMain.run(ServeInEngine.self, argc: argc, argv: argv)
}

enum ServeInEngine: Command {
    static var spec: CommandSpec { ServeCommand.spec }

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        // A stream key written on the command line is in argv, which every local user can read: hide
        // it there at once (ps then shows rtmp://host/app/****), and say how to keep it out.
        let exposed = StreamKeys.exposed(in: arguments)
        if !exposed.isEmpty {
            StreamKeys.hide(exposed, argv: CommandLine.unsafeArgv, count: Int(CommandLine.argc))
            if let warning = StreamKeys.warning(for: exposed) { writeStandardError(warning) }
        }
        let options = try ServeFlags.serverOptions(arguments, environment: environment)

        // Block the signals in every thread (threads inherit the mask) and take them with sigwait here:
        // no async-signal-safety puzzles, a reload on this ordinary thread, and a clean, ordered shutdown.
        // A second stop signal during shutdown ends the process at once (the next start then marks the
        // session crashed).
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&stopSignals, signal) }
        let maskResult = pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        guard maskResult == 0 else { throw ClientFailure("pthread_sigmask: \(String(cString: strerror(maskResult)))", exitCode: 2) }

        let server: StudioServer
        do { server = try StudioServer(options: options) } catch {
            throw ClientFailure("\(error)", exitCode: 2)
        }
        var banner = options.configuration.outputs.map { "studio: pushing the program to \($0.maskedURL)\n" }.joined()
        banner += "studio: serving; control socket \(options.socketPath); stop with Ctrl-C\n"
        writeIgnoringErrors(1, banner)

        var received = waitForSignal(stopSignals)
        while received == SIGHUP {
            // Its outcome is logged and stored (config_reloaded / config_reload_failed).
            server.reload(by: "SIGHUP")
            received = waitForSignal(stopSignals)
        }
        let name = received == SIGINT ? "SIGINT" : "SIGTERM"
        let signals = stopSignals
        NamedThread.start(name: "studio.signal") {
            var again = waitForSignal(signals)
            while again == SIGHUP { again = waitForSignal(signals) }  // no reload while stopping
            writeStandardError("studio: second signal (\(again)) during shutdown: exiting now\n")
            _exit(128 + again)
        }
        server.shutdown(reason: "stopped", signal: name)
        return 0
    }

    /// Waits for one of `signals` (blocked in every thread) and returns it.
    static func waitForSignal(_ signals: sigset_t) -> Int32 {
        var set = signals
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }
}
