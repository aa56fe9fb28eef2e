import Foundation
import StudioCore

/// Everything `studio.yaml` can say. Every field has a default, so an absent or empty file gives a
/// working 1280x720@30 setup with test-pattern cameras and no outputs.
public struct StudioConfiguration: Sendable, Equatable {
    /// Program size and frame rate (`program.size` / `program.fps`, or `program.format`).
    public var program: ProgramFormat = .default
    public var video = VideoSettings()
    public var audio = AudioSettings()
    /// Where the program goes, each an RTMP(S) URL with its stream key. None by default.
    public var outputs: [OutputTarget] = []
    /// Directory for local recordings (`record:`); nil records nothing.
    public var recordDirectory: String?
    /// SQLite event store path (`database:`); nil lets the server choose its default.
    public var databasePath: String?
    /// Control socket path (`socket:`); nil lets `ControlSocketPath.resolve` choose.
    public var socketPath: String?
    /// A group whose members may use the control socket too (`socket_group:`); nil: owner only.
    public var socketGroup: String?
    public var cameras = CameraSettings()

    public init() {}
}

/// Which H.264 encoder to use.
public enum EncoderChoice: String, Sendable, CaseIterable {
    /// VA-API when a working device is found, else x264.
    case auto
    case vaapi
    case x264
}

public struct VideoSettings: Sendable, Equatable {
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
}

/// Where program audio comes from.
public enum AudioSource: Sendable, Equatable, CustomStringConvertible {
    /// A 1 kHz test tone.
    case tone
    case silence
    /// A PipeWire node, written `pipewire:<node name>` in the file; `pipewire` alone (node "") is the
    /// default microphone.
    case pipewire(node: String)

    public var description: String {
        switch self {
        case .tone: return "tone"
        case .silence: return "silence"
        case .pipewire(let node): return node.isEmpty ? "pipewire" : "pipewire:\(node)"
        }
    }
}

public struct AudioSettings: Sendable, Equatable {
    public var source: AudioSource = .tone
    /// AAC bit rate in bits per second.
    public var bitRate = 128_000
    public init() {}
}

/// One RTMP destination.
public struct OutputTarget: Sendable, Equatable {
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
}

/// A stable camera name for a device identity (a V4L2 by-id name, a serial, a PipeWire node name).
public struct CameraPin: Sendable, Equatable {
    /// Matched against the device's identity: equal to it, or else contained in it or in the device's name.
    public var match: String
    public var name: CameraID
    /// This camera's ISO recording (`iso:` in the pin); nil follows `CameraSettings.iso`.
    public var iso: Bool?
    /// This camera's ISO encoder (`encoder:` in the pin); nil follows `CameraSettings.isoEncoder`.
    public var encoder: EncoderChoice?
    /// Device cameras (V4L2): the size (`size: 1280x720`) and frame rate (`fps: 30`) to ask for instead
    /// of the mode nearest the program, and controls to set when the camera appears (`controls:`
    /// mapping of control name to value, in order). Nil/empty: the defaults.
    public var size: (width: Int, height: Int)?
    public var fps: Rational?
    public var controls: [(name: String, value: String)] = []

    public init(match: String, name: CameraID, iso: Bool? = nil, encoder: EncoderChoice? = nil,
                size: (width: Int, height: Int)? = nil, fps: Rational? = nil, controls: [(name: String, value: String)] = []) {
        self.match = match
        self.name = name
        self.iso = iso
        self.encoder = encoder
        self.size = size
        self.fps = fps
        self.controls = controls
    }

    public static func == (a: CameraPin, b: CameraPin) -> Bool {
        a.match == b.match && a.name == b.name && a.iso == b.iso && a.encoder == b.encoder
            && a.size?.width == b.size?.width && a.size?.height == b.size?.height && a.fps == b.fps
            && a.controls.map(\.name) == b.controls.map(\.name) && a.controls.map(\.value) == b.controls.map(\.value)
    }
}

/// A family of real cameras the server looks for (`cameras.backends`).
public enum CameraBackendChoice: String, Sendable, CaseIterable, Comparable {
    /// USB webcams and capture cards through /dev/video* (hot-plugged).
    case v4l2
    /// Video/Source nodes of the desktop's PipeWire daemon (including portals and virtual cameras).
    case pipewire

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// `v4l2,pipewire` or `none` (as `--backends` takes it); nil for anything else.
    public static func parseList(_ text: String) -> Set<CameraBackendChoice>? {
        let words = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if words == ["none"] { return [] }
        var result = Set<CameraBackendChoice>()
        for word in words {
            guard let backend = CameraBackendChoice(rawValue: word) else { return nil }
            result.insert(backend)
        }
        return result.isEmpty ? nil : result
    }
}

public struct CameraSettings: Sendable, Equatable {
    /// Which real camera families to look for (`cameras.backends`): both by default. Test-pattern
    /// cameras come on top with `--demo` / `--cameras N`.
    public var backends: Set<CameraBackendChoice> = Set(CameraBackendChoice.allCases)
    /// How many test-pattern cameras the demo mode (`--demo`) starts.
    public var demoCount = 3
    public var pins: [CameraPin] = []
    /// ISO recordings: when recording (`record:`), each camera is also encoded and recorded on its own
    /// (`cameras.iso`, default true; a pin's `iso:` overrides it for that camera).
    public var iso = true
    /// x264 preset of the ISO encoders (`cameras.iso_preset`), default ultrafast: one software encoder
    /// per camera runs beside the program's.
    public var isoPreset = "ultrafast"
    /// The ISO encoders (`cameras.iso_encoder`): auto, vaapi or x264; nil follows `video.encoder`. A
    /// pin's `encoder:` overrides it for that camera.
    public var isoEncoder: EncoderChoice?
    public init() {}

    /// The ISO encoder of the camera with this identity: its pin's, else `isoEncoder`, else the program's.
    public func isoEncoder(forIdentity identity: String, displayName: String = "", program: EncoderChoice) -> EncoderChoice {
        pin(forIdentity: identity, displayName: displayName)?.encoder ?? isoEncoder ?? program
    }

    /// The pin for a device: the last pin whose `match` equals its identity, else the last whose `match`
    /// occurs in its identity or display name (so `C920` pins `/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_...`).
    public func pin(forIdentity identity: String, displayName: String = "") -> CameraPin? {
        pins.last { $0.match == identity }
            ?? pins.last { identity.contains($0.match) || (!displayName.isEmpty && displayName.contains($0.match)) }
    }

    /// Whether the camera with this identity gets an ISO recording: its pin's `iso:` if given, else `iso`.
    public func isoEnabled(forIdentity identity: String, displayName: String = "") -> Bool {
        pin(forIdentity: identity, displayName: displayName)?.iso ?? iso
    }
}

/// Bit rates as people write them: `4500000`, `4500k`, `4.5M` (k = 1000, M = 1,000,000).
public enum BitRate {
    /// Bits per second, or nil for anything else (negative, zero, exponents, unknown suffixes).
    public static func parse(_ text: String) -> Int? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        var multiplier = 1.0
        switch number.last {
        case "k", "K": multiplier = 1_000; number = number.dropLast()
        case "m", "M": multiplier = 1_000_000; number = number.dropLast()
        default: break
        }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard !number.isEmpty, parts.count <= 2,
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let value = Double(number) else { return nil }
        let bits = (value * multiplier).rounded()
        guard bits >= 1, bits <= 10_000_000_000 else { return nil }
        return Int(bits)
    }

    /// `4500000` as `4500k`, `6000000` as `6M`, otherwise the plain number.
    public static func describe(_ bitsPerSecond: Int) -> String {
        if bitsPerSecond % 1_000_000 == 0 { return "\(bitsPerSecond / 1_000_000)M" }
        if bitsPerSecond % 1_000 == 0 { return "\(bitsPerSecond / 1_000)k" }
        return "\(bitsPerSecond)"
    }
}

// MARK: Loading

extension StudioConfiguration {
    /// Config files larger than this are refused (a config is a few hundred bytes).
    public static let maxFileBytes = 1 << 20

    /// Reads and decodes the file at `path`. A missing or unreadable file is an error naming it.
    public static func load(path: String) throws(ConfigError) -> StudioConfiguration {
        try parse(yaml: readFile(path), source: path)
    }

    /// Like `load(path:)`, but a file that does not exist gives the defaults (for a default path that
    /// the operator may not have created). Other problems still throw.
    public static func loadIfPresent(path: String) throws(ConfigError) -> StudioConfiguration {
        guard FileManager.default.fileExists(atPath: path) else { return StudioConfiguration() }
        return try load(path: path)
    }

    /// Decodes YAML text. `source` names it in error messages (usually the file path).
    public static func parse(yaml: String, source: String) throws(ConfigError) -> StudioConfiguration {
        guard let root = try ConfigNode.parse(yaml: yaml, source: source) else { return StudioConfiguration() }
        return try ConfigDecoder(source: source).decode(root)
    }

    private static func readFile(_ path: String) throws(ConfigError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError {
            let reason: String
            switch error.code {
            case .fileReadNoSuchFile, .fileNoSuchFile: reason = "no such file"
            case .fileReadNoPermission: reason = "permission denied"
            default:
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                    reason = "it is a directory"
                } else {
                    reason = error.localizedDescription
                }
            }
            throw ConfigError(source: path, message: "cannot read the config file: \(reason)")
        } catch {
            throw ConfigError(source: path, message: "cannot read the config file: \(error.localizedDescription)")
        }
        guard data.count <= maxFileBytes else {
            throw ConfigError(source: path, message: "the config file is larger than \(maxFileBytes) bytes")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(source: path, message: "the config file is not valid UTF-8 text")
        }
        return text
    }
}
