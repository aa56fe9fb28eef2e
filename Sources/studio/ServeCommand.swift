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
    static let valuedOptions: Set<String> = ["config", "rtmp", "record", "db", "socket", "program", "preset", "bitrate", "cameras", "audio",
                                             "camera-size", "iso-preset", "encoder", "inject-encoder-fault", "backends", "socket-group"]
    static let switchOptions: Set<String> = ["demo", "no-iso"]

    static func run(_ words: [String], environment: [String: String]) throws -> Int32 {
        let arguments = try Arguments(words, command: "serve", valued: valuedOptions, switches: switchOptions)
        guard arguments.positionals.isEmpty else {
            throw Arguments.Failure(message: "studio serve: unexpected argument \(arguments.positionals[0]) (see `studio serve --help`)")
        }
        let options = try makeOptions(arguments, environment: environment)

        // Block the stop signals in every thread (threads inherit the mask) and take them with sigwait
        // here: no async-signal-safety puzzles, and a clean, ordered shutdown. A second signal during
        // shutdown ends the process at once (the next start then marks the session crashed).
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

        let received = waitForSignal(stopSignals)
        let name = received == SIGINT ? "SIGINT" : received == SIGTERM ? "SIGTERM" : "SIGHUP"
        let signals = stopSignals
        NamedThread.start(name: "studio.signal") {
            let again = waitForSignal(signals)
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

    static func makeOptions(_ arguments: Arguments, environment: [String: String]) throws -> ServerOptions {
        var configuration = StudioConfiguration()
        if let path = arguments.value("config") {
            do { configuration = try StudioConfiguration.load(path: path) } catch {
                throw ClientFailure("\(error)", exitCode: 2)
            }
        }
        if let text = arguments.value("program") {
            guard let format = ProgramFormat(parsing: text) else {
                throw Arguments.Failure(message: "studio serve: --program \(text): expected WxH@FPS with even sizes, e.g. 1280x720@30")
            }
            configuration.program = format
        }
        if let preset = arguments.value("preset") {
            guard VideoSettings.presets.contains(preset) else {
                throw Arguments.Failure(message: "studio serve: --preset \(preset): expected one of \(VideoSettings.presets.joined(separator: ", "))")
            }
            configuration.video.preset = preset
        }
        if let text = arguments.value("bitrate") {
            guard let rate = BitRate.parse(text), rate >= 100_000 else {
                throw Arguments.Failure(message: "studio serve: --bitrate \(text): expected a rate like 4500k or 4.5M (at least 100k)")
            }
            configuration.video.bitRate = rate
        }
        if let text = arguments.value("encoder") {
            guard let choice = EncoderChoice(rawValue: text) else {
                throw Arguments.Failure(message: "studio serve: --encoder \(text): expected auto, vaapi or x264")
            }
            configuration.video.encoder = choice
        }
        if let text = arguments.value("audio") {
            switch text {
            case "tone": configuration.audio.source = .tone
            case "silence": configuration.audio.source = .silence
            // A PipeWire microphone: `pipewire` for the default Audio/Source, `pipewire:NODE` for one by node.name.
            case "pipewire": configuration.audio.source = .pipewire(node: "")
            case let text where text.hasPrefix("pipewire:") && text.count > "pipewire:".count:
                configuration.audio.source = .pipewire(node: String(text.dropFirst("pipewire:".count)))
            default: throw Arguments.Failure(message: "studio serve: --audio \(text): expected tone, silence, pipewire or pipewire:NODE")
            }
        }
        let urls = arguments.values("rtmp")
        for url in urls where !(url.hasPrefix("rtmp://") || url.hasPrefix("rtmps://")) {
            throw Arguments.Failure(message: "studio serve: --rtmp \(SecretMasking.maskURL(url)): expected an rtmp:// or rtmps:// URL")
        }
        if !urls.isEmpty {
            configuration.outputs = urls.enumerated().map { OutputTarget(name: "rtmp\($0.offset + 1)", url: $0.element) }
        }
        if let directory = arguments.value("record") { configuration.recordDirectory = directory }
        if arguments.flag("no-iso") {
            configuration.cameras.iso = false
            for index in configuration.cameras.pins.indices { configuration.cameras.pins[index].iso = false }
        }
        if let preset = arguments.value("iso-preset") {
            guard VideoSettings.presets.contains(preset) else {
                throw Arguments.Failure(message: "studio serve: --iso-preset \(preset): expected one of \(VideoSettings.presets.joined(separator: ", "))")
            }
            configuration.cameras.isoPreset = preset
        }
        if let path = arguments.value("db") { configuration.databasePath = path }
        if let path = arguments.value("socket") { configuration.socketPath = path }
        if let group = arguments.value("socket-group") { configuration.socketGroup = group }

        let socket = ControlSocketPath.resolve(flag: arguments.value("socket"), configured: configuration.socketPath,
                                               environment: environment, uid: getuid())
        let database = DatabasePath.resolve(flag: arguments.value("db"), configured: configuration.databasePath, environment: environment)
        var options = ServerOptions(configuration: configuration, databasePath: database, socketPath: socket)
        if arguments.flag("demo") { options.testCameraCount = configuration.cameras.demoCount }
        if let text = arguments.value("inject-encoder-fault") {
            guard let frames = Int(text), frames > 0 else {
                throw Arguments.Failure(message: "studio serve: --inject-encoder-fault \(text): expected a frame count")
            }
            options.injectEncoderFaultAfterFrames = frames
        }
        if let text = arguments.value("cameras") {
            guard let count = Int(text), (0...16).contains(count) else {
                throw Arguments.Failure(message: "studio serve: --cameras \(text): expected a number from 0 to 16")
            }
            options.testCameraCount = count
        }
        // Test-pattern cameras (`--demo`, `--cameras N`) stand in for the real ones: the real backends
        // are looked at only when `--backends` asks for them too.
        if options.testCameraCount > 0 { options.configuration.cameras.backends = [] }
        if let text = arguments.value("backends") {
            guard let backends = CameraBackendChoice.parseList(text) else {
                let known = CameraBackendChoice.allCases.map(\.rawValue).joined(separator: ",")
                throw Arguments.Failure(message: "studio serve: --backends \(text): expected a comma-separated list of \(known), or none")
            }
            options.configuration.cameras.backends = backends
        }
        if let text = arguments.value("camera-size") {
            guard let format = ProgramFormat(parsing: text + "@30"), format.width >= 16, format.height >= 16 else {
                throw Arguments.Failure(message: "studio serve: --camera-size \(text): expected WxH with even sizes of at least 16, e.g. 640x360")
            }
            options.testCameraSize = (format.width, format.height)
        }
        return options
    }
}
