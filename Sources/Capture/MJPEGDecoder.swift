import CFFmpeg
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// Decodes camera MJPEG frames with libavcodec's MJPEG decoder into I420 `VideoFrame`s (converted by
/// libswscale from whatever the JPEG holds, usually 4:2:2). Owns the codec context, packet, frame and
/// scaler; used by one capture thread only.
///
/// A damaged frame (not a JPEG, truncated, or one the decoder flags as corrupt) throws `Failure` and
/// leaves the decoder ready for the next frame: the capture thread drops and counts it.
public final class MJPEGDecoder {
    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { "corrupt MJPEG frame: \(message)" }
    }

    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private var scaler: OpaquePointer?
    /// Size and format the scaler was made for. Not sws_getCachedContext: libswscale rewrites a yuvj*
    /// source format to the plain one inside the context, so the cached one never matched and a new
    /// scaler was made (and the deprecation line logged) for every frame.
    private var scalerKey: (width: Int, height: Int, format: Int32)?
    private var pool: FramePool?

    public init() throws(CaptureError) {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG) else {
            throw CaptureError(camera: nil, message: "libavcodec has no MJPEG decoder")
        }
        guard let context = avcodec_alloc_context3(codec) else { throw CaptureError(camera: nil, message: "avcodec_alloc_context3: out of memory") }
        var optionalContext: UnsafeMutablePointer<AVCodecContext>? = context
        var optionalPacket = av_packet_alloc()
        var optionalFrame = av_frame_alloc()
        guard let packet = optionalPacket, let frame = optionalFrame else {
            avcodec_free_context(&optionalContext)
            av_packet_free(&optionalPacket)
            av_frame_free(&optionalFrame)
            throw CaptureError(camera: nil, message: "av_frame_alloc: out of memory")
        }
        // Report damage as errors instead of concealing it, so a broken frame is dropped, not shown.
        context.pointee.err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER
        context.pointee.thread_count = 1
        let opened = avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            avcodec_free_context(&optionalContext)
            av_packet_free(&optionalPacket)
            av_frame_free(&optionalFrame)
            throw CaptureError(camera: nil, message: "avcodec_open2(mjpeg): error \(opened)")
        }
        self.context = context
        self.packet = packet
        self.frame = frame
    }

    deinit {
        sws_freeContext(scaler)
        var optionalContext: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&optionalContext)
        var optionalPacket: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&optionalPacket)
        var optionalFrame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&optionalFrame)
    }

    /// Decodes one JPEG image. The bytes are copied; the caller may reuse its buffer at once.
    public func decode(_ bytes: UnsafeRawBufferPointer, captureTime: UInt64 = 0, sequence: UInt64 = 0) throws(Failure) -> VideoFrame {
        // A JPEG starts with SOI (FF D8); a buffer that does not is not one (a driver's or the bus's garbage).
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw Failure(message: "\(bytes.count) bytes without a JPEG start marker")
        }
        av_packet_unref(packet)
        guard av_new_packet(packet, Int32(bytes.count)) >= 0, let data = packet.pointee.data else {
            throw Failure(message: "av_new_packet(\(bytes.count)) failed")
        }
        data.update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        guard sent >= 0 else {
            avcodec_flush_buffers(context)
            throw Failure(message: "avcodec_send_packet: \(Self.errorText(sent))")
        }
        let received = avcodec_receive_frame(context, frame)
        guard received >= 0 else {
            avcodec_flush_buffers(context)
            throw Failure(message: "avcodec_receive_frame: \(Self.errorText(received))")
        }
        defer { av_frame_unref(frame) }
        if frame.pointee.decode_error_flags != 0 || frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 {
            throw Failure(message: "the decoder flagged the picture as damaged")
        }
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        guard width > 0, height > 0 else { throw Failure(message: "no picture size") }
        // JPEG is full range (yuvj*), the program limited-range I420: libswscale converts the range
        // because the formats differ (it logs once per scaler that yuvj* is deprecated; with the plain
        // format and sws_setColorspaceDetails its same-format fast path skipped the range conversion).
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        if scalerKey.map({ $0 != (width, height, frame.pointee.format) }) ?? true {
            sws_freeContext(scaler)
            scaler = sws_getContext(Int32(width), Int32(height), format, Int32(width), Int32(height), AV_PIX_FMT_YUV420P,
                                    SWS_BILINEAR, nil, nil, nil)
            scalerKey = scaler == nil ? nil : (width, height, frame.pointee.format)
        }
        guard let next = scaler else {
            throw Failure(message: "cannot convert decoded format \(frame.pointee.format) to I420")
        }
        let byteCount = VideoFrame.byteCount(format: .i420, width: width, height: height)
        if pool?.capacity != byteCount { pool = FramePool(capacity: byteCount, limit: 4) }
        let output = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, captureTime: captureTime, sequence: sequence)
        var sourcePlanes = [UnsafePointer<UInt8>?](repeating: nil, count: 4)
        let sourceStrides = withUnsafeBytes(of: frame.pointee.linesize) { Array($0.bindMemory(to: Int32.self).prefix(4)) }
        for index in 0..<4 { sourcePlanes[index] = UnsafePointer(cff_frame_plane(frame, Int32(index))) }
        var outputPlanes = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        var outputStrides = [Int32](repeating: 0, count: 4)
        for (index, layout) in output.planes.enumerated() {
            outputPlanes[index] = output.plane(index).assumingMemoryBound(to: UInt8.self)
            outputStrides[index] = Int32(layout.stride)
        }
        let rows = sws_scale(next, sourcePlanes, sourceStrides, 0, Int32(height), outputPlanes, outputStrides)
        guard rows == Int32(height) else { throw Failure(message: "sws_scale wrote \(rows) of \(height) rows") }
        return output
    }

    private static func errorText(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
