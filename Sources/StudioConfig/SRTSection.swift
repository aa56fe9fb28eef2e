import StudioCore

/// `network.srt`: the SRT listener (`SRTListenerSpec`), a mapping of `listen` (ADDR:PORT),
/// `passphrase` (optional, 10 to 79 characters), `latency_ms` (SRT's own, default 120), `callers`
/// (names, or mappings of `name` and `passphrase`) and `nodes` (capture nodes, written the same way,
/// a mapping also with `api` and `token`: the node's HTTP API, where its cameras' mode, controls and
/// focus are forwarded; at least one of the two lists).
struct SRTSection: Decodable {
    var spec: SRTListenerSpec

    enum CodingKeys: String, CodingKey, CaseIterable {
        case listen, passphrase, latencyMilliseconds = "latency_ms", callers, nodes
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
        let callers = try keys.decodeIfPresent(NameList<SRTListenerSpec.Caller>.self, forKey: .callers)?.entries ?? []
        let nodes = try keys.decodeIfPresent(NameList<SRTListenerSpec.Node>.self, forKey: .nodes)?.entries ?? []
        guard !callers.isEmpty || !nodes.isEmpty else {
            throw decoder.failure("missing: the callers, by the stream id each publishes with ([anna, ben]), or the capture nodes ([pc2])",
                                  at: CodingKeys.callers)
        }
        guard callers.count <= SRTListenerSpec.maximumCallers else {
            throw decoder.failure("at most \(SRTListenerSpec.maximumCallers) callers", at: CodingKeys.callers)
        }
        spec = SRTListenerSpec(listen: listen, passphrase: passphrase, latencyMilliseconds: latency, callers: callers, nodes: nodes)
    }

    /// `callers:` and `nodes:`: each entry a name, or a mapping (`ListedEntry`).
    struct NameList<Entry: ListedEntry>: Decodable {
        var entries: [Entry] = []
        init(from decoder: any Decoder) throws {
            var items = try decoder.unkeyedContainer()
            while !items.isAtEnd {
                let item = try items.superDecoder()
                let entry: Entry
                if let name = try? item.singleValueContainer().decode(String.self) {
                    do { _ = try ValueSyntax.name.parse(name) } catch { throw item.failure("\(error)") }
                    entry = Entry(name: name)
                } else {
                    entry = try Entry(from: item)
                }
                if entries.contains(where: { $0.listedName == entry.listedName }) {
                    throw item.failure("\"\(entry.listedName)\" is listed twice")
                }
                entries.append(entry)
            }
        }
    }

    enum CallerKeys: String, CodingKey, CaseIterable {
        case name, passphrase
    }

    enum NodeKeys: String, CodingKey, CaseIterable {
        case name, passphrase, api, token
    }
}

/// An entry of `callers:` or `nodes:`: a plain name, or a mapping of its keys.
protocol ListedEntry: Decodable {
    init(name: String)
    var listedName: String { get }
}

extension SRTListenerSpec.Caller: ListedEntry {
    init(name: String) { self.init(name: CameraID(name)) }
    var listedName: String { name.name }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a name or a mapping with name (and passphrase), got \($0)" }) {
            try decoder.container(keyedBy: SRTSection.CallerKeys.self)
        }
        guard let name = try keys.parse(.name, .name) else { throw decoder.failure("missing: the name", at: SRTSection.CallerKeys.name) }
        self.init(name: CameraID(name), passphrase: try keys.parse(.passphrase, .srtPassphrase))
    }
}

extension SRTListenerSpec.Node: ListedEntry {
    init(name: String) { self.init(name: name, passphrase: nil) }
    var listedName: String { name }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a name or a mapping with name (and passphrase, api, token), got \($0)" }) {
            try decoder.container(keyedBy: SRTSection.NodeKeys.self)
        }
        guard let name = try keys.parse(.name, .name) else { throw decoder.failure("missing: the name", at: SRTSection.NodeKeys.name) }
        self.init(name: name, passphrase: try keys.parse(.passphrase, .srtPassphrase), api: try keys.parse(.api, .nodeHTTP),
                  token: try keys.parse(.token, .httpToken))
        if token != nil, api == nil {
            throw decoder.failure("a token without api: it is the node's http.token for its api (http://HOST:PORT); give both or neither",
                                  at: SRTSection.NodeKeys.token)
        }
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
        if !nodes.isEmpty { try keys.encode(nodes.map(NodeSnapshot.init), forKey: .nodes) }
    }
}

/// A node in the snapshot: its name alone, or with its api (`****` for a token; never a passphrase).
private struct NodeSnapshot: Encodable {
    let node: SRTListenerSpec.Node
    init(_ node: SRTListenerSpec.Node) { self.node = node }
    func encode(to encoder: any Encoder) throws {
        guard let api = node.api else {
            var single = encoder.singleValueContainer()
            return try single.encode(node.name)
        }
        var keys = encoder.container(keyedBy: SRTSection.NodeKeys.self)
        try keys.encode(node.name, forKey: .name)
        try keys.encode("http://\(api)", forKey: .api)
        if node.token != nil { try keys.encode("****", forKey: .token) }
    }
}

extension ValueSyntax where Value == ListenAddress {
    /// A node's HTTP API, where the switcher forwards its cameras' commands: `http://HOST:PORT`.
    public static var nodeHTTP: Self {
        Self("a URL") { (url: String) throws(ValueError) -> ListenAddress in
            switch NodeSettings.httpAPIAddress(url, of: "the node", asks: "/api/v1/camera/...") {
            case .success(let address): return address
            case .failure(let error): throw ValueError(error.description)
            }
        }
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
