import CFFmpeg
import MediaSupport
import StudioCore

/// libavcodec's MJPEG encoder, for what needs JPEGs made on the spot (`pw-virtual-camera --format
/// mjpeg`, the MJPEG decoder's tests): one I420 picture (limited range, as cameras and the program use)
/// in, one baseline JPEG (4:2:0, full range as JPEG is) out. Owns a `CodecSession`; not thread-safe.
public final class JPEGEncoder {
    public let width: Int
    public let height: Int
    private let session: CodecSession
    private var pts: Int64 = 0
    /// Limited (16-235 / 16-240) to full range (0-255), as JPEG decoders read the samples.
    private let lumaTable: [UInt8] = (0..<256).map { UInt8(clamping: (($0 - 16) * 255 + 109) / 219) }
    private let chromaTable: [UInt8] = (0..<256).map { UInt8(clamping: (($0 - 128) * 255 + (($0 >= 128) ? 112 : -112)) / 224 + 128) }

    /// Nil (with the failing call in `problem`) when libavcodec has no MJPEG encoder or refuses the size.
    /// `quality` is libavcodec's qscale, 1 (best) to 31: webcams send about 2-5 (JPEG quality 80-90).
    public init?(width: Int, height: Int, rate: Rational, quality: Int = 3, problem: inout String) {
        do {
            let session = try CodecSession(AV_CODEC_ID_MJPEG, decoder: false)
            let context = session.context, frame = session.frame
            context.pointee.width = Int32(width)
            context.pointee.height = Int32(height)
            context.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
            context.pointee.time_base = AVRational(num: rate.denominator, den: rate.numerator)
            context.pointee.flags |= AV_CODEC_FLAG_QSCALE
            context.pointee.global_quality = Int32(max(1, min(31, quality))) * FF_QP2LAMBDA
            frame.pointee.width = Int32(width)
            frame.pointee.height = Int32(height)
            frame.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
            frame.pointee.quality = context.pointee.global_quality
            try session.open("mjpeg")
            try check("av_frame_get_buffer", av_frame_get_buffer(frame, 32))
            self.session = session
        } catch {
            problem = error.description
            return nil
        }
        self.width = width
        self.height = height
    }

    /// The JPEG of `picture` (an I420 frame of this size), or of an all-white picture; nil if the encoder fails.
    public func encode(_ picture: VideoFrame, white: Bool = false) -> [UInt8]? {
        let frame = session.frame
        guard av_frame_make_writable(frame) >= 0 else { return nil }
        let strides = withUnsafeBytes(of: frame.pointee.linesize) { Array($0.bindMemory(to: Int32.self).prefix(3)) }
        for index in 0..<3 {
            guard let destination = cff_frame_plane(frame, Int32(index)) else { return nil }
            let table = index == 0 ? lumaTable : chromaTable
            let columns = index == 0 ? width : width / 2, rows = index == 0 ? height : height / 2
            let source = picture.plane(index).assumingMemoryBound(to: UInt8.self), sourceStride = picture.planes[index].stride
            for row in 0..<rows {
                let out = destination + row * Int(strides[index]), line = source + row * sourceStride
                if white {
                    for column in 0..<columns { out[column] = index == 0 ? 255 : 128 }
                } else {
                    for column in 0..<columns { out[column] = table[Int(line[column])] }
                }
            }
        }
        frame.pointee.pts = pts
        pts += 1
        guard (try? session.send(frame)) != nil,
              let packets = try? session.receivePackets(making: { copiedBytes($0.pointee.data, count: $0.pointee.size) }) else { return nil }
        return packets.first
    }
}
