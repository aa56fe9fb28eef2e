import StudioCore

/// Why a value was refused, in words that fit after a place: the config decoder puts
/// `studio.yaml:7: video.bitrate: ` before it, `studio serve` puts `studio serve: --bitrate 10: `.
public struct ValueError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// How one setting is written and what it may be: parsed and validated here once, for the YAML
/// config key and for the `studio serve` flag alike, so the two cannot disagree.
public struct ValueSyntax<Value>: Sendable {
    /// What the value is, for "expected ..., got a sequence" (`a bit rate`, `a path`).
    public let noun: String
    private let parser: @Sendable (String) throws(ValueError) -> Value

    public init(_ noun: String, parse: @escaping @Sendable (String) throws(ValueError) -> Value) {
        self.noun = noun
        self.parser = parse
    }

    public func parse(_ text: String) throws(ValueError) -> Value { try parser(text) }

    /// The same text, checked further (e.g. a range).
    public func map<Other>(_ transform: @escaping @Sendable (Value) throws(ValueError) -> Other) -> ValueSyntax<Other> {
        let parser = self.parser
        return ValueSyntax<Other>(noun) { (text: String) throws(ValueError) -> Other in try transform(parser(text)) }
    }
}

/// A value quoted for a message: masked when it looks like a URL (a stream key never reaches a log),
/// shortened when long.
func quoted(_ text: String) -> String {
    let shown = text.contains("://") ? SecretMasking.maskURL(text) : text
    return "\"" + (shown.count > 60 ? String(shown.prefix(60)) + "..." : shown) + "\""
}

// MARK: The settings' syntaxes

extension ValueSyntax where Value == String {
    /// Any text.
    public static func text(_ noun: String = "a string") -> Self { Self(noun) { $0 } }

    /// Text that `problem` finds nothing wrong with (else its words are the refusal): a URL checked by its
    /// kind's own table (`PullKind`, `NodeSettings`).
    public static func checked(_ noun: String, by problem: @escaping @Sendable (String) -> String?) -> Self {
        Self(noun) { (text: String) throws(ValueError) -> String in
            if let problem = problem(text) { throw ValueError(problem) }
            return text
        }
    }

    /// A file or directory path: any non-empty text.
    public static var path: Self {
        Self("a path") { (text: String) throws(ValueError) -> String in
            guard !text.isEmpty else { throw ValueError("expected a path, got an empty string") }
            return text
        }
    }

    /// The control socket: an absolute path.
    public static var socketPath: Self {
        path.map { (text: String) throws(ValueError) -> String in
            guard text.hasPrefix("/") else { throw ValueError("the control socket path must be absolute, got \(quoted(text))") }
            return text
        }
    }

    /// A Unix group name.
    public static var groupName: Self {
        Self("a group name") { (text: String) throws(ValueError) -> String in
            guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0 == "/" || $0 == ":" }) else {
                throw ValueError("expected a group name, got \(quoted(text))")
            }
            return text
        }
    }

    /// An x264 preset name.
    public static var x264Preset: Self {
        Self("a string") { (text: String) throws(ValueError) -> String in
            guard VideoSettings.presets.contains(text) else {
                throw ValueError("expected an x264 preset (\(VideoSettings.presets.joined(separator: ", "))), got \(quoted(text))")
            }
            return text
        }
    }

    /// An output's or camera's name: letters, digits, '-' or '_', at most 32.
    public static var name: Self {
        Self("a string") { (text: String) throws(ValueError) -> String in
            guard isValidName(text) else {
                throw ValueError("expected a name of letters, digits, '-' or '_' (at most 32), got \(quoted(text))")
            }
            return text
        }
    }

    /// What a scene's layer or a backup shows: a camera's or a scene's name, or a capture node's camera
    /// (`NODE/CAM`, `SRTListenerSpec.nodes`), which exists only once its node connects.
    public static var sourceName: Self {
        Self("a string") { (text: String) throws(ValueError) -> String in
            let parts = text.split(separator: SRTListenerSpec.nodeSeparator, omittingEmptySubsequences: false)
            guard parts.count <= 2, parts.allSatisfy({ isValidName(String($0)) }) else {
                throw ValueError("expected a name of letters, digits, '-' or '_' (at most 32), or a capture node's camera NODE/CAM, got \(quoted(text))")
            }
            return text
        }
    }

    /// A network output's URL, of a kind in the output-kind table (`OutputKind`): rtmp://, rtmps://, srt://.
    public static var outputURL: Self {
        Self("a string") { (url: String) throws(ValueError) -> String in
            guard let kind = OutputKind.of(url), kind.isNetwork else {
                throw ValueError("expected an \(OutputKind.networkSchemes) URL, got \"\(SecretMasking.maskURL(url))\"")
            }
            if let problem = kind.problem(with: url) { throw ValueError(problem) }
            return url
        }
    }
}

func isValidName(_ name: String) -> Bool {
    !name.isEmpty && name.count <= 32 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
}

extension ValueSyntax where Value == Int {
    /// A bit rate (`4500k`, `4.5M`, `4500000`) within `range`.
    public static func bitRate(_ range: ClosedRange<Int>) -> Self {
        Self("a bit rate") { (text: String) throws(ValueError) -> Int in
            guard let rate = BitRate.parse(text) else {
                throw ValueError("expected a bit rate like 4500k, 4.5M or 4500000, got \(quoted(text))")
            }
            guard range.contains(rate) else {
                throw ValueError("\(BitRate.describe(rate)) bit/s is outside the range \(BitRate.describe(range.lowerBound)) to \(BitRate.describe(range.upperBound))")
            }
            return rate
        }
    }

    /// The program's video bit rate: 100k to 100M.
    public static var videoBitRate: Self { bitRate(BitRate.videoRange) }
    /// The program's AAC bit rate: 16k to 512k.
    public static var audioBitRate: Self { bitRate(BitRate.audioRange) }

    /// A count of test-pattern cameras: 0 to 16.
    public static var cameraCount: Self {
        Self("a number") { (text: String) throws(ValueError) -> Int in
            guard let count = Int(text), (0...16).contains(count) else {
                throw ValueError("expected a number of cameras from 0 to 16, got \(quoted(text))")
            }
            return count
        }
    }

    /// A test picture's noise amplitude: 0 (none) to 255 (about 6-12 is a webcam in a lit room).
    public static var noiseAmplitude: Self {
        Self("a noise amplitude") { (text: String) throws(ValueError) -> Int in
            guard let amplitude = Int(text), (0...255).contains(amplitude) else {
                throw ValueError("expected a noise amplitude from 0 to 255, got \(quoted(text))")
            }
            return amplitude
        }
    }

    /// A stinger's `cut_at_ms`: milliseconds from 0 to the longest transition (`TransitionSpec.maxSeconds`);
    /// whether it falls within the clip is known once the clip is decoded.
    public static var cutPoint: Self {
        let limit = Int(TransitionSpec.maxSeconds * 1000)
        return Self("a number of milliseconds") { (text: String) throws(ValueError) -> Int in
            guard let value = Int(text), (0..<limit).contains(value) else {
                throw ValueError("expected a number of milliseconds from 0 to \(limit - 1), got \(quoted(text))")
            }
            return value
        }
    }

    /// A positive whole number (`what` names it in the message: `a frame count`).
    public static func positive(_ what: String) -> Self {
        Self(what) { (text: String) throws(ValueError) -> Int in
            guard let value = Int(text), value > 0 else { throw ValueError("expected \(what), got \(quoted(text))") }
            return value
        }
    }
}

extension ValueSyntax where Value == Double {
    /// Seconds between keyframes: 0.1 to 20.
    public static var keyframeInterval: Self { seconds(in: 0.1...20) }

    /// A number of seconds within `range` ("expected a number of seconds from 0.1 to 20").
    static func seconds(in range: ClosedRange<Double>) -> Self {
        Self("a number of seconds") { (text: String) throws(ValueError) -> Double in
            guard let seconds = Double(text), seconds.isFinite, range.contains(seconds) else {
                func written(_ bound: Double) -> String { bound == bound.rounded() ? String(Int(bound)) : String(bound) }
                throw ValueError("expected a number of seconds from \(written(range.lowerBound)) to \(written(range.upperBound)), got \(quoted(text))")
            }
            return seconds
        }
    }
}

extension ValueSyntax where Value == Bool {
    /// true/false, yes/no, on/off.
    public static var boolean: Self {
        Self("true or false") { (text: String) throws(ValueError) -> Bool in
            switch text.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: throw ValueError("expected true or false, got \(quoted(text))")
            }
        }
    }
}

extension ValueSyntax where Value == ProgramFormat {
    /// The program format `WxH@FPS` (`1280x720@30`, `1920x1080@30000/1001`): even sizes up to
    /// 7680x4320, 1 to 240 frames per second.
    public static var programFormat: Self {
        Self("a string") { (text: String) throws(ValueError) -> ProgramFormat in
            guard let format = ProgramFormat(parsing: text) else {
                throw ValueError("expected WIDTHxHEIGHT@FPS (WxH@FPS, even sizes from 16x16 to 7680x4320, 1 to 240 fps) like 1280x720@30 or 1920x1080@30000/1001, got \(quoted(text))")
            }
            return format
        }
    }
}

/// A picture size.
public struct FrameSize: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)" }
}

extension ValueSyntax where Value == FrameSize {
    /// The program's or a test camera's size: even, 16x16 up to 7680x4320.
    public static var evenSize: Self {
        Self("a string") { (text: String) throws(ValueError) -> FrameSize in
            guard let format = ProgramFormat(parsing: text + "@30") else {
                throw ValueError("expected WIDTHxHEIGHT like 1280x720 (even numbers, at most 7680x4320), got \(quoted(text))")
            }
            return FrameSize(width: format.width, height: format.height)
        }
    }

    /// A device camera's size (any numbers from 16x16 to 7680x4320; the device picks its nearest).
    public static var deviceSize: Self {
        Self("WIDTHxHEIGHT") { (text: String) throws(ValueError) -> FrameSize in
            let parts = text.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (16...7680).contains(w), (16...4320).contains(h) else {
                throw ValueError("expected WIDTHxHEIGHT (for example 1280x720), got \(quoted(text))")
            }
            return FrameSize(width: w, height: h)
        }
    }
}

extension ValueSyntax where Value == Rational {
    /// The program's frame rate: 1 to 240.
    public static var programRate: Self {
        Self("a string") { (text: String) throws(ValueError) -> Rational in
            guard let rate = Rational(parsingRate: text), (1.0...240.0).contains(rate.doubleValue) else {
                throw ValueError("expected a frame rate from 1 to 240 like 30, 29.97 or 30000/1001, got \(quoted(text))")
            }
            return rate
        }
    }

    /// A device camera's frame rate.
    public static var deviceRate: Self {
        Self("a frame rate") { (text: String) throws(ValueError) -> Rational in
            guard let rate = Rational(parsingRate: text) else {
                throw ValueError("expected a frame rate (30, 29.97, 30000/1001), got \(quoted(text))")
            }
            return rate
        }
    }
}

extension ValueSyntax where Value == EncoderChoice {
    /// auto, vaapi or x264.
    public static var encoder: Self {
        Self("a string") { (text: String) throws(ValueError) -> EncoderChoice in
            guard let choice = EncoderChoice(rawValue: text) else {
                throw ValueError("expected one of \(EncoderChoice.allCases.map(\.rawValue).joined(separator: ", ")), got \(quoted(text))")
            }
            return choice
        }
    }
}

extension ValueSyntax where Value == AudioSource {
    /// tone, silence, microphones (every Audio/Source, the default one up), pipewire (the default
    /// microphone), pipewire:all (every Audio/Source, mixed) or pipewire:NODE.
    public static var audioSource: Self {
        Self("a string") { (text: String) throws(ValueError) -> AudioSource in
            switch text {
            case "tone": return .tone
            case "silence": return .silence
            case "pipewire": return .pipewire(node: "")
            case "pipewire:all": return .pipewireAll
            case "microphones": return .microphones
            default:
                let node = text.hasPrefix("pipewire:") ? String(text.dropFirst("pipewire:".count)) : ""
                guard !node.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw ValueError("expected tone, silence, pipewire (the default microphone) or pipewire:<node name> (pipewire:all: every microphone, mixed; microphones: every microphone, the default one up), got \(quoted(text))")
                }
                return .pipewire(node: node)
            }
        }
    }
}

extension ValueSyntax where Value == Set<BackendName> {
    /// `v4l2,pipewire` or `none`: names from `BackendName.selectable` only.
    public static var cameraBackends: Self {
        Self("a list of camera backends") { (text: String) throws(ValueError) -> Set<BackendName> in
            guard let list = BackendName.parseList(text) else {
                let known = BackendName.selectable.map(\.rawValue).joined(separator: ", ")
                throw ValueError("expected a list of camera backends (\(known)) or none, got \(quoted(text))")
            }
            return list
        }
    }
}

extension ValueSyntax where Value == BackendName {
    /// One camera backend, as an item of the `cameras.backends` list: a name from `BackendName.selectable`.
    public static var cameraBackend: Self {
        let known = BackendName.selectable.map(\.rawValue).joined(separator: ", ")
        return Self("a camera backend (\(known))") { (text: String) throws(ValueError) -> BackendName in
            guard let backend = BackendName.selectable.first(where: { $0.rawValue == text.lowercased() }) else {
                throw ValueError("expected a camera backend (\(known)), got \(quoted(text))")
            }
            return backend
        }
    }
}
