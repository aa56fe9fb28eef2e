import StudioCore

/// Which H.264 encoder `makeEncoder(for:)` builds. Only x264 today; a hardware encoder (VAAPI) slots in
/// here as another case, with a fallback to x264 handled by `VideoEncodingStage`.
public enum VideoEncoderChoice: String, Sendable, Codable, CaseIterable {
    case x264 = "libx264"
}

/// What the program feed is encoded to.
public struct VideoEncoderSettings: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var frameRate: Rational
    /// Target bits per second; the encoder runs CBR-like (max rate = bit rate, ~1 s buffer).
    public var bitRate: Int
    /// x264 preset (`ultrafast` ... `veryslow`).
    public var preset: String
    /// Distance between keyframes (IDR), in seconds.
    public var keyframeIntervalSeconds: Double
    public var encoder: VideoEncoderChoice

    public init(width: Int, height: Int, frameRate: Rational, bitRate: Int = 4_500_000, preset: String = "veryfast",
                keyframeIntervalSeconds: Double = 2, encoder: VideoEncoderChoice = .x264) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.bitRate = bitRate
        self.preset = preset
        self.keyframeIntervalSeconds = keyframeIntervalSeconds
        self.encoder = encoder
    }

    public init(format: ProgramFormat, bitRate: Int = 4_500_000, preset: String = "veryfast",
                keyframeIntervalSeconds: Double = 2) {
        self.init(width: format.width, height: format.height, frameRate: format.frameRate, bitRate: bitRate,
                  preset: preset, keyframeIntervalSeconds: keyframeIntervalSeconds)
    }

    /// Frames between keyframes (at least 1).
    public var keyframeIntervalFrames: Int {
        max(1, Int((keyframeIntervalSeconds * frameRate.doubleValue).rounded()))
    }
}

/// An H.264 encoder for program frames (I420). Not thread-safe: one stage thread owns it.
/// `streamDescription` is complete (with avcC extradata) as soon as the encoder exists.
public protocol VideoEncoder: AnyObject {
    /// libavcodec's name for the encoder (`libx264`, later `h264_vaapi`).
    var name: String { get }
    var settings: VideoEncoderSettings { get }
    var streamDescription: StreamDescription { get }
    /// Encodes one frame at program time `pts`. `forceKeyframe` makes this frame an IDR.
    /// Returns the packets that became ready (with zerolatency x264: this frame's).
    func encode(_ frame: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket]
    /// End of stream: returns the packets still inside the encoder.
    func flush() throws -> [EncodedPacket]
}

/// Builds the encoder chosen in `settings` (x264 for now).
public func makeEncoder(for settings: VideoEncoderSettings) throws -> VideoEncoder {
    switch settings.encoder {
    case .x264: return try X264Encoder(settings: settings)
    }
}
