import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Who may read what the server writes: its owner, and with a socket group (`socket_group`) that
/// group too (read only). The server sets its umask before it creates anything, because some files
/// are made by libraries that take the process umask (SQLite's database, -wal and -shm; libavformat's
/// recordings); the directories it makes itself get their mode explicitly as well. See docs/security.md.
public enum FileModes {
    /// The umask: 077 (owner only) or 027 (the group reads).
    public static func umask(sharedWithGroup: Bool) -> mode_t { sharedWithGroup ? 0o027 : 0o077 }
    /// The mode of a directory the server creates: 0700, or 0750 with a group.
    public static func directory(sharedWithGroup: Bool) -> mode_t { sharedWithGroup ? 0o750 : 0o700 }

    /// Sets the process umask for the files the server (and its libraries) create from now on.
    package static func restrict(sharedWithGroup: Bool) {
        _ = Glibc.umask(umask(sharedWithGroup: sharedWithGroup))
    }

    /// Creates `path` and any missing parent (like mkdir -p) with `mode`, whatever the umask. A
    /// directory that exists keeps its mode. Throws the failing step's error.
    package static func makeDirectory(_ path: String, mode: mode_t) throws {
        for directory in try makeDirectories(path, mode: mode) {
            try syscall("chmod") { chmod(directory, mode) }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(call: "stat \(path)", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw ServerError("\(path) exists and is not a directory") }
    }
}

extension FileModes {
    /// Writes `text` to `path` whole or not at all: into a new temporary file beside it (`.NAME.XXXXXX`,
    /// same directory, so the rename cannot cross file systems), synced, then renamed over `path`. On any
    /// failure the temporary file is removed and `path` is left as it was. The file gets 0666 less the umask.
    public static func writeAtomically(_ text: String, to path: String) throws(SystemError) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var template = Array(((directory.isEmpty ? "." : directory) + "/." + name + ".XXXXXX").utf8CString)
        let descriptor = try syscall("create a temporary file in \(directory.isEmpty ? "." : directory)") {
            template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var done = false
        defer {
            close(descriptor)
            if !done { unlink(temporary) }
        }
        let mask = Glibc.umask(0)
        _ = Glibc.umask(mask)
        try syscall("chmod \(temporary)") { fchmod(descriptor, 0o666 & ~mask) }
        guard writeAll(descriptor, text) else { throw SystemError(call: "write \(temporary)", errno: errno) }
        try syscall("fsync \(temporary)") { fsync(descriptor) }
        try syscall("rename to \(path)") { rename(temporary, path) }
        done = true
    }
}
