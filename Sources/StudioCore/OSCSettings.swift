/// OSC in and out (`osc:` in the config; docs/control-surfaces.md): where the server listens for OSC
/// over UDP, and where it sends tally and levels back. Off by default (`listen` nil).
public struct OSCSettings: Sendable, Equatable {
    /// The UDP address and port it listens on; nil: OSC off.
    public var listen: ListenAddress?
    /// Addresses sent the feedback always, besides those that subscribe (`/studio/subscribe`).
    public var feedback: [ListenAddress] = []

    /// Peers subscribed by `/studio/subscribe` at most at once (the config's `feedback` come on top).
    public static let maximumSubscribers = 32
    /// A subscription ends this long after its last `/studio/subscribe`, unless renewed.
    public static let subscriptionSeconds = 60.0
    /// Audio levels sent to subscribers at most this often per second.
    public static let levelsPerSecond = 10.0
    /// The whole tally is sent again this often besides on every change (a surface that restarted, a lost datagram).
    public static let tallyResendSeconds = 5.0

    public init(listen: ListenAddress? = nil, feedback: [ListenAddress] = []) {
        self.listen = listen
        self.feedback = feedback
    }

    public var isEmpty: Bool { listen == nil }
}
