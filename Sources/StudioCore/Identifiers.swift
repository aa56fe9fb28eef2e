/// The operator-facing name of a camera: `cam1`, `cam2`... Stable across restarts (kept in SQLite).
public struct CameraID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let name: String
    public init(_ name: String) { self.name = name }
    public init(stringLiteral value: String) { self.name = value }
    public var description: String { name }

    /// Orders `cam2` before `cam10`.
    public static func < (lhs: CameraID, rhs: CameraID) -> Bool {
        let l = lhs.numericSuffix, r = rhs.numericSuffix
        if let l, let r, lhs.prefix == rhs.prefix { return l < r }
        return lhs.name < rhs.name
    }

    private var prefix: Substring { name.prefix { !$0.isNumber } }
    private var numericSuffix: Int? { Int(name.drop { !$0.isNumber }) }

    public init(from decoder: Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// A source backend's name (`v4l2`, `pipewire`, `test-pattern`...): which kind of device a camera is,
/// in `studio cameras`, events and the history. Open: a backend declares its own (see `SourceBackend` in
/// Capture and the table `SourceBackends.standard` in StudioServer); names the history holds from a
/// backend this binary lacks still read.
public struct BackendName: RawRepresentable, Hashable, Sendable, Codable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// USB webcams and capture cards through /dev/video* (Sources/Capture/V4L2).
    public static let v4l2: BackendName = "v4l2"
    /// Video/Source nodes of the desktop's PipeWire daemon (Sources/Capture/PipeWire).
    public static let pipewire: BackendName = "pipewire"
    /// Synthetic cameras of the demo and the tests (Sources/Capture/TestPattern).
    public static let testPattern: BackendName = "test-pattern"
    /// Cameras pulled from URLs: RTSP, RTMP, SRT, HLS, UDP (Sources/Capture/Network).
    public static let network: BackendName = "network"
    /// Media players: clips and stills played on the program clock (Sources/Capture/Player).
    public static let player: BackendName = "player"

    /// The backends `cameras.backends` and `--backends` can name, in the order their messages list
    /// them; all of them on by default. Declared here, below the config (which cannot see the backends
    /// table), so the config validates against it; a test keeps it equal to the selectable backends of
    /// `SourceBackends.standard`.
    public static let selectable: [BackendName] = [.v4l2, .pipewire]
}

/// A camera's life as the server sees it.
public enum CameraState: String, Sendable, Codable, CaseIterable {
    case starting
    case live
    case lost
    case stopped
}
