import Foundation
import StudioCore
import StudioSystem
import StudioServer
import StudioConfig
import Control
#if canImport(Glibc)
import Glibc
#endif

enum ServeCommand {
    static func run(_ words: [String], environment: [String: String]) throws -> Int32 {
        let arguments = try Arguments(words, command: "serve",
                                      valued: ["config", "rtmp", "record", "db", "socket", "program", "preset", "bitrate", "cameras", "audio"],
                                      switches: ["demo"])
        guard arguments.positionals.isEmpty else {
            throw Arguments.Failure(message: "studio serve: unexpected argument \(arguments.positionals[0]) (see `studio serve --help`)")
        }
        let options = try makeOptions(arguments, environment: environment)

        // Block the stop signals in every thread (threads inherit the mask), and take them with
        // sigwait below: no async-signal-safety puzzles, and a clean, ordered shutdown.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        let server: StudioServer
        do { server = try StudioServer(options: options) } catch {
            throw ClientFailure("\(error)", exitCode: 2)
        }
        for url in options.rtmpURLs where url.hasPrefix("rtmp://127.") || url.hasPrefix("rtmp://localhost") {
            print("studio: watch the program with: ffplay -fflags nobuffer \(url)")
        }
        print("studio: serving; control socket \(options.socketPath); stop with Ctrl-C")
        var received: Int32 = 0
        while sigwait(&stopSignals, &received) != 0 {}
        server.shutdown(reason: received == SIGINT ? "stopped" : "stopped")
        return 0
    }

    static func makeOptions(_ arguments: Arguments, environment: [String: String]) throws -> ServerOptions {
        var configuration = StudioConfiguration()
        if let path = arguments.value("config") {
            do { configuration = try StudioConfiguration.load(path: path) } catch {
                throw ClientFailure("\(error)", exitCode: 2)
            }
        }
        let socket = ControlSocketPath.resolve(flag: arguments.value("socket") ?? configuration.socket, environment: environment, uid: getuid())
        let database = DatabasePath.resolve(flag: arguments.value("db"), configured: configuration.database, environment: environment)
        var options = ServerOptions(databasePath: database, socketPath: socket)
        options.apply(configuration)

        if let text = arguments.value("program") {
            guard let format = ProgramFormat(parsing: text) else {
                throw Arguments.Failure(message: "studio serve: --program \(text): expected WxH@FPS with even sizes, e.g. 1280x720@30")
            }
            options.program = format
        }
        if let preset = arguments.value("preset") {
            let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]
            guard presets.contains(preset) else {
                throw Arguments.Failure(message: "studio serve: --preset \(preset): expected one of \(presets.joined(separator: ", "))")
            }
            options.preset = preset
        }
        if let text = arguments.value("bitrate") {
            guard let rate = StudioConfiguration.parseBitRate(text), rate >= 100_000 else {
                throw Arguments.Failure(message: "studio serve: --bitrate \(text): expected a rate like 4500k or 4.5M (at least 100k)")
            }
            options.videoBitRate = rate
        }
        if arguments.flag("demo") && options.testCameraCount == 0 { options.testCameraCount = 3 }
        if let text = arguments.value("cameras") {
            guard let count = Int(text), (0...16).contains(count) else {
                throw Arguments.Failure(message: "studio serve: --cameras \(text): expected a number from 0 to 16")
            }
            options.testCameraCount = count
        }
        if let text = arguments.value("audio") {
            guard let audio = ServerOptions.AudioSource(rawValue: text) else {
                throw Arguments.Failure(message: "studio serve: --audio \(text): expected tone or silence")
            }
            options.audio = audio
        }
        let urls = arguments.values("rtmp")
        for url in urls where !(url.hasPrefix("rtmp://") || url.hasPrefix("rtmps://")) {
            throw Arguments.Failure(message: "studio serve: --rtmp \(SecretMasking.maskURL(url)): expected an rtmp:// URL")
        }
        if !urls.isEmpty { options.rtmpURLs = urls }
        if let directory = arguments.value("record") { options.recordDirectory = directory }
        options.configSnapshot = configuration.jsonSnapshot()
        return options
    }
}
