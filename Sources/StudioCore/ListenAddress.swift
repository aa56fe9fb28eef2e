/// Where a TCP listener binds: an IPv4 or IPv6 address and a port (`127.0.0.1:8080`, `[::1]:8080`;
/// port 0 lets the kernel choose, as tests do). The HTTP console's `http.listen` and `--http` take it.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// Dotted IPv4 (`0.0.0.0` for every interface), or IPv6 without brackets (`::1`, `::` for every
    /// interface, IPv4 included).
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// The console's default: loopback only.
    public static let httpDefault = ListenAddress(host: "127.0.0.1", port: 8080)

    /// `ADDR:PORT` with a dotted IPv4 address (`localhost` reads as 127.0.0.1) or `[IPv6]:PORT`; the
    /// reason in the operator's words otherwise.
    public static func parse(_ text: String) -> Result<ListenAddress, ListenAddressError> {
        let example = "like 127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080 or [::]:8080"
        var host: String
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                return .failure(ListenAddressError("\"\(text)\" opens a [ for an IPv6 address but does not close it (\(example))"))
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                return .failure(ListenAddressError("expected [IPv6]:PORT \(example), got \"\(text)\" (the port is missing after ])"))
            }
            portText = rest.dropFirst()
            if host.contains("%") {
                return .failure(ListenAddressError("\"\(host)\" has a zone (%interface): link-local addresses are not supported; listen on [::] or a global/ULA address in \"\(text)\""))
            }
            guard ipv6Bytes(host) != nil else {
                return .failure(ListenAddressError("\"\(host)\" is not an IPv6 address (like ::1 or ::) in \"\(text)\""))
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                return .failure(ListenAddressError("expected ADDRESS:PORT \(example), got \"\(text)\""))
            }
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                return .failure(ListenAddressError("an IPv6 address goes in brackets before its port: [\(host)]:\(portText), not \"\(text)\""))
            }
            if host == "localhost" { host = "127.0.0.1" }
            guard octets(host) != nil else {
                return .failure(ListenAddressError("\"\(host)\" is not an IPv4 address (like 127.0.0.1 or 0.0.0.0) in \"\(text)\"; an IPv6 one goes in brackets, [::1]:8080"))
            }
        }
        guard let port = UInt16(portText) else {
            return .failure(ListenAddressError("the port in \"\(text)\" must be a number from 0 to 65535"))
        }
        return .success(ListenAddress(host: host, port: port))
    }

    /// An IPv6 address (written in brackets).
    public var isIPv6: Bool { host.contains(":") }

    /// Only this machine can connect: 127.0.0.0/8, or ::1.
    public var isLoopback: Bool { Self.isLoopback(host) }

    /// `127.x.x.x` and `::1` (in any spelling, `0:0:0:0:0:0:0:1` too). Nothing else: `::` and
    /// `0.0.0.0` are every interface, and an IPv4-mapped `::ffff:127.0.0.1` is not taken for loopback.
    public static func isLoopback(_ host: String) -> Bool {
        if let bytes = ipv6Bytes(host) { return bytes == [UInt8](repeating: 0, count: 15) + [1] }
        return octets(host)?.first == 127
    }

    /// The four numbers of a dotted IPv4 address.
    public static func octets(_ host: String) -> [UInt8]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let numbers = parts.compactMap { $0.count <= 3 && $0.allSatisfy(\.isASCII) ? UInt8($0) : nil }
        return numbers.count == 4 ? numbers : nil
    }

    /// The sixteen bytes of an IPv6 address (RFC 4291 text: hex groups, one `::`, a dotted IPv4 tail).
    public static func ipv6Bytes(_ host: String) -> [UInt8]? {
        guard host.contains(":"), host.count <= 45 else { return nil }
        // Split at the one `::` (a second is no address).
        var halves = [host]
        let characters = Array(host)
        if let at = characters.indices.dropLast().first(where: { characters[$0] == ":" && characters[$0 + 1] == ":" }) {
            halves = [String(characters[..<at]), String(characters[(at + 2)...])]
            if halves[1].contains("::") || halves[1].hasPrefix(":") { return nil }
        }
        func groups(_ text: String, last: Bool) -> [UInt16]? {
            if text.isEmpty { return [] }
            var result: [UInt16] = []
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            for (index, part) in parts.enumerated() {
                if last, index == parts.count - 1, part.contains(".") {
                    guard let v4 = octets(String(part)) else { return nil }
                    result += [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
                } else {
                    guard (1...4).contains(part.count), part.allSatisfy(\.isHexDigit), let value = UInt16(part, radix: 16) else { return nil }
                    result.append(value)
                }
            }
            return result
        }
        guard let head = groups(halves[0], last: halves.count == 1) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1], last: true), head.count + tail.count <= 7 else { return nil }
            all += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// `127.0.0.1:8080` or `[::1]:8080`: as written in the config, and as a URL's authority.
    public var description: String { authority(port: port) }

    /// The host and `port` as a URL writes them (`[::1]:8443`), for a port the kernel chose.
    public func authority(port: UInt16) -> String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

public struct ListenAddressError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
