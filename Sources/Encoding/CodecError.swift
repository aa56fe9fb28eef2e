import Foundation
import Synchronization
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
        av_strerror(code, &buffer, buffer.count)
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

/// libav* log lines. By default libav* writes them to stderr from whatever thread logs, which could
/// stall a media thread on a blocked terminal or journal; `configure(verbose:sink:)` routes them to
/// `sink` instead, which must only copy or enqueue.
public enum FFmpegLogging {
    static let sink = Mutex<(@Sendable (Int32, String) -> Void)?>(nil)

    /// `AV_LOG_ERROR` when `verbose` is false, `AV_LOG_INFO` otherwise. With a `sink`, lines go there.
    public static func configure(verbose: Bool, sink: (@Sendable (_ level: Int32, _ line: String) -> Void)? = nil) {
        av_log_set_level(verbose ? AV_LOG_INFO : AV_LOG_ERROR)
        if let sink {
            Self.sink.withLock { $0 = sink }
            cff_install_log_forwarding()
        }
    }
}

/// Called by the C shim `cff_log_forward` on libav*'s logging thread: copy the line and hand it on.
@_cdecl("studio_ffmpeg_log_line")
func studioFFmpegLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty, let sink = FFmpegLogging.sink.withLock({ $0 }) else { return }
    sink(level, text)
}
