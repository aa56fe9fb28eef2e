import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Writes to stderr, ignoring failures (a closed or broken stderr must not take the server down).
public func writeStandardError(_ text: String) { writeIgnoringErrors(2, text) }

/// Writes all of `text` to `descriptor` through the syscall wrapper; errors (EPIPE...) are ignored.
public func writeIgnoringErrors(_ descriptor: Int32, _ text: String) { _ = writeAll(descriptor, text) }

/// Writes all of `text` to `descriptor`; false if the descriptor failed (closed pipe, full disk...).
public func writeAll(_ descriptor: Int32, _ text: String) -> Bool {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { buffer in try? syscall("write") { write(descriptor, buffer.baseAddress, buffer.count) } }
        guard let written, written > 0 else { return false }
        bytes = bytes.dropFirst(written)
    }
    return true
}
