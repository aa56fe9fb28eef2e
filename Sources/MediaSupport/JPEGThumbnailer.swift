import CFFmpeg
import StudioCore

/// Makes small JPEGs of pipeline frames (the operator console's live tiles): one libswscale pass scales
/// any pipeline format down to `width` pixels wide (the height keeps the source's aspect, rounded to even)
/// and converts it to full-range 4:2:0 (`yuvj420p`, as JPEG is), then libavcodec's MJPEG encoder writes a
/// baseline JPEG. Owns a `FrameConverter` and a `CodecSession`, opened again only when the output size
/// changes (a source of another aspect). Not thread-safe: one thread uses it.
public final class JPEGThumbnailer {
    /// The width of every JPEG (even); a source narrower than that is not enlarged.
    public let width: Int
    /// The encoder's quantiser scale, 2 (best) to 31 (smallest): ffmpeg's `-q:v`.
    public let quality: Int
    private let converter = FrameConverter()
    private var session: CodecSession?
    private var size: (width: Int, height: Int) = (0, 0)
    private var pts: Int64 = 0

    public init(width: Int = 320, quality: Int = 5) {
        self.width = max(2, width & ~1)
        self.quality = min(31, max(2, quality))
    }

    /// The size of the JPEG made of a `sourceWidth` x `sourceHeight` picture: `width` wide (or the
    /// source's width if smaller), the same aspect, both even.
    public func outputSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        let outputWidth = max(2, min(width, sourceWidth) & ~1)
        let outputHeight = max(2, Int((Double(sourceHeight) * Double(outputWidth) / Double(max(1, sourceWidth))).rounded()) & ~1)
        return (outputWidth, outputHeight)
    }

    /// The JPEG of `frame`, with its size.
    public func encode(_ frame: VideoFrame) throws(FFmpegError) -> (jpeg: [UInt8], width: Int, height: Int) {
        let wanted = outputSize(sourceWidth: frame.width, sourceHeight: frame.height)
        let session = try self.session(for: wanted)
        let picture = session.frame
        try check("av_frame_make_writable", av_frame_make_writable(picture))
        try converter.convert(frame, into: picture)
        picture.pointee.pts = pts
        pts += 1
        try session.send(picture)
        let packets = try session.receivePackets { copiedBytes($0.pointee.data, count: $0.pointee.size) }
        guard let jpeg = packets.first else {
            throw FFmpegError(call: "avcodec_receive_packet", message: "the MJPEG encoder returned no picture")
        }
        return (jpeg, wanted.width, wanted.height)
    }

    /// The encoder for pictures of `wanted` size, made (and its picture buffer allocated) when the size changes.
    private func session(for wanted: (width: Int, height: Int)) throws(FFmpegError) -> CodecSession {
        if let session, size == wanted { return session }
        session = nil
        let made = try CodecSession(AV_CODEC_ID_MJPEG, decoder: false)
        let context = made.context, picture = made.frame
        context.pointee.width = Int32(wanted.width)
        context.pointee.height = Int32(wanted.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        context.pointee.color_range = AVCOL_RANGE_JPEG
        context.pointee.time_base = AVRational(num: 1, den: 10)
        context.pointee.thread_count = 1
        context.pointee.flags |= AV_CODEC_FLAG_QSCALE
        context.pointee.global_quality = Int32(quality) * FF_QP2LAMBDA
        picture.pointee.width = Int32(wanted.width)
        picture.pointee.height = Int32(wanted.height)
        picture.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
        picture.pointee.quality = context.pointee.global_quality
        try made.open("mjpeg \(wanted.width)x\(wanted.height)")
        try check("av_frame_get_buffer", av_frame_get_buffer(picture, 32))
        session = made
        size = wanted
        return made
    }
}
