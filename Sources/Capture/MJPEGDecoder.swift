import CFFmpeg
import MediaSupport
import StudioCore

/// Decodes camera MJPEG frames with libavcodec's MJPEG decoder into I420 `VideoFrame`s (converted by
/// libswscale from whatever the JPEG holds, usually 4:2:2). Owns a `CodecSession` and a
/// `FrameConverter`; used by one capture thread only.
///
/// A damaged frame (not a JPEG, truncated, or one the decoder flags as corrupt) throws `Failure` and
/// leaves the decoder ready for the next frame: the capture thread drops and counts it.
public final class MJPEGDecoder {
    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { "corrupt MJPEG frame: \(message)" }
    }

    private let session: CodecSession
    private let converter = FrameConverter()
    private var pool: FramePool?

    public init() throws(CaptureError) {
        do {
            session = try CodecSession(AV_CODEC_ID_MJPEG, decoder: true)
            // Report damage as errors instead of concealing it, so a broken frame is dropped, not shown.
            session.context.pointee.err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER
            session.context.pointee.thread_count = 1
            try session.open("mjpeg")
        } catch {
            throw CaptureError(camera: nil, message: error.description)
        }
    }

    /// Decodes one JPEG image. The bytes are copied; the caller may reuse its buffer at once.
    public func decode(_ bytes: UnsafeRawBufferPointer, captureTime: UInt64 = 0, sequence: UInt64 = 0) throws(Failure) -> VideoFrame {
        // A JPEG starts with SOI (FF D8); a buffer that does not is not one (a driver's or the bus's garbage).
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw Failure(message: "\(bytes.count) bytes without a JPEG start marker")
        }
        let frame: UnsafeMutablePointer<AVFrame>
        do { frame = try session.decode(bytes) } catch { throw Failure(message: error.description) }
        defer { av_frame_unref(frame) }
        if frame.pointee.decode_error_flags != 0 || frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 {
            throw Failure(message: "the decoder flagged the picture as damaged")
        }
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        guard width > 0, height > 0 else { throw Failure(message: "no picture size") }
        // JPEG is full range (yuvj*), the program limited-range I420: libswscale converts the range
        // (`FrameConverter` gives it the plain format with the range set before it initialises; with
        // sws_setColorspaceDetails afterwards its same-format fast path skipped the range conversion).
        let byteCount = VideoFrame.byteCount(format: .i420, width: width, height: height)
        if pool?.capacity != byteCount { pool = FramePool(capacity: byteCount, limit: 4) }
        let output = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, captureTime: captureTime, sequence: sequence)
        do { try converter.convert(frame, into: output) } catch { throw Failure(message: error.description) }
        return output
    }
}
