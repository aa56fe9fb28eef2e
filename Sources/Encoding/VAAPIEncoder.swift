import CFFmpeg
import MediaSupport
import StudioCore

/// H.264 on the GPU through libavcodec's `h264_vaapi`: a VAAPI device on one render node, a pool of NV12
/// surfaces, CBR, no B-frames, the same fixed GOP as x264, IDR on request (libavcodec's VAAPI encoder
/// turns any frame marked `AV_PICTURE_TYPE_I` into an IDR; it has no `forced-idr` option) and a global
/// header, so the extradata exists as soon as the encoder is open. Like `X264Encoder`, the Annex B output
/// becomes the MP4 form (avcC extradata, 4-byte length-prefixed packets).
///
/// Each program frame (I420) is copied into an NV12 staging frame (U and V interleaved: cheap) and
/// uploaded into a surface from the pool (av_hwframe_transfer_data) before encoding.
public final class VAAPIEncoder: VideoEncoder {
    public let name = "h264_vaapi"
    public let settings: VideoEncoderSettings
    public let streamDescription: StreamDescription
    public let renderNode: String
    public let lowPower: Bool

    /// The codec context, the surface frame sent to it and the packet (freed when the session goes).
    private let session: CodecSession
    // Owned here, freed in deinit (through `Resources`).
    private let resources: Resources
    private var admission = FrameAdmission()
    private var flushed = false

    /// The libav* objects the encoder holds beside its `CodecSession`; frees whatever exists, so a
    /// failed init releases as much as it had built. The order against the session does not matter:
    /// the codec context keeps its own references to the frames context (and through it the device).
    private final class Resources {
        var device: UnsafeMutablePointer<AVBufferRef>?
        var frames: UnsafeMutablePointer<AVBufferRef>?
        var staging: UnsafeMutablePointer<AVFrame>?

        deinit {
            av_frame_free(&staging)
            av_buffer_unref(&frames)
            av_buffer_unref(&device)
        }
    }

    /// - Parameters:
    ///   - renderNode: the DRM render node (`/dev/dri/renderD128`).
    ///   - lowPower: use the low-power entrypoint (VAEntrypointEncSliceLP); required on drivers that have only that.
    ///   - profile: the H.264 profile; nil lets libavcodec choose (High).
    public init(settings: VideoEncoderSettings, renderNode: String, lowPower: Bool = false,
                profile: H264EncodeProfile? = nil) throws {
        try settings.validate(for: "VAAPIEncoder")
        let resources = Resources()
        try check("av_hwdevice_ctx_create(vaapi, \(renderNode))",
                  av_hwdevice_ctx_create(&resources.device, AV_HWDEVICE_TYPE_VAAPI, renderNode, nil, 0))

        guard let frames = av_hwframe_ctx_alloc(resources.device) else {
            throw FFmpegError.outOfMemory("av_hwframe_ctx_alloc")
        }
        resources.frames = frames
        let framesContext = UnsafeMutableRawPointer(frames.pointee.data!).assumingMemoryBound(to: AVHWFramesContext.self)
        framesContext.pointee.format = AV_PIX_FMT_VAAPI
        framesContext.pointee.sw_format = AV_PIX_FMT_NV12
        framesContext.pointee.width = Int32(settings.width)
        framesContext.pointee.height = Int32(settings.height)
        framesContext.pointee.initial_pool_size = 16
        try check("av_hwframe_ctx_init(nv12 \(settings.width)x\(settings.height))", av_hwframe_ctx_init(frames))

        let session = try CodecSession(encoderNamed: "h264_vaapi")
        let context = session.context
        let rate = settings.frameRate
        let keyint = settings.keyframeIntervalFrames
        context.pointee.width = Int32(settings.width)
        context.pointee.height = Int32(settings.height)
        context.pointee.pix_fmt = AV_PIX_FMT_VAAPI
        context.pointee.sw_pix_fmt = AV_PIX_FMT_NV12
        context.pointee.hw_frames_ctx = av_buffer_ref(frames)
        guard context.pointee.hw_frames_ctx != nil else { throw FFmpegError.outOfMemory("av_buffer_ref") }
        // One tick per frame, as with x264: packet pts map back to MediaTime exactly.
        context.pointee.time_base = AVRational(num: rate.denominator, den: rate.numerator)
        context.pointee.framerate = AVRational(num: rate.numerator, den: rate.denominator)
        context.pointee.gop_size = Int32(keyint)
        context.pointee.max_b_frames = 0
        context.pointee.bit_rate = Int64(settings.bitRate)
        context.pointee.rc_max_rate = Int64(settings.bitRate)
        context.pointee.rc_buffer_size = Int32(clamping: settings.bitRate)
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        var options: [(String, String)] = [
            ("rc_mode", "CBR"), ("low_power", lowPower ? "1" : "0"),
            // Every GOP starts with an IDR (0 = no non-IDR I-frames between IDRs).
            ("idr_interval", "0"),
            // One frame in flight: packets come out with their frame, like zerolatency x264.
            ("async_depth", "1"),
        ]
        if let profile { options.append(("profile", profile.rawValue)) }
        try session.setOptions(options)
        try session.open("h264_vaapi, \(renderNode)\(lowPower ? ", low power" : "")")

        guard let staging = av_frame_alloc() else {
            throw FFmpegError.outOfMemory("av_frame_alloc")
        }
        resources.staging = staging
        staging.pointee.format = AV_PIX_FMT_NV12.rawValue
        staging.pointee.width = Int32(settings.width)
        staging.pointee.height = Int32(settings.height)
        try check("av_frame_get_buffer(nv12)", av_frame_get_buffer(staging, 0))

        let headers = session.extradata
        guard let avcC = AVCFormat.avcC(fromAnnexB: headers) else {
            throw FFmpegError(call: "VAAPIEncoder", message: "h264_vaapi produced no SPS/PPS global header (\(headers.count) bytes)")
        }
        self.settings = settings
        self.renderNode = renderNode
        self.lowPower = lowPower
        self.session = session
        self.resources = resources
        streamDescription = StreamDescription(
            kind: .video, codec: .h264, width: settings.width, height: settings.height, frameRate: rate,
            bitRate: settings.bitRate, extradata: avcC, encoderName: "h264_vaapi")
    }

    public func encode(_ input: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket] {
        guard let ticks = try admission.admit(input, pts: pts, settings: settings, flushed: flushed, caller: "VAAPIEncoder.encode") else {
            return []
        }
        guard let staging = resources.staging else {
            throw FFmpegError(call: "VAAPIEncoder.encode", message: "encoder not open")
        }
        let surface = session.frame

        // The staging frame is ours alone after each upload, so this only copies on the first frame.
        try check("av_frame_make_writable(nv12)", av_frame_make_writable(staging))
        Self.copyI420(input, toNV12: staging)
        av_frame_unref(surface)
        defer { av_frame_unref(surface) }
        try check("av_hwframe_get_buffer", av_hwframe_get_buffer(resources.frames, surface, 0))
        try check("av_hwframe_transfer_data(upload)", av_hwframe_transfer_data(surface, staging, 0))
        surface.pointee.pts = ticks
        surface.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        try session.send(surface)
        return try session.receiveMP4Packets(rate: settings.frameRate, generation: streamDescription.generation)
    }

    public func flush() throws -> [EncodedPacket] {
        guard !flushed else { return [] }
        flushed = true
        try session.send(nil)
        return try session.receiveMP4Packets(rate: settings.frameRate, generation: streamDescription.generation)
    }

    /// Copies the Y plane row by row and interleaves U and V into NV12's UV plane.
    static func copyI420(_ input: VideoFrame, toNV12 frame: UnsafeMutablePointer<AVFrame>) {
        let width = input.width
        let height = input.height
        let lumaSource = input.plane(0).assumingMemoryBound(to: UInt8.self)
        let lumaStride = input.planes[0].stride
        guard let luma = cff_frame_plane(frame, 0), let chroma = cff_frame_plane(frame, 1) else { return }
        let (lumaLine, chromaLine) = (Int(frame.pointee.linesize.0), Int(frame.pointee.linesize.1))
        for row in 0..<height {
            (luma + row * lumaLine).update(from: lumaSource + row * lumaStride, count: width)
        }
        let u = input.plane(1).assumingMemoryBound(to: UInt8.self)
        let v = input.plane(2).assumingMemoryBound(to: UInt8.self)
        let (uStride, vStride) = (input.planes[1].stride, input.planes[2].stride)
        for row in 0..<(height / 2) {
            let destination = chroma + row * chromaLine
            let uRow = u + row * uStride
            let vRow = v + row * vStride
            for column in 0..<(width / 2) {
                destination[2 * column] = uRow[column]
                destination[2 * column + 1] = vRow[column]
            }
        }
    }
}
