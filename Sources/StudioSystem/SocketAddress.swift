#if canImport(Glibc)
import Glibc
#endif
import StudioCore

extension ListenAddress {
    /// The address as bind(2) takes it: a `sockaddr_in` or `sockaddr_in6` in a `sockaddr_storage`, and
    /// its length; nil when the host is neither an IPv4 nor an IPv6 address. One place for the HTTP
    /// console, the SRT listener and `studio doctor`'s check of its port.
    public var socketAddress: (storage: sockaddr_storage, length: socklen_t)? {
        var storage = sockaddr_storage()
        if let bytes = Self.ipv6Bytes(host) {
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = port.bigEndian
                withUnsafeMutableBytes(of: &address.pointee.sin6_addr) { $0.copyBytes(from: bytes) }
            }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        guard let octets = Self.octets(host) else { return nil }
        withUnsafeMutableBytes(of: &storage) { raw in
            let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
            address.pointee.sin_family = sa_family_t(AF_INET)
            address.pointee.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.pointee.sin_addr) { $0.copyBytes(from: octets) }
        }
        return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    /// The address in a `sockaddr_in` or `sockaddr_in6` (recvfrom's, getsockname's); nil for another family.
    public init?(socketAddress storage: sockaddr_storage) {
        var storage = storage
        var host = [CChar](repeating: 0, count: 64)
        var port: UInt16 = 0
        let family = Int32(storage.ss_family)
        guard family == AF_INET || family == AF_INET6 else { return nil }
        withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                    var bytes = inet.pointee.sin_addr
                    inet_ntop(AF_INET, &bytes, &host, socklen_t(host.count))
                    port = UInt16(bigEndian: inet.pointee.sin_port)
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                    var bytes = inet.pointee.sin6_addr
                    inet_ntop(AF_INET6, &bytes, &host, socklen_t(host.count))
                    port = UInt16(bigEndian: inet.pointee.sin6_port)
                }
            }
        }
        self.init(host: String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), port: port)
    }
}
