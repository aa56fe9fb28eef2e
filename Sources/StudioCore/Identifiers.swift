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

/// Which kind of device a camera is.
public enum CameraBackend: String, Sendable, Codable, CaseIterable {
    case testPattern = "test-pattern"
    case v4l2
    case pipewire
}

/// A camera's life as the server sees it.
public enum CameraState: String, Sendable, Codable, CaseIterable {
    case starting
    case live
    case lost
    case stopped
}
