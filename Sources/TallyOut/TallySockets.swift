#if canImport(Glibc)
import Glibc
#endif
import StudioCore
import StudioSystem

/// The few socket calls the tally senders and the vMix server make, each non-blocking: a peer that is
/// slow or gone costs a dropped connection, never a waiting thread.
enum TallySockets {
    /// A new socket for `address`'s family, close-on-exec and non-blocking.
    static func open(for address: ListenAddress, type: __socket_type) throws(SystemError) -> Int32 {
        let family = address.host.contains(":") ? AF_INET6 : AF_INET
        return try syscall("socket") { socket(family, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0) }
    }

    /// One datagram to `address` (dropped when the kernel's buffer is full).
    static func send(_ bytes: [UInt8], from fd: Int32, to address: ListenAddress) throws(SystemError) {
        guard var target = address.socketAddress else { throw SystemError(call: "sendto", errno: EINVAL) }
        let length = target.length
        try syscall("sendto") {
            bytes.withUnsafeBytes { raw in
                withUnsafePointer(to: &target.storage) { storage in
                    storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, length) }
                }
            }
        }
    }

    /// Connects a TCP socket to `address`, waiting at most `seconds`; the connected socket (non-blocking).
    static func connect(to address: ListenAddress, seconds: Double) throws(SystemError) -> Int32 {
        guard var target = address.socketAddress else { throw SystemError(call: "connect", errno: EINVAL) }
        let fd = try open(for: address, type: SOCK_STREAM)
        let length = target.length
        let started = withUnsafePointer(to: &target.storage) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        if started != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EINTR else { close(fd); throw SystemError(call: "connect", errno: code) }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(seconds * 1000))
            guard ready > 0 else { close(fd); throw SystemError(call: "connect", errno: ready == 0 ? ETIMEDOUT : errno) }
            var failure: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size)
            guard failure == 0 else { close(fd); throw SystemError(call: "connect", errno: failure) }
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// Writes what the socket takes now; the bytes it did not take (EAGAIN) are returned. Throws when
    /// the connection is gone.
    static func write(_ bytes: ArraySlice<UInt8>, to fd: Int32) throws(SystemError) -> ArraySlice<UInt8> {
        var rest = bytes
        while !rest.isEmpty {
            let sent = rest.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if sent < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return rest }
                throw SystemError(call: "send", errno: code)
            }
            rest = rest.dropFirst(sent)
        }
        return rest
    }

    /// What has arrived (up to `limit` bytes), without waiting: empty when nothing has; nil when the
    /// peer closed the connection or it failed.
    static func read(from fd: Int32, limit: Int = 4096) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { return Array(buffer[..<count]) }
            if count == 0 { return nil }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? [] : nil
        }
    }

    /// Binds `fd` to `address` (a TCP listener also listens); closes `fd` when it cannot.
    static func bind(_ fd: Int32, to address: ListenAddress) throws(SystemError) {
        guard let target = address.socketAddress else { close(fd); throw SystemError(call: "bind \(address)", errno: EINVAL) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = target.storage
        do {
            try syscall("bind \(address)") {
                withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, target.length) } }
            }
        } catch {
            close(fd)
            throw error
        }
    }

    /// The port `fd` is bound to (the kernel's choice after binding port 0).
    static func boundPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return ListenAddress(socketAddress: storage)?.port ?? 0
    }

    /// A connected pair of non-blocking sockets: a thread polls the first, others wake it by `wake`ing the second.
    static func wakePair() throws(SystemError) -> (read: Int32, write: Int32) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw SystemError(call: "socketpair", errno: errno)
        }
        return (pair[0], pair[1])
    }

    /// One byte into a wake pair's write end (nothing when it is full: a wake-up is pending anyway).
    static func wake(_ fd: Int32) {
        guard fd >= 0 else { return }
        var byte: UInt8 = 1
        _ = Glibc.send(fd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
    }

    /// One datagram that has arrived, truncated to `limit`, with its sender; nil when none has.
    static func receiveDatagram(from fd: Int32, limit: Int = 65536) -> (bytes: [UInt8], sender: ListenAddress?)? {
        var buffer = [UInt8](repeating: 0, count: limit)
        var storage = sockaddr_storage()
        while true {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT), $0, &length) } }
            }
            if count >= 0 { return (Array(buffer[..<count]), ListenAddress(socketAddress: storage)) }
            if errno == EINTR { continue }
            // EAGAIN: nothing more; ECONNREFUSED and the like (an ICMP for an earlier send): not a datagram either.
            return errno == EAGAIN || errno == EWOULDBLOCK ? nil : ([], nil)
        }
    }
}
