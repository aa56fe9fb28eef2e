/// Kind of an elementary stream in the program.
public enum MediaKind: String, Sendable, Codable {
    case video
    case audio
}

public enum CodecKind: String, Sendable, Codable {
    case h264
    /// H.265: a network camera's own stream, copied into its ISO file as it came.
    case hevc
    case aac
    /// Motion JPEG: a camera's own JPEG images, copied into an ISO file as they came (every one a keyframe).
    case mjpeg
}

/// What a muxer needs to set up one stream. An encoder announces one before its first packet, and
/// again when its parameters change (for example after a fallback to another encoder): the output
/// then sends a new sequence header.
public struct StreamDescription: Hashable, Sendable {
    public var kind: MediaKind
    public var codec: CodecKind
    public var width: Int
    public var height: Int
    public var frameRate: Rational
    public var sampleRate: Int
    public var channels: Int
    public var bitRate: Int
    /// avcC (H.264) or AudioSpecificConfig (AAC), as libavcodec produced it with a global header; empty
    /// for MJPEG. A network camera's copied H.264/HEVC carries its stream's own: avcC/hvcC from FLV, the
    /// parameter sets in Annex B from MPEG-TS (the Matroska muxer then converts the packets to lengths).
    public var extradata: [UInt8]
    /// Name of the encoder that produced the stream (`libx264`, `h264_vaapi`, `aac`).
    public var encoderName: String
    /// Increases each time the stream's parameters change.
    public var generation: Int
    /// An audio stream's track in a recording: 0 the program's sound, 1 the recorded source's own
    /// (a network camera's AAC in its ISO, a second track titled `title`, not the default).
    public var track = 0
    public var title: String?

    public init(kind: MediaKind, codec: CodecKind, width: Int = 0, height: Int = 0, frameRate: Rational = Rational(30),
                sampleRate: Int = 0, channels: Int = 0, bitRate: Int, extradata: [UInt8], encoderName: String,
                generation: Int = 0) {
        self.kind = kind
        self.codec = codec
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitRate = bitRate
        self.extradata = extradata
        self.encoderName = encoderName
        self.generation = generation
    }
}

/// One encoded access unit, timestamped on the program timeline.
public struct EncodedPacket: Sendable {
    public var kind: MediaKind
    public var data: [UInt8]
    public var pts: MediaTime
    public var dts: MediaTime
    public var duration: MediaTime
    public var isKeyframe: Bool
    /// The `StreamDescription.generation` this packet belongs to.
    public var generation: Int
    /// A program video packet's way from the camera (see `FrameTimes`); nil for others.
    public var times: FrameTimes?
    /// An audio packet's track (`StreamDescription.track`).
    public var track = 0

    public init(kind: MediaKind, data: [UInt8], pts: MediaTime, dts: MediaTime, duration: MediaTime,
                isKeyframe: Bool, generation: Int = 0) {
        self.kind = kind
        self.data = data
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.isKeyframe = isKeyframe
        self.generation = generation
    }
}

/// What flows from the encoders to each output, through bounded queues.
public enum MediaItem: Sendable {
    case format(StreamDescription)
    case packet(EncodedPacket)
    case endOfStream
}
