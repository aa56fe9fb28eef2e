/// Where a TCP listener binds: an IPv4 address and a port (`127.0.0.1:8080`; port 0 lets the kernel
/// choose, as tests do). The HTTP console's `http.listen` and `--http` take it.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// Dotted IPv4 (`0.0.0.0` for every interface).
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// The console's default: loopback only.
    public static let httpDefault = ListenAddress(host: "127.0.0.1", port: 8080)

    /// `ADDR:PORT` with a dotted IPv4 address (`localhost` reads as 127.0.0.1); nil with the reason otherwise.
    public static func parse(_ text: String) -> Result<ListenAddress, ListenAddressError> {
        guard let colon = text.lastIndex(of: ":") else {
            return .failure(ListenAddressError("expected ADDRESS:PORT like 127.0.0.1:8080, got \"\(text)\""))
        }
        var host = String(text[..<colon])
        if host == "localhost" { host = "127.0.0.1" }
        guard let port = UInt16(text[text.index(after: colon)...]) else {
            return .failure(ListenAddressError("the port in \"\(text)\" must be a number from 0 to 65535"))
        }
        guard octets(host) != nil else {
            return .failure(ListenAddressError("\"\(host)\" is not an IPv4 address (like 127.0.0.1 or 0.0.0.0) in \"\(text)\""))
        }
        return .success(ListenAddress(host: host, port: port))
    }

    /// Only this machine can connect (127.0.0.0/8).
    public var isLoopback: Bool { Self.isLoopback(host) }

    public static func isLoopback(_ host: String) -> Bool { octets(host)?.first == 127 }

    /// The four numbers of a dotted IPv4 address.
    public static func octets(_ host: String) -> [UInt8]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let numbers = parts.compactMap { $0.count <= 3 && $0.allSatisfy(\.isASCII) ? UInt8($0) : nil }
        return numbers.count == 4 ? numbers : nil
    }

    public var description: String { "\(host):\(port)" }
}

public struct ListenAddressError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
