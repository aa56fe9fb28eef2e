import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// A failed libav* call (libavcodec, libavformat, libswscale, libavutil): the call's name, its AVERROR
/// code and av_strerror's text. The one error type of every stage that talks to FFmpeg (encoders,
/// muxers, the scaler, the MJPEG decoder). Never contains a URL (stream keys stay out of errors).
public struct FFmpegError: Error, Equatable, CustomStringConvertible, Sendable {
    public let call: String
    public let code: Int32
    public let message: String

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        self.message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An error that has no AVERROR code of its own (a missing encoder, an unusable setting, a short
    /// conversion): `code` is AVERROR_EXTERNAL.
    public init(call: String, message: String) {
        self.call = call
        self.code = cff_averror_external()
        self.message = message
    }

    /// Out of memory in `call` (a NULL from an allocator).
    public static func outOfMemory(_ call: String) -> FFmpegError { FFmpegError(call: call, code: cff_averror(ENOMEM)) }

    /// `call: message`, with the AVERROR code when libav* gave one.
    public var description: String { code == cff_averror_external() ? "\(call): \(message)" : "\(call): \(message) (\(code))" }

    public static let tryAgain = cff_averror(EAGAIN)
    public static let inputOutput = cff_averror(EIO)
    public static let notPermitted = cff_averror(EPERM)
    public static let endOfFile = cff_averror_eof()
}

/// Throws an `FFmpegError` for a negative libav* result; returns it otherwise.
@discardableResult
public func check(_ call: String, _ result: Int32) throws(FFmpegError) -> Int32 {
    if result < 0 { throw FFmpegError(call: call, code: result) }
    return result
}

/// Copies `count` bytes from C memory (a packet's data, extradata) into a Swift array (empty for null).
public func copiedBytes(_ pointer: UnsafePointer<UInt8>?, count: Int32) -> [UInt8] {
    guard let pointer, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: Int(count)))
}
