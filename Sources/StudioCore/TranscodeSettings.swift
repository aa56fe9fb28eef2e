/// What a passthrough ISO is transcoded to, declared once: `studio transcode --codec` takes these names
/// and its help lists them with their summaries.
public enum TranscodeCodec: String, CaseIterable, Sendable {
    /// H.264 (x264), a keyframe every second: small files that every editor opens and scrubs well.
    case h264
    /// H.264 (x264), every frame a keyframe: the smoothest scrubbing, files several times larger.
    case h264Intra = "h264-intra"

    public var summary: String {
        switch self {
        case .h264: "H.264 (x264), a keyframe every second, no B-frames"
        case .h264Intra: "H.264 (x264), every frame a keyframe (all-intra): larger, scrubs best"
        }
    }

    /// Seconds between keyframes (0: every frame).
    public var keyframeIntervalSeconds: Double { self == .h264 ? 1 : 0 }

    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// The container written, declared once (`studio transcode --container`).
public enum TranscodeContainer: String, CaseIterable, Sendable {
    /// QuickTime: what Final Cut Pro and Premiere Pro open first.
    case mov
    case mp4

    /// libavformat's name of the muxer.
    public var muxerName: String { rawValue }
    public var fileExtension: String { rawValue }
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// How `Transcoder` encodes: codec, x264's constant quality (CRF) and preset, the container.
public struct TranscodeSettings: Sendable, Hashable {
    public var codec: TranscodeCodec
    /// x264 CRF, 0-51, lower is better: 18 is visually lossless for camera pictures, right for editing.
    public var quality: Int
    /// x264 preset: `fast` is about twice real time for 720p30 on one core of a small PC.
    public var preset: String
    public var container: TranscodeContainer

    public static let defaultQuality = 18
    public static let defaultPreset = "fast"

    public init(codec: TranscodeCodec = .h264, quality: Int = Self.defaultQuality, preset: String = Self.defaultPreset,
                container: TranscodeContainer = .mov) {
        self.codec = codec
        self.quality = quality
        self.preset = preset
        self.container = container
    }
}
