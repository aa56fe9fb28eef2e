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
}
