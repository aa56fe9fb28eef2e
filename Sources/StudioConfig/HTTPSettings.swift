import StudioCore

/// `http:` — the operator's HTTP API (docs/http-api.md): on by default, on loopback.
///
/// ```yaml
/// http:
///   listen: 127.0.0.1:8080   # --http ADDR:PORT, or [::1]:8080; another address than loopback needs a token
///   token: "long-random"     # optional on loopback; generated and kept next to the database otherwise
///   enabled: true            # --no-http
///   tls_cert: tls/cert.pem   # HTTPS: the certificate (chain), PEM; relative to this file's directory
///   tls_key: tls/key.pem     # and its private key, PEM, unencrypted; both or neither
/// ```
public struct HTTPSettings: Sendable, Equatable, Codable {
    public var enabled = true
    public var listen = ListenAddress.httpDefault
    /// What every request must carry; nil: none on loopback, a generated one elsewhere.
    public var token: String?
    /// HTTPS: the certificate chain and its key (paths, resolved against the config's directory);
    /// both set or both nil. Checked when the config is read (there, PEM, the right kind); the server
    /// reads them again when it starts (`HTTPSettings.TLSFiles.read`).
    public var tls: TLSFiles?

    public struct TLSFiles: Sendable, Equatable {
        public var certificate: String
        public var key: String
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, listen, token, tlsCertificate = "tls_cert", tlsKey = "tls_key"
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        try keys.update(&enabled, .enabled, .boolean)
        try keys.update(&listen, .listen, .listenAddress)
        token = try keys.parse(.token, .httpToken)
        let certificate = try Self.pemFile(keys, decoder, .tlsCertificate, .certificate)
        let key = try Self.pemFile(keys, decoder, .tlsKey, .privateKey)
        switch (certificate, key) {
        case let (certificate?, key?): tls = TLSFiles(certificate: certificate, key: key)
        case (_?, nil):
            throw decoder.failure("http.tls_key is missing: HTTPS needs both the certificate (chain) and its private key", at: CodingKeys.tlsCertificate)
        case (nil, _?):
            throw decoder.failure("http.tls_cert is missing: HTTPS needs both the certificate (chain) and its private key", at: CodingKeys.tlsKey)
        case (nil, nil): tls = nil
        }
    }

    /// A `tls_cert` / `tls_key` path, resolved and checked (there, readable, PEM of `kind`); errors at its line.
    private static func pemFile(_ keys: KeyedDecodingContainer<CodingKeys>, _ decoder: any Decoder, _ key: CodingKeys,
                                _ kind: PEMFile.Kind) throws -> String? {
        guard let written = try keys.parse(key, .path) else { return nil }
        let path = decoder.resolve(written)
        _ = try decoder.check(at: key) { () throws(ValueError) in
            try checkFile(path, kind.noun, written: written)
            return try PEMFile.read(path, as: kind)
        }
        return path
    }

    /// `http` or `https`: what the console's URLs begin with.
    public var scheme: String { tls == nil ? "http" : "https" }

    /// For the snapshot: the token never (only whether one is set); the TLS files' paths.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(enabled, forKey: .enabled)
        try keys.encode(listen.description, forKey: .listen)
        try keys.encode(token == nil ? nil : "(set)", forKey: .token)
        try keys.encodeIfPresent(tls?.certificate, forKey: .tlsCertificate)
        try keys.encodeIfPresent(tls?.key, forKey: .tlsKey)
    }
}

extension HTTPSettings.TLSFiles {
    /// The certificate chain and the key as the server hands them to the HTTP library, read now (at
    /// start); an error names the file.
    public func read() throws(ValueError) -> (certificate: [UInt8], key: [UInt8]) {
        do {
            return (try PEMFile.read(certificate, as: .certificate), try PEMFile.read(key, as: .privateKey))
        } catch {
            throw ValueError("http.tls_cert / http.tls_key: \(error.message)")
        }
    }

    /// Why the key file is too open (group or others may read it), in the operator's words; nil when
    /// only its owner may.
    public var keyExposure: String? { PEMFile.exposure(key) }
}

extension ValueSyntax where Value == ListenAddress {
    /// `ADDR:PORT` (IPv4) or `[ADDR]:PORT` (IPv6): `127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`,
    /// `[::]:8080`; port 0 lets the kernel choose.
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
