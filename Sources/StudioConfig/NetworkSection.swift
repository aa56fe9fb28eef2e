import StudioCore

/// Cameras that are not plugged into this PC (`network:`): `pull:`, a list of cameras pulled from URLs
/// (`NetworkPull`, `PullKind`), each a mapping of `name`, `url` and optional `latency_ms`; `rtmp:`,
/// phones publishing to an RTMP server (`RTMPIngestSettings`).
public struct NetworkSettings: Sendable, Equatable, Codable {
    public var pulls: [NetworkPull] = []
    public var rtmp: RTMPIngestSettings?
    /// The SRT listener and its callers (`srt:`).
    public var srt: SRTListenerSpec?

    /// Every network camera: the pulls, then the RTMP server's keys, then the SRT listener's callers.
    public var cameras: [NetworkPull] { pulls + (rtmp?.pulls ?? []) + (srt?.pulls ?? []) }
    /// The most cameras one server pulls.
    public static let maximumPulls = 16

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case pulls = "pull", rtmp, srt
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        if let list = try keys.decodeIfPresent(PullList.self, forKey: .pulls) { pulls = list.pulls }
        rtmp = try keys.decodeIfPresent(RTMPIngestSettings.self, forKey: .rtmp)
        srt = try keys.decodeIfPresent(SRTSection.self, forKey: .srt)?.spec
        var seen = Set<CameraID>()
        for camera in cameras where !seen.insert(camera.name).inserted {
            throw decoder.failure("\"\(camera.name.name)\" names two network cameras (pull, rtmp keys, srt callers); each needs its own",
                                  at: srt?.callers.contains { $0.name == camera.name } == true ? CodingKeys.srt : CodingKeys.rtmp)
        }
        if cameras.count > Self.maximumPulls {
            throw decoder.failure("at most \(Self.maximumPulls) network cameras (pulls and RTMP keys together)", at: CodingKeys.rtmp)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(pulls, forKey: .pulls)
        try keys.encodeIfPresent(rtmp, forKey: .rtmp)
        try keys.encodeIfPresent(srt, forKey: .srt)
    }
}

extension ValueSyntax where Value == String {
    /// A network camera's URL, of a kind in the pull-kind table (`PullKind`).
    public static var pullURL: Self { checked("a URL") { PullKind.problem(with: $0) } }
}

extension ValueSyntax where Value == Int {
    /// A jitter buffer's target: 0 to 10000 ms.
    public static var latencyMilliseconds: Self {
        Self("a number of milliseconds") { (text: String) throws(ValueError) -> Int in
            guard let value = Int(text), (0...10_000).contains(value) else {
                throw ValueError("expected milliseconds from 0 to 10000, got \(quoted(text))")
            }
            return value
        }
    }
}

extension ValueSyntax where Value == Int {
    /// A testing shift of a server's wall clock: -86400000 to 86400000 ms (a day either way).
    public static var clockShiftMilliseconds: Self {
        Self("a number of milliseconds") { (text: String) throws(ValueError) -> Int in
            guard let value = Int(text), (-86_400_000...86_400_000).contains(value) else {
                throw ValueError("expected milliseconds from -86400000 to 86400000, got \(quoted(text))")
            }
            return value
        }
    }
}

/// `network.pull`: names unique, at most `maximumPulls`.
struct PullList: Decodable {
    var pulls: [NetworkPull] = []

    init(from decoder: any Decoder) throws {
        var items = try decoder.unkeyedContainer()
        var nameLines: [String: Int] = [:]
        while !items.isAtEnd {
            let item = try items.superDecoder()
            let keys = try item.rewording({ "expected a mapping with name and url (and optional latency_ms), got \($0)" }) {
                try item.container(keyedBy: NetworkPull.CodingKeys.self)
            }
            guard let name = try keys.parse(.name, .name) else {
                throw item.failure("missing: the camera's name (for example ptz1)", at: NetworkPull.CodingKeys.name)
            }
            guard let url = try keys.parse(.url, .pullURL) else {
                throw item.failure("missing: the URL to pull (\(PullKind.schemeList))", at: NetworkPull.CodingKeys.url)
            }
            let latency = try keys.parse(.latencyMilliseconds, .latencyMilliseconds)
            let line = item.line(at: item.codingPath + [NetworkPull.CodingKeys.name])
            if let first = nameLines[name] {
                throw item.failure("the name \"\(name)\" is already used by the pull on line \(first)", at: NetworkPull.CodingKeys.name)
            }
            nameLines[name] = line
            guard pulls.count < NetworkSettings.maximumPulls else {
                throw item.failure("at most \(NetworkSettings.maximumPulls) cameras are pulled", at: NetworkPull.CodingKeys.name)
            }
            pulls.append(NetworkPull(name: CameraID(name), url: url, latencyMilliseconds: latency))
        }
    }
}

/// `network.rtmp`: phones publishing to an RTMP server (nginx-rtmp) that asks studio whether a stream
/// key may publish (`on_publish`, answered by `/api/v1/ingest/rtmp`) and pulls what it accepts from
/// `server`. Each key names its camera.
public struct RTMPIngestSettings: Sendable, Equatable, Encodable {
    /// Where the RTMP server serves what it receives (`rtmp://127.0.0.1:1935/live`): a camera's stream is
    /// `server/KEY`.
    public var server: String
    /// Camera name and its stream key, in the config's order.
    public var keys: [(camera: CameraID, key: String)]

    public init(server: String, keys: [(camera: CameraID, key: String)]) {
        self.server = server
        self.keys = keys
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.server == b.server && a.keys.map(\.camera) == b.keys.map(\.camera) && a.keys.map(\.key) == b.keys.map(\.key)
    }

    /// The cameras the keys name, each pulled from `server/KEY` while its publisher is there.
    public var pulls: [NetworkPull] {
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        return keys.map { NetworkPull(name: $0.camera, url: base + "/" + $0.key, waitsForPublisher: true) }
    }

    /// The camera a stream key names (compared in constant time), nil for an unknown key.
    public func camera(forKey key: String) -> CameraID? {
        var found: CameraID?
        for entry in keys where SecretComparison.equal(Array(entry.key.utf8), Array(key.utf8)) { found = entry.camera }
        return found
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case server, keys
    }

    /// For the snapshot: the keys never reach the database.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(server, forKey: .server)
        try container.encode(Dictionary(uniqueKeysWithValues: keys.map { ($0.camera.name, "****") }), forKey: .keys)
    }
}

extension RTMPIngestSettings: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.rewording({ "expected a mapping with server and keys, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        guard let server = try container.parse(.server, .text()) else {
            throw decoder.failure("missing: where the RTMP server serves what it receives (rtmp://127.0.0.1:1935/live)", at: CodingKeys.server)
        }
        guard PullKind.of(server) == .rtmp, PullKind.problem(with: server) == nil else {
            throw decoder.failure("expected an rtmp:// URL of the RTMP server's application, such as rtmp://127.0.0.1:1935/live, got \"\(SecretMasking.maskURL(server))\"", at: CodingKeys.server)
        }
        let entries = try container.decodeIfPresent(KeyMap.self, forKey: .keys)?.entries ?? []
        guard !entries.isEmpty else { throw decoder.failure("missing: the stream keys, camera name -> key ({phone1: 7c1e2a9b5d})", at: CodingKeys.keys) }
        self.init(server: server, keys: entries)
    }

    /// `keys:`: a mapping of camera name to stream key, in order; keys unique.
    struct KeyMap: Decodable {
        var entries: [(camera: CameraID, key: String)] = []
        init(from decoder: any Decoder) throws {
            let container = try decoder.rewording({ "expected a mapping of camera name to stream key, got \($0)" }) {
                try decoder.container(keyedBy: NodeKey.self)
            }
            for name in container.allKeys {
                _ = try decoder.check(at: name) { () throws(ValueError) in try ValueSyntax.name.parse(name.stringValue) }
                guard let key = try container.parse(name, .text()), key.count >= 8 else {
                    throw decoder.failure("a stream key of at least 8 characters, so it cannot be guessed", at: name)
                }
                if entries.contains(where: { $0.key == key }) { throw decoder.failure("this stream key is given to another camera too", at: name) }
                entries.append((CameraID(name.stringValue), key))
            }
        }
    }
}
