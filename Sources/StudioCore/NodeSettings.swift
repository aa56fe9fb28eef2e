import Foundation

/// The capture-node role (`node:` in the config, `serve --node NAME --send srt://SWITCHER:PORT`): this
/// server runs its cameras as always (ISO files, its own history) and also sends each camera, encoded
/// on its own, to a switcher's SRT listener as a caller, stream id `NAME/CAM` (`SRTListenerSpec.nodes`
/// on the switcher takes it as camera `NAME/CAM`).
public struct NodeSettings: Sendable, Equatable {
    /// The node's name, as the switcher's `network.srt.nodes` lists it.
    public var name: String
    /// The switcher's SRT listener: `srt://HOST:PORT` (no stream id: each camera's is set here).
    public var send: String
    /// The listener's passphrase for this node (10 to 79 characters), if it asks for one (else `send`'s
    /// own `?passphrase=`, if it has one).
    public var passphrase: String?
    /// Each camera's bit rate on the network.
    public var bitRate: Int
    /// The size each camera is sent at (scaled); nil: its own.
    public var width: Int?
    public var height: Int?
    /// The switcher's HTTP API (`http://HOST:PORT`, an IP address) whose tally this node's cameras
    /// show (`SwitcherTallyClient`); nil: no switcher tally.
    public var tallyFrom: ListenAddress?
    /// The switcher's HTTP token for `tallyFrom`, when its API asks for one.
    public var tallyToken: String?
    /// Cameras sent otherwise than the above (`video.cameras`), by camera name.
    public var cameras: [String: CameraVideo] = [:]

    /// A camera's own bit rate or size on the network, over the node's (`video.cameras`).
    public struct CameraVideo: Sendable, Equatable {
        public var bitRate: Int?
        public var width: Int?
        public var height: Int?
        public init(bitRate: Int? = nil, width: Int? = nil, height: Int? = nil) {
            self.bitRate = bitRate
            self.width = width
            self.height = height
        }
    }

    /// Camera `camera`'s bit rate and size on the network: its own where `cameras` gives them, else the node's.
    public func video(of camera: CameraID) -> (bitRate: Int, size: (width: Int, height: Int)?) {
        let own = cameras[camera.name]
        let size = own?.width.flatMap { width in own?.height.map { (width, $0) } } ?? width.flatMap { width in height.map { (width, $0) } }
        return (own?.bitRate ?? bitRate, size)
    }

    /// 2.5 Mbit/s: a 720p30 camera at x264's `veryfast` looks clean enough to cut to.
    public static let defaultBitRate = 2_500_000
    /// The x264 preset of the senders: one encoder per camera on a capture PC's few cores.
    public static let preset = "veryfast"

    public init(name: String, send: String, passphrase: String? = nil, bitRate: Int = Self.defaultBitRate, width: Int? = nil, height: Int? = nil) {
        self.name = name
        self.send = send
        self.passphrase = passphrase
        self.bitRate = bitRate
        self.width = width
        self.height = height
    }

    /// The stream id camera `camera` is sent with: `pc2/cam1`.
    public func streamID(of camera: CameraID) -> String { "\(name)\(SRTListenerSpec.nodeSeparator)\(camera.name)" }

    /// Where camera `camera` is sent: `send` with its stream id and the passphrase (percent-encoded:
    /// libavformat's SRT protocol decodes both), as an SRT output (`OutputKind.srt`) opens it.
    public func url(of camera: CameraID) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_.~/")
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        var url = send + (send.contains("?") ? "&" : "?") + "streamid=" + encoded(streamID(of: camera))
        if let passphrase { url += "&passphrase=" + encoded(passphrase) }
        return url
    }

    /// The address of `tally_from`'s URL: `http://HOST:PORT` (IPv4, `localhost` or `[IPv6]`, an
    /// optional trailing `/`); the reason in the operator's words otherwise.
    public static func tallyAddress(_ url: String) -> Result<ListenAddress, ListenAddressError> {
        httpAPIAddress(url, of: "the switcher", asks: "/api/v1/events")
    }

    /// The address of another studio's HTTP API given as `http://HOST:PORT` (`whose`: "the switcher",
    /// "the node"; `asks`: a path it asks for itself, named when a URL gives one).
    public static func httpAPIAddress(_ url: String, of whose: String, asks path: String) -> Result<ListenAddress, ListenAddressError> {
        let scheme = "http://"
        guard url.lowercased().hasPrefix(scheme) else {
            let reason = url.lowercased().hasPrefix("https://") ? " (https is not supported yet: use \(whose)'s plain http listener)" : ""
            return .failure(ListenAddressError("expected \(whose)'s HTTP API, http://HOST:PORT, got \"\(url)\"\(reason)"))
        }
        var rest = url.dropFirst(scheme.count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("/") || rest.contains("?") {
            return .failure(ListenAddressError("expected http://HOST:PORT with no path, got \"\(url)\" (studio asks for \(path) itself)"))
        }
        return ListenAddress.parse(String(rest))
    }

    /// Why `url` cannot be where a node sends (not an SRT caller URL, or one that sets a stream id of
    /// its own); nil when it can.
    public static func problem(withSend url: String) -> String? {
        guard OutputKind.of(url) == .srt else { return "expected the switcher's SRT listener, srt://HOST:PORT" }
        if let problem = OutputKind.srt.problem(with: url) { return problem }
        let query = url.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        for item in query.split(separator: "&") where item.lowercased().hasPrefix("streamid=") {
            return "the node sets each camera's stream id (NAME/CAM): leave streamid out of the URL"
        }
        return nil
    }
}
