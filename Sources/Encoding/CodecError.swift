import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// A failed libavcodec/libavutil call: the call's name, its AVERROR code and av_strerror's text.
public struct CodecError: Error, Equatable, CustomStringConvertible, Sendable {
    public let call: String
    public let code: Int32
    public let message: String

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
        var buffer = [CChar](repeating: 0, count: 128)
        cff_strerror(code, &buffer, buffer.count)
        self.message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An error that has no AVERROR code (a missing encoder, an unusable setting).
    public init(call: String, message: String) {
        self.call = call
        self.code = cff_averror_external()
        self.message = message
    }

    public var description: String { "\(call): \(message) (\(code))" }

    public static let tryAgain = cff_averror(EAGAIN)
    public static let endOfFile = cff_averror_eof()
}

/// Throws a `CodecError` for a negative libav result; returns it otherwise.
@discardableResult
func check(_ call: String, _ result: Int32) throws(CodecError) -> Int32 {
    if result < 0 { throw CodecError(call: call, code: result) }
    return result
}

/// Copies `count` bytes from C memory into a Swift array (empty for null).
func bytes(_ pointer: UnsafePointer<UInt8>?, count: Int32) -> [UInt8] {
    guard let pointer, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: Int(count)))
}

/// libav* logging goes to stderr; the server and tests turn it down to errors only.
public enum FFmpegLogging {
    /// `AV_LOG_ERROR` when `verbose` is false, `AV_LOG_INFO` otherwise.
    public static func configure(verbose: Bool) {
        cff_set_log_level(verbose ? AV_LOG_INFO : AV_LOG_ERROR)
    }
}
