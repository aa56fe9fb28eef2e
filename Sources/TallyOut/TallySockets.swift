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
}
