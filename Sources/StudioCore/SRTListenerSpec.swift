/// The SRT listener of network cameras (`network.srt`): one UDP port where many callers publish
/// MPEG-TS, each naming its camera by its stream id (plain `anna`, or the access-control form
/// `#!::r=anna,m=publish`). Unknown ids are refused at the handshake; a passphrase for all callers or
/// per caller (the caller's own wins).
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

    /// SRT's default latency.
    public static let defaultLatencyMilliseconds = 120
    /// Studio's buffer after SRT's own (which paces delivery already): room for the decoder's jitter.
    public static let bufferMilliseconds = 40
    /// How many callers may be connected or connecting at once (a flood is refused with a reason).
    public static let maximumCallers = 32

    public init(listen: ListenAddress, passphrase: String? = nil, latencyMilliseconds: Int = Self.defaultLatencyMilliseconds, callers: [Caller]) {
        self.listen = listen
        self.passphrase = passphrase
        self.latencyMilliseconds = latencyMilliseconds
        self.callers = callers
    }

    /// The passphrase a caller must give (its own, else the listener's; nil: none).
    public func passphrase(for name: CameraID) -> String? {
        callers.first { $0.name == name }?.passphrase ?? passphrase
    }

    /// The cameras the callers name: each waits for its caller (no URL to open; the listener hands it
    /// its connection).
    public var pulls: [NetworkPull] {
        callers.map {
            NetworkPull(name: $0.name, url: "srt://\(listen)?streamid=\($0.name.name)", latencyMilliseconds: Self.bufferMilliseconds,
                        waitsForPublisher: true, arrivesOnListener: true)
        }
    }

    /// The camera a stream id names: `anna`, or `#!::r=anna,m=publish` (the `r` key; `m` must be
    /// `publish` when given). Nil when it names none of the callers.
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
        return callers.first { $0.name.name == resource }?.name
    }
}
