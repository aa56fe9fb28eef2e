import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Small helpers over AF_UNIX stream sockets shared by the server and the client. Every call goes
/// through `syscall(_:_:)`.
enum UnixSocket {
    /// The longest path that fits `sockaddr_un.sun_path` with its terminating NUL (107 on Linux).
    static let maxPathLength: Int = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The address for `path`, or nil when the path is empty or too long.
    static func address(for path: String) -> sockaddr_un? {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maxPathLength, !bytes.contains(0) else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A new AF_UNIX stream socket, close-on-exec.
    static func makeStreamSocket() throws(SystemError) -> Int32 {
        try syscall("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    }

    static func connect(_ fd: Int32, to address: sockaddr_un) throws(SystemError) {
        var address = address
        try syscall("connect") {
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }

    static func bind(_ fd: Int32, to address: sockaddr_un) throws(SystemError) {
        var address = address
        try syscall("bind") {
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }

    static func setNonBlocking(_ fd: Int32) throws(SystemError) {
        let flags = try syscall("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        try syscall("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    static func setCloseOnExec(_ fd: Int32) throws(SystemError) {
        let flags = try syscall("fcntl(F_GETFD)") { fcntl(fd, F_GETFD) }
        try syscall("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Closes `fd`, ignoring errors (nothing useful can be done about a failed close here). These
    /// descriptors never use SO_LINGER, so close cannot report EINTR and the wrapper's retry never runs.
    static func close(_ fd: Int32) {
        guard fd >= 0 else { return }
        _ = try? syscall("close") { Glibc.close(fd) }
    }

    /// Writes as much of `bytes` as the socket takes without blocking (MSG_NOSIGNAL: a closed peer
    /// gives EPIPE, never SIGPIPE). Returns the count written; 0 when the socket is full.
    static func sendSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        do {
            return try syscall("send") { send(fd, base, bytes.count, Int32(MSG_NOSIGNAL)) }
        } catch where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return 0
        }
    }

    /// Sends `bytes[offset...]` without blocking; see `sendSome(_:_:)`.
    static func sendSome(_ fd: Int32, _ bytes: [UInt8], from offset: Int) throws(SystemError) -> Int {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemError) -> Int in try sendSome(fd, UnsafeRawBufferPointer(rebasing: raw[offset...])) }
        }
        return try result.get()
    }

    /// Reads into the start of `buffer`. Returns the count read, 0 at end of stream, nil when a
    /// non-blocking descriptor has nothing to read (EAGAIN).
    static func readSome(_ fd: Int32, into buffer: inout [UInt8]) throws(SystemError) -> Int? {
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) -> Int in try syscall("read") { read(fd, raw.baseAddress, raw.count) } }
        }
        do {
            return try result.get()
        } catch where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        }
    }

    /// The `st_mode`, device and inode of `path` (not following a final symlink), nil when it does
    /// not exist.
    static func fileIdentity(_ path: String) throws(SystemError) -> (mode: mode_t, device: UInt64, inode: UInt64)? {
        var info = stat()
        do {
            try syscall("lstat") { lstat(path, &info) }
        } catch where error.errno == ENOENT {
            return nil
        }
        return (info.st_mode, UInt64(info.st_dev), UInt64(info.st_ino))
    }

    static func isSocket(_ mode: mode_t) -> Bool { mode & S_IFMT == S_IFSOCK }
    static func isDirectory(_ mode: mode_t) -> Bool { mode & S_IFMT == S_IFDIR }
}
