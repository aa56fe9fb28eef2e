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
    static func restrict(sharedWithGroup: Bool) {
        _ = Glibc.umask(umask(sharedWithGroup: sharedWithGroup))
    }

    /// Creates `path` and any missing parent (like mkdir -p) with `mode`, whatever the umask. A
    /// directory that exists keeps its mode. Throws the failing step's error.
    static func makeDirectory(_ path: String, mode: mode_t) throws {
        for directory in try makeDirectories(path, mode: mode) {
            try syscall("chmod") { chmod(directory, mode) }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(call: "stat \(path)", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw ServerError("\(path) exists and is not a directory") }
    }
}
