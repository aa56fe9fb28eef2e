#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg
import StudioSystem

/// SHA-256 of a file, through libavutil's hash API (`av_hash_alloc("SHA256")`, in the FFmpeg libraries
/// studio links already: no other crypto library). A node answers it for each of its recordings
/// (`GET .../recordings/{file}/sha256`) and `studio collect` checks its copies with it.
public struct FileDigest: Sendable, Equatable, CustomStringConvertible {
    /// Lower-case hex, 64 characters.
    public var sha256: String
    /// How many bytes were hashed (the file's size when it was read, or the length asked for).
    public var bytes: Int64

    public var description: String { "sha256 \(sha256) (\(bytes) bytes)" }

    public init(sha256: String, bytes: Int64) {
        self.sha256 = sha256
        self.bytes = bytes
    }

    /// Why a file could not be hashed.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The SHA-256 of `path`'s first `length` bytes (all of it when nil), in one go.
    public static func sha256(of path: String, length: Int64? = nil) throws(Failure) -> FileDigest {
        let hasher = try Hasher(path: path, length: length)
        while true {
            if let digest = try hasher.step(bytes: 64 << 20) { return digest }
        }
    }

    /// A file hashed a step at a time (a node's HTTP answer hashes a slice per call of its stream, so
    /// its connection never waits long for a big file). Not for two threads at once.
    public final class Hasher {
        private let path: String
        private let length: Int64?
        private let fd: Int32
        private var context: OpaquePointer?
        private var buffer = [UInt8](repeating: 0, count: 1 << 20)
        private var total: Int64 = 0

        /// Opens `path` to hash its first `length` bytes (all of it when nil; a shorter file is a failure).
        public init(path: String, length: Int64? = nil) throws(Failure) {
            do { fd = try syscall("open") { open(path, O_RDONLY | O_CLOEXEC) } }
            catch { throw Failure("cannot open \(path): \(error)") }
            self.path = path
            self.length = length
            guard av_hash_alloc(&context, "SHA256") >= 0, let context else {
                close(fd)
                throw Failure("libavutil has no SHA256 hash")
            }
            av_hash_init(context)
        }

        deinit {
            close(fd)
            av_hash_freep(&context)
        }

        /// Hashes at most `bytes` more; the digest once everything is hashed, nil while there is more.
        public func step(bytes: Int) throws(Failure) -> FileDigest? {
            var done = 0
            while done < bytes {
                if let length, total >= length { break }
                let want = min(buffer.count, bytes - done, length.map { Int($0 - total) } ?? Int.max)
                let count: Int
                do { count = try buffer.withUnsafeMutableBytes { buffer in Result { () throws(SystemError) in try syscall("read") { read(fd, buffer.baseAddress, want) } } }.get() }
                catch { throw Failure("cannot read \(path): \(error)") }
                if count == 0 {
                    if let length { throw Failure("\(path) has \(total) bytes, fewer than the \(length) to hash") }
                    return finish()
                }
                buffer.withUnsafeBufferPointer { av_hash_update(context, $0.baseAddress, count) }
                total += Int64(count)
                done += count
            }
            if let length, total >= length { return finish() }
            return nil
        }

        private func finish() -> FileDigest {
            var hex = [UInt8](repeating: 0, count: 2 * 32 + 1)
            av_hash_final_hex(context, &hex, Int32(hex.count))
            return FileDigest(sha256: String(decoding: hex.prefix { $0 != 0 }, as: UTF8.self), bytes: total)
        }
    }
}
