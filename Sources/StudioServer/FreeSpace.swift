#if canImport(Glibc)
import Glibc
#endif

/// Free space on the file system that holds a path (statvfs: a quick call, no I/O wait on a local disk),
/// for `studio status` and `studio doctor`.
enum FreeSpace {
    /// Bytes an unprivileged writer may still use where `path` lives; nil when statvfs fails.
    static func bytes(atPath path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}
