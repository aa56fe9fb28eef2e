import StudioSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The control socket's setup on disk, apart from the server's running state (ControlServer.swift):
// the directory and its modes, a stale socket or a live server at the path, the wake pipe.
extension ControlServer {
    static func bindListener(at path: String, group: UInt32?) throws(ControlServerError) -> (Int32, (device: UInt64, inode: UInt64)) {
        guard path.hasPrefix("/") else { throw .invalidPath(path: path, reason: "the path must be absolute") }
        guard let address = UnixSocket.address(for: path) else {
            throw .invalidPath(path: path, reason: "a socket path can have at most \(UnixSocket.maxPathLength) bytes")
        }
        try prepareDirectory(for: path, group: group)
        try removeStaleSocket(at: path, address: address)

        let fd: Int32
        do {
            fd = try UnixSocket.makeStreamSocket()
        } catch {
            throw .system(path: path, error)
        }
        do {
            // The umask makes bind create the file as 0600 from the start, so no other user can
            // connect in the moment before the chmod below (which makes it certain). The umask is
            // process-wide: a file another thread creates in this instant also gets owner-only bits.
            let previous = umask(0o177)
            defer { umask(previous) }
            try UnixSocket.bind(fd, to: address)
        } catch {
            UnixSocket.close(fd)
            throw .system(path: path, error)
        }
        do throws(SystemError) {
            try syscall("chmod") { chmod(path, 0o600) }
            if let group {
                // Owner-only until the group is set, then opened to the group.
                try syscall("chown") { chown(path, uid_t(bitPattern: -1), gid_t(group)) }
                try syscall("chmod") { chmod(path, 0o660) }
            }
            try syscall("listen") { listen(fd, 16) }
            try UnixSocket.setNonBlocking(fd)
            guard let identity = try UnixSocket.fileIdentity(path) else { throw SystemError(call: "lstat", errno: ENOENT) }
            return (fd, (identity.device, identity.inode))
        } catch {
            UnixSocket.close(fd)
            _ = try? syscall("unlink") { unlink(path) }
            throw .system(path: path, error)
        }
    }

    /// Creates missing directories above the socket with mode 0700 and checks that the socket's own
    /// directory belongs to us or to root. With a `group`, the directories it creates get that group
    /// and mode 0750 (members may reach the socket); of existing directories, only the socket's own
    /// one changes, and only when it is ours and private (see `openDirectory`).
    static func prepareDirectory(for path: String, group: UInt32?) throws(ControlServerError) {
        let above = path.split(separator: "/").dropLast()
        let parent = above.isEmpty ? "/" : "/" + above.joined(separator: "/")
        let created: [String]
        do { created = try makeDirectories(parent, mode: 0o700) } catch {
            throw .system(path: path, error)
        }
        if let group {
            for directory in created {
                do throws(SystemError) {
                    try syscall("chown") { chown(directory, uid_t(bitPattern: -1), gid_t(group)) }
                    try syscall("chmod") { chmod(directory, 0o750) }
                } catch {
                    throw .system(path: path, SystemError(call: "\(error.call) \(directory)", errno: error.errno))
                }
            }
        }
        var info = stat()
        do {
            try syscall("stat") { stat(parent, &info) }
        } catch {
            throw .system(path: path, SystemError(call: "stat \(parent)", errno: error.errno))
        }
        guard UnixSocket.isDirectory(info.st_mode) else {
            throw .invalidPath(path: path, reason: "\(parent) is not a directory")
        }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw .unsafeDirectory(path: path, owner: info.st_uid)
        }
        if let group { try openDirectory(parent, info, to: group, socketPath: path) }
    }

    /// With a socket group, the socket's directory must let the group's members through. A private
    /// directory of ours (mode 0700: what an earlier start without the group, or one that failed,
    /// left) is opened to the group (0750, that group); any other that keeps the group out is an
    /// error that says what to run.
    static func openDirectory(_ directory: String, _ info: stat, to group: UInt32, socketPath path: String) throws(ControlServerError) {
        let mode = UInt32(info.st_mode) & 0o7777
        let reachable = (info.st_gid == group && mode & 0o010 != 0) || mode & 0o001 != 0
        if reachable { return }
        guard info.st_uid == geteuid(), mode & 0o077 == 0 else {
            throw .groupCannotReach(path: path, directory: directory, group: group)
        }
        do throws(SystemError) {
            try syscall("chown") { chown(directory, uid_t(bitPattern: -1), gid_t(group)) }
            try syscall("chmod") { chmod(directory, 0o750) }
        } catch {
            throw .system(path: path, SystemError(call: "\(error.call) \(directory)", errno: error.errno))
        }
    }

    /// Refuses when a live server answers on `path`; removes a socket file nobody listens on.
    static func removeStaleSocket(at path: String, address: sockaddr_un) throws(ControlServerError) {
        let existing: (mode: mode_t, device: UInt64, inode: UInt64)?
        do {
            existing = try UnixSocket.fileIdentity(path)
        } catch {
            throw .system(path: path, error)
        }
        guard let existing else { return }
        guard UnixSocket.isSocket(existing.mode) else { throw .notASocket(path: path) }

        let probe: Int32
        do {
            probe = try UnixSocket.makeStreamSocket()
        } catch {
            throw .system(path: path, error)
        }
        defer { UnixSocket.close(probe) }
        do {
            try UnixSocket.connect(probe, to: address)
        } catch where error.errno == ECONNREFUSED || error.errno == ENOENT {
            // Stale: the server that made it is gone.
            do {
                try syscall("unlink") { unlink(path) }
            } catch where error.errno == ENOENT {
                // Removed meanwhile.
            } catch {
                throw .system(path: path, error)
            }
            return
        } catch where error.errno == EAGAIN {
            // The listener's backlog is full: it is alive.
            throw .alreadyRunning(path: path)
        } catch {
            throw .system(path: path, error)
        }
        throw .alreadyRunning(path: path)
    }

    static func makeWakePipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        try syscall("pipe") { pipe(&descriptors) }
        do {
            for fd in descriptors {
                try UnixSocket.setNonBlocking(fd)
                try UnixSocket.setCloseOnExec(fd)
            }
        } catch {
            descriptors.forEach(UnixSocket.close)
            throw error
        }
        return (descriptors[0], descriptors[1])
    }

    static func unlinkIfOurs(_ path: String, identity: (device: UInt64, inode: UInt64)) {
        // Another server may have replaced the file since (after a failed liveness check on its side):
        // only remove the socket this server created.
        guard let current = try? UnixSocket.fileIdentity(path),
              current.device == identity.device, current.inode == identity.inode else { return }
        _ = try? syscall("unlink") { unlink(path) }
    }
}
