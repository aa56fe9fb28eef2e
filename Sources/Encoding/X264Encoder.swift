import CFFmpeg
import MediaSupport
import StudioCore

/// H.264 through libavcodec's libx264 wrapper: yuv420p, zerolatency (one packet per frame, no
/// lookahead), no B-frames, fixed GOP (no scene-cut keyframes), CBR-like rate control with quantisers
/// no higher than H.264's 51, and a global header, so the extradata exists as soon as the encoder is
/// open. With `constantQuality` (a file made after the show, `studio transcode`) it is CRF instead,
/// without zerolatency: packets come out a few frames late and `flush` returns the rest. x264's Annex B
/// output is turned into the MP4 form here (avcC extradata, 4-byte length-prefixed packets), which FLV
/// and Matroska carry as is.
///
/// Frames are not copied on the way in: the AVFrame's buffer is the `VideoFrame`'s storage, retained
/// until libavcodec releases it (x264 copies the picture into its own frame during encode).
public final class X264Encoder: VideoEncoder {
    public let name = "libx264"
    public let settings: VideoEncoderSettings
    public let streamDescription: StreamDescription

    /// The codec context, frame and packet (freed when the session goes).
    private let session: CodecSession
    private var admission = FrameAdmission()
    private var flushed = false

    public init(settings: VideoEncoderSettings) throws {
        try settings.validate(for: "X264Encoder")
        let session = try CodecSession(encoderNamed: "libx264")
        let context = session.context
        let rate = settings.frameRate
        let keyint = settings.keyframeIntervalFrames
        context.pointee.width = Int32(settings.width)
        context.pointee.height = Int32(settings.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        // One tick per frame: pts counts frames, so packets map back to MediaTime exactly.
        context.pointee.time_base = AVRational(num: rate.denominator, den: rate.numerator)
        context.pointee.framerate = AVRational(num: rate.numerator, den: rate.denominator)
        context.pointee.gop_size = Int32(keyint)
        context.pointee.keyint_min = Int32(keyint)
        context.pointee.max_b_frames = 0
        // Quantisers up to H.264's highest, 51, not x264's default 69: above 51 are its "emergency"
        // ones for an empty rate buffer, and at the top it codes a whole slice with no residual, so a
        // keyframe after a mix (every pixel new on every frame) showed its top slice as flat grey.
        context.pointee.qmax = 51
        context.pointee.thread_count = 0
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        var options = [("preset", settings.preset), ("forced-idr", "1"), ("sc_threshold", "0")]
        if let quality = settings.constantQuality {
            // A file for an editor, made after the show: quality, not rate (no VBV, no zerolatency).
            guard (0...51).contains(quality) else {
                throw FFmpegError(call: "X264Encoder", message: "constant quality (CRF) \(quality) must be 0 to 51")
            }
            options.append(("crf", String(quality)))
        } else {
            context.pointee.bit_rate = Int64(settings.bitRate)
            context.pointee.rc_max_rate = Int64(settings.bitRate)
            context.pointee.rc_buffer_size = Int32(clamping: settings.bitRate)
            options.append(("tune", "zerolatency"))
        }
        try session.setOptions(options)
        try session.open("libx264, preset \(settings.preset)")
        self.settings = settings
        self.session = session
        let headers = session.extradata
        guard let avcC = AVCFormat.avcC(fromAnnexB: headers) else {
            throw FFmpegError(call: "X264Encoder", message: "libx264 produced no SPS/PPS global header (\(headers.count) bytes)")
        }
        streamDescription = StreamDescription(
            kind: .video, codec: .h264, width: settings.width, height: settings.height, frameRate: rate,
            bitRate: settings.bitRate, extradata: avcC, encoderName: "libx264")
    }

    public func encode(_ input: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket] {
        guard let ticks = try admission.admit(input, pts: pts, settings: settings, flushed: flushed, caller: "X264Encoder.encode") else {
            return []
        }

        let frame = session.frame
        av_frame_unref(frame)
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        frame.pointee.width = Int32(input.width)
        frame.pointee.height = Int32(input.height)
        for plane in 0..<3 {
            cff_frame_set_plane(frame, Int32(plane), input.plane(plane).assumingMemoryBound(to: UInt8.self),
                                Int32(input.planes[plane].stride))
        }
        let storage = Unmanaged.passRetained(input.storage)
        guard let buffer = av_buffer_create(input.storage.bytes.assumingMemoryBound(to: UInt8.self), input.storage.capacity,
                                            releaseFrameStorage, storage.toOpaque(), Int32(AV_BUFFER_FLAG_READONLY)) else {
            storage.release()
            throw FFmpegError.outOfMemory("av_buffer_create")
        }
        cff_frame_set_buffer(frame, 0, buffer)
        frame.pointee.pts = ticks
        frame.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        defer { av_frame_unref(frame) }
        try session.send(frame)
        return try receivePackets()
    }

    public func flush() throws -> [EncodedPacket] {
        guard !flushed else { return [] }
        flushed = true
        try session.send(nil)
        return try receivePackets()
    }

    private func receivePackets() throws -> [EncodedPacket] {
        try session.receiveMP4Packets(rate: settings.frameRate, generation: streamDescription.generation)
    }

}

/// Called by libavcodec (on the encoding thread) when the last reference to a frame buffer goes:
/// gives back the retain taken on the `FrameStorage`.
private let releaseFrameStorage: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?) -> Void = { opaque, _ in
    guard let opaque else { return }
    Unmanaged<FrameStorage>.fromOpaque(opaque).release()
}
