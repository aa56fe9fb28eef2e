import Foundation
import Synchronization
import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

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

    /// Trims a formatted libav* line (they end in a newline); nil for an empty one.
    static func text(of line: UnsafePointer<CChar>) -> String? {
        let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}

/// Called by the C shim `cff_log_forward` on libav*'s logging thread: copy the line and hand it on.
@_cdecl("studio_ffmpeg_log_line")
func studioFFmpegLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line, let text = FFmpegLogging.text(of: line), let sink = FFmpegLogging.sink.withLock({ $0 }) else { return }
    sink(level, text)
}
