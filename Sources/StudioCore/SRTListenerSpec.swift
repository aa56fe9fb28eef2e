/// The SRT listener of network cameras (`network.srt`): one UDP port where many callers publish
/// MPEG-TS, each naming its camera by its stream id (plain `anna`, or the access-control form
/// `#!::r=anna,m=publish`). Unknown ids are refused at the handshake; a passphrase for all callers or
/// per caller (the caller's own wins).
///
/// Capture nodes (`nodes:`, other studio PCs running `studio serve --node NAME --send srt://...`) call
/// with the stream id `NAME/CAM`: each such stream becomes the camera `NAME/CAM` when it first
/// connects (a node's cameras are not listed here: the node decides them), lost when it goes and back
/// under the same name. A node's passphrase is its own, else the listener's.
public struct SRTListenerSpec: Sendable, Equatable {
    public struct Caller: Sendable, Equatable {
        public var name: CameraID
        /// Its own passphrase (10 to 79 characters); nil: the listener's.
        public var passphrase: String?
        public init(name: CameraID, passphrase: String? = nil) {
            self.name = name
            self.passphrase = passphrase
        }
    }

    public var listen: ListenAddress
    public var passphrase: String?
    /// SRT's own latency (its receive buffer: the time it has to retransmit), ms; about 4 times the
    /// round trip. Studio's jitter buffer on top is `bufferMilliseconds` (SRT already delivers on time).
    public var latencyMilliseconds: Int
    public var callers: [Caller]
    /// The capture nodes whose cameras are taken (`name` is the node's, `NAME/CAM` its cameras').
    public var nodes: [Node]

    /// A capture node: its name, its own passphrase (nil: the listener's), and its HTTP API with its
    /// token, where the switcher forwards its cameras' mode, controls and focus (nil: not forwarded).
    public struct Node: Sendable, Equatable {
        public var name: String
        public var passphrase: String?
        /// The node's HTTP API (`api: http://HOST:PORT`).
        public var api: ListenAddress?
        /// The node's `http.token`, sent as `Authorization: Bearer` to `api`.
        public var token: String?
        public init(name: String, passphrase: String? = nil, api: ListenAddress? = nil, token: String? = nil) {
            self.name = name
            self.passphrase = passphrase
            self.api = api
            self.token = token
        }
    }

    /// A node camera's node and its name there (`pc2/cam1`: node pc2, camera `cam1`); nil for any
    /// other name.
    public func nodeCamera(_ camera: CameraID) -> (node: Node, camera: CameraID)? {
        guard let node = node(of: camera), let separator = camera.name.firstIndex(of: Self.nodeSeparator) else { return nil }
        return (node, CameraID(String(camera.name[camera.name.index(after: separator)...])))
    }

    /// Between a node's name and its camera's in a stream id and in the camera's name: `pc2/cam1`.
    /// Plain names (`ValueSyntax.name`: letters, digits, `-`, `_`) never hold it, so a node camera's name
    /// cannot meet a local camera's.
    public static let nodeSeparator: Character = "/"

    /// SRT's default latency.
    public static let defaultLatencyMilliseconds = 120
    /// Studio's buffer after SRT's own (which paces delivery already): room for the decoder's jitter.
    public static let bufferMilliseconds = 40
    /// How many callers may be connected or connecting at once (a flood is refused with a reason).
    public static let maximumCallers = 32

    public init(listen: ListenAddress, passphrase: String? = nil, latencyMilliseconds: Int = Self.defaultLatencyMilliseconds, callers: [Caller],
                nodes: [Node] = []) {
        self.nodes = nodes
        self.listen = listen
        self.passphrase = passphrase
        self.latencyMilliseconds = latencyMilliseconds
        self.callers = callers
    }

    /// The passphrase a caller must give (its own, else the listener's; nil: none).
    public func passphrase(for name: CameraID) -> String? {
        if let node = node(of: name) { return node.passphrase ?? passphrase }
        return callers.first { $0.name == name }?.passphrase ?? passphrase
    }

    /// The listed node a node camera's name (`pc2/cam1`) belongs to; nil for any other name.
    public func node(of camera: CameraID) -> Node? {
        guard let separator = camera.name.firstIndex(of: Self.nodeSeparator) else { return nil }
        let node = camera.name[..<separator], rest = camera.name[camera.name.index(after: separator)...]
        guard Self.isPlainName(rest) else { return nil }
        return nodes.first { $0.name == node }
    }

    /// The pull of a camera that arrives on this listener: a caller's (made at start), or a node camera's
    /// (made when it first connects). It waits for its connection; the URL only describes it.
    public func listenerPull(_ camera: CameraID) -> NetworkPull {
        NetworkPull(name: camera, url: "srt://\(listen)?streamid=\(camera.name)", latencyMilliseconds: Self.bufferMilliseconds,
                    waitsForPublisher: true, arrivesOnListener: true)
    }

    /// The node camera whose pull has this identity (`network:pc2/cam1`), nil for any other.
    public func nodeCamera(forIdentity identity: String) -> CameraID? {
        let prefix = "network:"
        guard identity.hasPrefix(prefix) else { return nil }
        let name = CameraID(String(identity.dropFirst(prefix.count)))
        return node(of: name) != nil && listenerPull(name).identity == identity ? name : nil
    }

    /// Letters, digits, `-` and `_`, at most 32 (a camera's part of a node camera's name).
    static func isPlainName(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 32 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// The cameras the callers name: each waits for its caller (no URL to open; the listener hands it
    /// its connection).
    public var pulls: [NetworkPull] {
        callers.map { listenerPull($0.name) }
    }

    /// The camera a stream id names: `anna`, or `#!::r=anna,m=publish` (the `r` key; `m` must be
    /// `publish` when given), or a listed node's camera `pc2/cam1`. Nil when it names none of the
    /// callers and no camera of a listed node.
    public func caller(forStreamID streamID: String) -> CameraID? {
        var resource = streamID
        if streamID.hasPrefix("#!::") {
            var fields: [String: String] = [:]
            for pair in streamID.dropFirst(4).split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            guard let name = fields["r"], fields["m"].map({ $0 == "publish" }) ?? true else { return nil }
            resource = name
        }
        if node(of: CameraID(resource)) != nil { return CameraID(resource) }
        return callers.first { $0.name.name == resource }?.name
    }

    /// Why a stream id is refused, in words for the log and the history (it names a node or camera
    /// nobody listed); nil when `caller(forStreamID:)` takes it.
    public func refusal(ofStreamID streamID: String) -> String? {
        guard caller(forStreamID: streamID) == nil else { return nil }
        if streamID.isEmpty { return "no stream id" }
        if let separator = streamID.firstIndex(of: Self.nodeSeparator), !streamID.hasPrefix("#!::") {
            let node = streamID[..<separator]
            guard nodes.contains(where: { $0.name == node }) else { return "an unknown node \"\(node)\"" }
            return "a camera name that is not letters, digits, '-' or '_' (at most 32)"
        }
        return "an unknown stream id"
    }
}
