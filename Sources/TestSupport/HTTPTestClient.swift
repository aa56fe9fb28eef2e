import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 client over a plain socket, for tests of the HTTP API: it writes exactly the
/// request asked for (any method, header, or body, malformed ones included) and reads the answer.
public final class HTTPTestClient {
    public let fd: Int32

    public struct Response: CustomStringConvertible {
        public var status: Int
        /// Header names lowercased.
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
        public var description: String { "\(status) \(text)" }
    }

    /// Connects to `host:port` (IPv4, or IPv6 when `host` has a colon: `::1`), with `receiveBuffer`
    /// bytes of kernel receive buffer when given (a small one makes a client that does not read fill up
    /// quickly), from the IPv4 address `from` when given (any of 127.0.0.0/8 is this machine's: a test
    /// plays several clients from one process).
    public init(host: String = "127.0.0.1", port: Int, receiveBuffer: Int32? = nil, from: String? = nil) throws {
        let isIPv6 = host.contains(":")
        fd = try syscall("socket") { socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let from, !isIPv6 {
            var local = NginxRTMP.loopbackAddress(port: 0)
            inet_pton(AF_INET, from, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound != 0 {
                let error = errno
                close(fd)
                throw SystemError(call: "bind \(from)", errno: error)
            }
        }
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = NginxRTMP.loopbackAddress(port: port)
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if result != 0 {
            let error = errno
            close(fd)
            throw SystemError(call: "connect", errno: error)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Whether this machine has an IPv6 loopback (::1) to bind to; containers sometimes have none.
    public static var hasIPv6Loopback: Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        inet_pton(AF_INET6, "::1", &address.sin6_addr)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
        }
    }

    deinit { close(fd) }

    /// Sends raw bytes.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "send", errno: errno)
            }
            offset += sent
        }
    }

    /// Sends a request (`Connection: close` unless `headers` says otherwise) and reads the whole answer.
    public func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                        host: String = "127.0.0.1") throws -> Response {
        try send(Self.requestBytes(method, path, headers: headers, body: body, host: host))
        return try readResponse()
    }

    public static func requestBytes(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                                    host: String = "127.0.0.1") -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        var all = headers
        if all["Host"] == nil { all["Host"] = host }
        if all["Connection"] == nil { all["Connection"] = "close" }
        if let body { all["Content-Length"] = String(body.count) }
        for (name, value) in all.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    /// Reads bytes until `condition` holds on what arrived, the peer closes, or `seconds` pass.
    public func read(seconds: Double = 10, until condition: ([UInt8]) -> Bool = { _ in false }) -> [UInt8] {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while Date() < deadline, !condition(received) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, min(200, deadline.timeIntervalSinceNow * 1000))))
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        return received
    }

    /// Reads and forgets what arrives until the server ends the connection (end of stream or reset):
    /// true, or false when it is still open after `seconds`.
    public func waitForClose(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, min(200, deadline.timeIntervalSinceNow * 1000))))
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return true }
        }
        return false
    }

    /// Reads one whole response (the connection closes after it, or its Content-Length says where it ends).
    public func readResponse(seconds: Double = 10) throws -> Response {
        let raw = read(seconds: seconds) { bytes in
            guard let split = Self.headerEnd(bytes) else { return false }
            let headers = Self.headers(Array(bytes[..<split]))
            guard let length = headers["content-length"].flatMap(Int.init) else { return false }
            return bytes.count - split - 4 >= length
        }
        guard let split = Self.headerEnd(raw) else {
            throw SystemError(call: "HTTP response (got \(raw.count) bytes: \(String(decoding: raw, as: UTF8.self)))", errno: EPROTO)
        }
        let head = Array(raw[..<split])
        let statusLine = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first ?? ""
        let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return Response(status: status, headers: Self.headers(head), body: Array(raw[(split + 4)...]))
    }

    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func headers(_ head: [UInt8]) -> [String: String] {
        var headers: [String: String] = [:]
        for line in String(decoding: head, as: UTF8.self).split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    /// One request on a new connection.
    public static func fetch(port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                             host: String = "127.0.0.1") throws -> Response {
        try HTTPTestClient(host: host, port: port).request(method, path, headers: headers, body: body, host: host)
    }
}
