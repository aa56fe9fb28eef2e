import StudioCore

/// Cameras that are not plugged into this PC (`network:`). Today `pull:`, a list of cameras pulled from
/// URLs (`NetworkPull`, `PullKind`): each a mapping of `name`, `url` and optional `latency_ms`.
public struct NetworkSettings: Sendable, Equatable, Codable {
    public var pulls: [NetworkPull] = []
    /// The most cameras one server pulls.
    public static let maximumPulls = 16

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case pulls = "pull"
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        if let list = try keys.decodeIfPresent(PullList.self, forKey: .pulls) { pulls = list.pulls }
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(pulls, forKey: .pulls)
    }
}

extension ValueSyntax where Value == String {
    /// A network camera's URL, of a kind in the pull-kind table (`PullKind`).
    public static var pullURL: Self {
        Self("a URL") { (url: String) throws(ValueError) -> String in
            if let problem = PullKind.problem(with: url) { throw ValueError(problem) }
            return url
        }
    }
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
