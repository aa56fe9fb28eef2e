import StudioCore

/// `http:` — the operator's HTTP API (docs/http-api.md): on by default, on loopback.
///
/// ```yaml
/// http:
///   listen: 127.0.0.1:8080   # --http ADDR:PORT; another address than loopback needs a token
///   token: ${...}            # optional on loopback; generated and kept next to the database otherwise
///   enabled: true            # --no-http
/// ```
public struct HTTPSettings: Sendable, Equatable, Codable {
    public var enabled = true
    public var listen = ListenAddress.httpDefault
    /// What every request must carry; nil: none on loopback, a generated one elsewhere.
    public var token: String?

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, listen, token
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        try keys.update(&enabled, .enabled, .boolean)
        try keys.update(&listen, .listen, .listenAddress)
        token = try keys.parse(.token, .httpToken)
    }

    /// For the snapshot: the token never (only whether one is set).
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(enabled, forKey: .enabled)
        try keys.encode(listen.description, forKey: .listen)
        try keys.encode(token == nil ? nil : "(set)", forKey: .token)
    }
}

extension ValueSyntax where Value == ListenAddress {
    /// `ADDR:PORT` (IPv4): `127.0.0.1:8080`, `0.0.0.0:8080`; port 0 lets the kernel choose.
    public static var listenAddress: Self {
        Self("an address and port") { (text: String) throws(ValueError) -> ListenAddress in
            switch ListenAddress.parse(text) {
            case .success(let address): return address
            case .failure(let error): throw ValueError(error.description)
            }
        }
    }
}

extension ValueSyntax where Value == String {
    /// The HTTP token: at least 16 characters, none of them blank (it travels in a header).
    public static var httpToken: Self {
        Self("a token") { (text: String) throws(ValueError) -> String in
            guard text.count >= 16, text.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw ValueError("the HTTP token must be at least 16 printable ASCII characters without spaces (e.g. `openssl rand -hex 16`)")
            }
            return text
        }
    }
}
