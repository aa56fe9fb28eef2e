import StudioCore

/// `program:` — `size` + `fps`, or `format` (WxH@FPS, or a size alone). The snapshot writes the
/// effective format with its parts.
struct ProgramSection: Codable {
    var format: ProgramFormat

    init(format: ProgramFormat) { self.format = format }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case size, format, fps
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        let base = ProgramFormat.default
        var size = try keys.parse(.size, .evenSize)
        var rate = try keys.parse(.fps, .programRate)
        if let text = try keys.parse(.format, .text()) {
            if size != nil { throw decoder.conflict(.format, with: .size) }
            if text.contains("@") {
                if rate != nil { throw decoder.conflict(.fps, with: .format) }
                let format = try keys.parse(.format, .programFormat) ?? base
                size = FrameSize(width: format.width, height: format.height)
                rate = format.frameRate
            } else {
                do { size = try ValueSyntax.evenSize.parse(text) } catch {
                    throw decoder.failure("expected WIDTHxHEIGHT@FPS like 1280x720@30, got \(quoted(text))", at: CodingKeys.format)
                }
            }
        }
        format = ProgramFormat(width: size?.width ?? base.width, height: size?.height ?? base.height, frameRate: rate ?? base.frameRate)
    }

    private enum SnapshotKeys: String, CodingKey {
        case format, width, height, fps
    }

    func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: SnapshotKeys.self)
        try keys.encode(format.description, forKey: .format)
        try keys.encode(format.width, forKey: .width)
        try keys.encode(format.height, forKey: .height)
        try keys.encode(format.frameRate.description, forKey: .fps)
    }
}

private extension Decoder {
    func conflict(_ key: ProgramSection.CodingKeys, with other: ProgramSection.CodingKeys) -> Error {
        failure("conflicts with \(NodeLines.keyPath(codingPath + [other]) ?? other.stringValue); give the size and rate once (size + fps, or format)",
                at: key)
    }
}

/// Which H.264 encoder to use (`ValueSyntax.encoder` parses it).
public enum EncoderChoice: String, Sendable, CaseIterable, Encodable {
    /// VA-API when a working device is found, else x264.
    case auto
    case vaapi
    case x264
}

public struct VideoSettings: Sendable, Equatable, Codable {
    public var encoder: EncoderChoice = .auto
    /// x264 preset (also accepted, and ignored, with VA-API).
    public var preset = "veryfast"
    /// Target bit rate in bits per second.
    public var bitRate = 4_500_000
    /// Seconds between keyframes (2 is what most platforms ask for).
    public var keyframeIntervalSeconds: Double = 2

    public init() {}

    /// The x264 presets, fastest first.
    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower",
                                 "veryslow", "placebo"]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case encoder, preset, bitRate = "bitrate", keyframeIntervalSeconds = "keyframe_interval"
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        try keys.update(&encoder, .encoder, .encoder)
        try keys.update(&preset, .preset, .x264Preset)
        try keys.update(&bitRate, .bitRate, .videoBitRate)
        try keys.update(&keyframeIntervalSeconds, .keyframeIntervalSeconds, .keyframeInterval)
    }
}

/// Where program audio comes from (`ValueSyntax.audioSource` parses it, `description` writes it).
public enum AudioSource: Sendable, Equatable, CustomStringConvertible, Encodable {
    /// A 1 kHz test tone.
    case tone
    case silence
    /// A PipeWire node, written `pipewire:<node name>` in the file; `pipewire` alone (node "") is the
    /// default microphone.
    case pipewire(node: String)
    /// Every PipeWire Audio/Source found (present, lost, back), each an input of the mixer
    /// (`mic1`, `mic2`...), written `pipewire:all`.
    case pipewireAll
    /// The studio PC's own microphones, written `microphones`: every PipeWire Audio/Source as with
    /// `pipewire:all`, but only the desktop's default microphone starts up (0 dB); the others start
    /// muted, ready to raise: several webcams' microphones open at once give echo and comb filtering.
    /// The default without `audio.source` (but for test-pattern cameras: `AudioSettings.source(testCameras:)`).
    case microphones

    public var description: String {
        switch self {
        case .tone: return "tone"
        case .silence: return "silence"
        case .pipewire(let node): return node.isEmpty ? "pipewire" : "pipewire:\(node)"
        case .pipewireAll: return "pipewire:all"
        case .microphones: return "microphones"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var value = encoder.singleValueContainer()
        try value.encode(description)
    }
}

public struct AudioSettings: Sendable, Equatable, Codable {
    /// `audio.source`; nil when neither the config nor `--audio` says (see `source(testCameras:)`).
    public var source: AudioSource?
    /// AAC bit rate in bits per second.
    public var bitRate = 128_000
    /// The mixer's master (`audio.master`: gain, limiter ceiling).
    public var master = MixerMasterSettings.standard
    /// The mixer's inputs (`audio.inputs`): a stable name per identity, and settings per name.
    public var inputs: [AudioInputPin] = []
    public init() {}

    /// The program audio's source: the one set, else the test tone beside test-pattern cameras (`--demo`:
    /// a demo needs no hardware) and the studio PC's microphones otherwise (a real show never puts a
    /// tone on air by default).
    public func source(testCameras: Bool) -> AudioSource { source ?? (testCameras ? .tone : .microphones) }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case source, bitRate = "bitrate", master, inputs
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        source = try keys.parse(.source, .audioSource) ?? source
        try keys.update(&bitRate, .bitRate, .audioBitRate)
        try keys.update(&master, .master)
        if let list = try keys.decodeIfPresent(AudioInputList.self, forKey: .inputs) { inputs = list.pins }
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(source, forKey: .source)  // null: unset (see `source(testCameras:)`)
        try keys.encode(bitRate, forKey: .bitRate)
        try keys.encode(master, forKey: .master)
        try keys.encode(inputs, forKey: .inputs)
    }
}

/// One RTMP destination.
public struct OutputTarget: Sendable, Equatable, Encodable {
    /// The `name:` given, or `output1`, `output2`... by position. Unique.
    public var name: String
    /// The full URL including the stream key. Never log it: use `maskedURL`.
    public var url: String

    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }

    /// The URL with its stream key masked, for logs, status and snapshots.
    public var maskedURL: String { SecretMasking.maskURL(url) }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, name
    }

    /// For the snapshot: the URL masked.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(name, forKey: .name)
        try keys.encode(maskedURL, forKey: .url)
    }
}

/// `outputs:` — each item a mapping with `url` (and optional `name`), or the URL alone. Names
/// default to `output1`, `output2`... and are unique.
struct OutputList: Decodable {
    var targets: [OutputTarget] = []

    init(from decoder: any Decoder) throws {
        var items = try decoder.unkeyedContainer()
        var nameLines: [String: Int] = [:]
        while !items.isAtEnd {
            let item = try items.superDecoder()
            let index = targets.count
            var url: String?
            var name: String?
            if let shorthand = try? item.singleValueContainer().decode(String.self) {
                url = shorthand  // `- rtmp://host/app/key`
            } else {
                let keys = try item.rewording({ "expected a mapping with url (and optional name), got \($0)" }) {
                    try item.container(keyedBy: OutputTarget.CodingKeys.self)
                }
                url = try keys.parse(.url, .text())
                name = try keys.parse(.name, .text())
            }
            guard let url else { throw item.failure("missing: every output needs an \(OutputKind.networkSchemes) URL", at: OutputTarget.CodingKeys.url) }
            _ = try item.check(at: OutputTarget.CodingKeys.url) { () throws(ValueError) in try ValueSyntax.outputURL.parse(url) }
            let finalName = name ?? "output\(index + 1)"
            let namePath = item.codingPath + [OutputTarget.CodingKeys.name]
            let nameLine = item.line(at: namePath)
            _ = try item.check(at: OutputTarget.CodingKeys.name) { () throws(ValueError) in try ValueSyntax.name.parse(finalName) }
            if let first = nameLines[finalName] {
                throw item.failure("the name \"\(finalName)\" is already used by the output on line \(first)", at: OutputTarget.CodingKeys.name)
            }
            nameLines[finalName] = nameLine
            targets.append(OutputTarget(name: finalName, url: url))
        }
    }
}
