import StudioCore

/// `network.srt`: the SRT listener (`SRTListenerSpec`), a mapping of `listen` (ADDR:PORT),
/// `passphrase` (optional, 10 to 79 characters), `latency_ms` (SRT's own, default 120) and `callers`
/// (names, or mappings of `name` and `passphrase`).
struct SRTSection: Decodable {
    var spec: SRTListenerSpec

    enum CodingKeys: String, CodingKey, CaseIterable {
        case listen, passphrase, latencyMilliseconds = "latency_ms", callers
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with listen and callers, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        guard let listen = try keys.parse(.listen, .listenAddress) else {
            throw decoder.failure("missing: the address and UDP port to listen on (0.0.0.0:9710)", at: CodingKeys.listen)
        }
        let passphrase = try keys.parse(.passphrase, .srtPassphrase)
        let latency = try keys.parse(.latencyMilliseconds, .latencyMilliseconds) ?? SRTListenerSpec.defaultLatencyMilliseconds
        let callers = try keys.decodeIfPresent(CallerList.self, forKey: .callers)?.callers ?? []
        guard !callers.isEmpty else { throw decoder.failure("missing: the callers, by the stream id each publishes with ([anna, ben])", at: CodingKeys.callers) }
        guard callers.count <= SRTListenerSpec.maximumCallers else {
            throw decoder.failure("at most \(SRTListenerSpec.maximumCallers) callers", at: CodingKeys.callers)
        }
        spec = SRTListenerSpec(listen: listen, passphrase: passphrase, latencyMilliseconds: latency, callers: callers)
    }

    struct CallerList: Decodable {
        var callers: [SRTListenerSpec.Caller] = []
        init(from decoder: any Decoder) throws {
            var items = try decoder.unkeyedContainer()
            while !items.isAtEnd {
                let item = try items.superDecoder()
                let caller: SRTListenerSpec.Caller
                if let name = try? item.singleValueContainer().decode(String.self) {
                    do { _ = try ValueSyntax.name.parse(name) } catch { throw item.failure("\(error)") }
                    caller = .init(name: CameraID(name))
                } else {
                    let keys = try item.rewording({ "expected a name or a mapping with name (and passphrase), got \($0)" }) {
                        try item.container(keyedBy: CallerKeys.self)
                    }
                    guard let name = try keys.parse(.name, .name) else { throw item.failure("missing: the caller's name", at: CallerKeys.name) }
                    caller = .init(name: CameraID(name), passphrase: try keys.parse(.passphrase, .srtPassphrase))
                }
                if callers.contains(where: { $0.name == caller.name }) {
                    throw item.failure("the caller \"\(caller.name.name)\" is listed twice")
                }
                callers.append(caller)
            }
        }
    }

    enum CallerKeys: String, CodingKey, CaseIterable {
        case name, passphrase
    }
}

extension SRTListenerSpec: Encodable {
    /// For the snapshot: passphrases never reach the database.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: SRTSection.CodingKeys.self)
        try keys.encode(listen.description, forKey: .listen)
        if passphrase != nil { try keys.encode("****", forKey: .passphrase) }
        try keys.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
        try keys.encode(callers.map(\.name.name), forKey: .callers)
    }
}

extension ValueSyntax where Value == String {
    /// An SRT passphrase: 10 to 79 characters (libsrt's limits).
    public static var srtPassphrase: Self {
        Self("a passphrase") { (text: String) throws(ValueError) -> String in
            guard (10...79).contains(text.utf8.count) else {
                throw ValueError("an SRT passphrase has 10 to 79 characters, this one \(text.utf8.count)")
            }
            return text
        }
    }
}
