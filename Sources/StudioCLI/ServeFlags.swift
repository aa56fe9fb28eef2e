import StudioCore
import StudioConfig
import Control
#if canImport(Glibc)
import Glibc
#endif

/// What the `studio serve` flags say: the config file's values with the flags applied on top, and
/// the settings that only the command line has (the server's options from them: StudioEngine's
/// `ServeSettings.serverOptions`).
public struct ServeSettings: Sendable {
    public var configuration = StudioConfiguration()
    /// `--demo`: the config's number of test-pattern cameras.
    public var demo = false
    /// `--cameras N`.
    public var cameraCount: Int?
    /// `--backends`.
    public var backends: Set<BackendName>?
    /// `--camera-size`.
    public var cameraSize: FrameSize?
    /// `--camera-noise`.
    public var cameraNoise: Int?
    /// `--inject-encoder-fault N`.
    public var injectEncoderFaultAfterFrames: Int?
    /// `--inject-clock-offset MS`.
    public var injectClockOffsetMilliseconds: Int?
    /// `--db` and `--socket` as given (they win over the environment, which wins over the config).
    public var databaseFlag: String?
    public var socketFlag: String?
    /// `--send` without a node's name (refused once every flag is read).
    var nodeSendWithoutName = false

    public init() {}
}

/// One `studio serve` (and `studio doctor`) flag, declared once: its option (name, value, help),
/// the config key it overrides, and what it sets. A flag that has a config key reads its value
/// with that key's `ValueSyntax`, so the two take the same values with the same words.
public struct ServeFlag: Sendable {
    public let option: OptionSpec
    /// The config key the flag overrides and whose values it takes (`video.bitrate`); nil when it has none.
    public let configKey: String?
    let apply: @Sendable (ParsedArguments, inout ServeSettings) throws -> Void

    /// A flag with a value read by `syntax`.
    static func value<T>(_ name: String, _ valueName: String, _ syntax: ValueSyntax<T>, config: String? = nil, help: String,
                         set: @escaping @Sendable (inout ServeSettings, T) -> Void) -> ServeFlag {
        ServeFlag(option: OptionSpec(name, valueName, help: help), configKey: config) { arguments, settings in
            if let value = try arguments.parse(name, syntax) { set(&settings, value) }
        }
    }

    /// A flag that may be given several times.
    static func repeated<T>(_ name: String, _ valueName: String, _ syntax: ValueSyntax<T>, config: String? = nil, help: String,
                            set: @escaping @Sendable (inout ServeSettings, [T]) -> Void) -> ServeFlag {
        ServeFlag(option: OptionSpec(name, valueName, repeatable: true, help: help), configKey: config) { arguments, settings in
            let values = try arguments.parseAll(name, syntax)
            if !values.isEmpty { set(&settings, values) }
        }
    }

    /// A switch.
    static func toggle(_ name: String, config: String? = nil, help: String, set: @escaping @Sendable (inout ServeSettings) -> Void) -> ServeFlag {
        ServeFlag(option: OptionSpec(name, help: help), configKey: config) { arguments, settings in
            if arguments.flag(name) { set(&settings) }
        }
    }
}

/// The flags of `studio serve`, which `studio doctor` takes too. Applied in this order (`--config`
/// first: the flags override the file).
public enum ServeFlags {
    public static let all: [ServeFlag] = [
        ServeFlag(option: OptionSpec("config", "FILE", help: "YAML config (see deploy/studio.yaml); flags override it"), configKey: nil) {
            arguments, settings in
            guard let path = try arguments.parse("config", .path) else { return }
            // Its errors name the file, line and key (exit 2).
            do { settings.configuration = try StudioConfiguration.load(path: path) } catch {
                throw ClientFailure("\(error)", exitCode: 2)
            }
        },
        .toggle("demo", help: "test-pattern cameras (3 unless --cameras says otherwise) instead of\nthe real ones; no hardware needed") {
            $0.demo = true
        },
        .value("cameras", "N", .cameraCount, config: "cameras.demo",
               help: "number of test-pattern cameras (implies --demo; 0 allowed)") { $0.cameraCount = $1 },
        // The names from `BackendName.selectable`, as the config checks them.
        .value("backends", BackendName.selectable.map(\.rawValue).joined(separator: ",") + "|none", .cameraBackends, config: "cameras.backends",
               help: "real cameras to look for: \(BackendName.selectable.map(\.rawValue).joined(separator: ", ")) (comma-separated) or none;\ndefault: config cameras.backends (all), none with --demo") {
            $0.backends = $1
        },
        .repeated("rtmp", "URL", .outputURL, config: "outputs",
                  help: "push the program to URL (\(OutputKind.networkSchemes)); repeat for several\ndestinations, named by kind: rtmp1, rtmp2, srt1. Write the key as ${NAME} (quoted)\nto take it from the environment variable NAME: a key on the command line is\nvisible to other users") { settings, urls in
            settings.configuration.outputs = zip(OutputKind.numberedNames(urls), urls).map { OutputTarget(name: $0, url: $1) }
        },
        .value("record", "DIR", .path, config: "record",
               help: "also record the program to DIR/session-ID-program.mkv, and each\ncamera on its own (ISO) to DIR/session-ID-camN.mkv") {
            $0.configuration.recordDirectory = $1
        },
        .toggle("no-iso", config: "cameras.iso", help: "record only the program (config: cameras: iso: false)") { settings in
            settings.configuration.cameras.iso = .off
            for index in settings.configuration.cameras.pins.indices { settings.configuration.cameras.pins[index].iso = .off }
        },
        .value("iso-preset", "NAME", .x264Preset, config: "cameras.iso_preset",
               help: "x264 preset of the ISO encoders (default ultrafast)") { $0.configuration.cameras.isoPreset = $1 },
        .value("camera-size", "WxH", .evenSize, help: "size of the test-pattern cameras (default 1280x720)") { $0.cameraSize = $1 },
        .value("camera-noise", "N", .noiseAmplitude,
               help: "camera-like sensor noise on the test-pattern cameras, 0-255\n(default 0; 6-12 is a webcam in a lit room)") { $0.cameraNoise = $1 },
        .value("db", "FILE", .path, config: "database",
               help: "SQLite event store (default: $STUDIO_DB, or the config, or\n$XDG_DATA_HOME/studio/studio.db; /var/lib/studio/studio.db as root)") {
            $0.configuration.databasePath = $1
            $0.databaseFlag = $1
        },
        .value("socket", "PATH", .socketPath, config: "socket", help: "control socket (default: see `studio --help`)") {
            $0.configuration.socketPath = $1
            $0.socketFlag = $1
        },
        .value("socket-group", "NAME", .groupName, config: "socket_group",
               help: "let members of group NAME use the control socket too (mode 0660);\ndefault: owner only (config: socket_group)") {
            $0.configuration.socketGroup = $1
        },
        .value("http", "ADDR:PORT", .listenAddress, config: "http.listen",
               help: "serve the HTTP API on ADDR:PORT (default 127.0.0.1:8080; IPv6 as\n[::1]:8080, [::]:8080 for every interface); an address other than\nloopback needs a token (http.token, or one generated: see `studio doctor`)") {
            $0.configuration.http.listen = $1
            $0.configuration.http.enabled = true
        },
        .toggle("no-http", config: "http.enabled", help: "no HTTP API (config: http: enabled: false)") { $0.configuration.http.enabled = false },
        .value("program", "WxH@FPS", .programFormat, config: "program.format",
               help: "program format (default 1280x720@30)") { $0.configuration.program = $1 },
        .value("preset", "NAME", .x264Preset, config: "video.preset", help: "x264 preset (default veryfast)") {
            $0.configuration.video.preset = $1
        },
        .value("bitrate", "RATE", .videoBitRate, config: "video.bitrate",
               help: "video bitrate, e.g. 4500k or 4.5M (default 4500k; 100k to 100M)") { $0.configuration.video.bitRate = $1 },
        .value("encoder", "auto|vaapi|x264", .encoder, config: "video.encoder",
               help: "program encoder: auto (VAAPI if the GPU has H.264 encode, else x264;\nthe default), vaapi (fail if unavailable) or x264") {
            $0.configuration.video.encoder = $1
        },
        .value("audio", "microphones|tone|silence|pipewire|pipewire:all|pipewire:NODE", .audioSource, config: "audio.source",
               help: "program audio: microphones (the default: every PipeWire microphone, the\ndesktop's default one up, the others muted; tone with test-pattern\ncameras, --demo), tone, silence, pipewire (the default Audio/Source),\npipewire:NODE (by node.name) or pipewire:all (every Audio/Source, all up)") {
            $0.configuration.audio.source = $1
        },
        .value("node", "NAME", .name, config: "node.name",
               help: "run as capture node NAME: also send each camera to the switcher\n(--send), as stream NAME/CAM; the switcher lists NAME in network.srt.nodes") {
            settings, name in
            if settings.configuration.node == nil { settings.configuration.node = NodeSettings(name: name, send: "") }
            settings.configuration.node?.name = name
        },
        .value("send", "srt://HOST:PORT", .nodeSend, config: "node.send",
               help: "the switcher's SRT listener a capture node (--node) sends its cameras to") { settings, url in
            settings.configuration.node?.send = url
            settings.nodeSendWithoutName = settings.configuration.node == nil
        },
        .value("inject-encoder-fault", "N", .positive("a frame count"),
               help: "testing aid: the program and ISO encoders fail after N frames, to\nexercise the switch to x264 mid-show on a machine without a GPU") {
            $0.injectEncoderFaultAfterFrames = $1
        },
        .value("inject-clock-offset", "MS", .clockShiftMilliseconds,
               help: "testing aid: a capture node's wall clock runs MS ms ahead (negative:\nbehind) of the machine's, as if its clock were off; the machine's\nclock is not touched") {
            $0.injectClockOffsetMilliseconds = $1
        },
    ]

    /// The options as the parser and help see them.
    public static var options: [OptionSpec] { all.map(\.option) }

    /// The settings the flags ask for: the config file (`--config`) loaded first, the other flags
    /// on top. A bad flag is a `UsageError`; a bad config file a `ClientFailure` (exit 2) with its
    /// file, line and key.
    public static func settings(_ arguments: ParsedArguments) throws -> ServeSettings {
        var settings = ServeSettings()
        for flag in all { try flag.apply(arguments, &settings) }
        if settings.nodeSendWithoutName { throw UsageError("--send needs --node NAME (or node.name in the config): the name the switcher knows this node by") }
        if settings.configuration.node?.send.isEmpty == true {
            throw UsageError("--node needs --send srt://SWITCHER:PORT (or node.send in the config): where this node sends its cameras")
        }
        return settings
    }
}
