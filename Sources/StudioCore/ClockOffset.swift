import Foundation

/// One round trip of a capture node's clock measurement against its switcher (NTP-style): the node's
/// wall clock when the request went (`sent`) and when the answer came (`received`), and the switcher's
/// wall clock in the answer (`server`), all in microseconds. The switcher read its clock somewhere in
/// between; taking it at the midpoint, the error is at most half the round trip.
public struct ClockSample: Sendable, Equatable {
    public var sent: Int64
    public var server: Int64
    public var received: Int64

    public init(sent: Int64, server: Int64, received: Int64) {
        self.sent = sent
        self.server = server
        self.received = received
    }

    /// What to add to the node's clock to read the switcher's.
    public var offset: Int64 { server - (sent + (received - sent) / 2) }
    public var roundTrip: Int64 { received - sent }
}

/// The node's clock offset against its switcher: the sample with the shortest round trip among the
/// last `window` (a slow answer, queued somewhere on the way, says least about the offset). A sample
/// whose answer came before its request (the node's clock stepped) is refused.
public struct ClockOffsetEstimator: Sendable {
    public let window: Int
    private(set) var samples: [ClockSample] = []

    public init(window: Int = 16) { self.window = max(1, window) }

    /// Takes a round trip; false (and nothing kept) when its times make no sense.
    @discardableResult
    public mutating func add(_ sample: ClockSample) -> Bool {
        guard sample.roundTrip >= 0 else { return false }
        samples.append(sample)
        if samples.count > window { samples.removeFirst(samples.count - window) }
        return true
    }

    /// The best sample of the window; nil before the first.
    public var best: ClockSample? { samples.min { $0.roundTrip < $1.roundTrip } }

    /// The estimate now, as reported (`studio status`, `studio cameras` on a node).
    public var estimate: ClockOffsetStatus? {
        best.map { ClockOffsetStatus(measured: true, offsetMilliseconds: Double($0.offset) / 1000, roundTripMilliseconds: Double($0.roundTrip) / 1000) }
    }
}

/// A capture node's clock against its switcher's (`switcher_clock` in its `studio status` and `studio
/// cameras`): `offset_ms` is what the node adds to its own clock to read the switcher's (a node whose
/// clock runs 3 s ahead: -3000), `rtt_ms` the round trip of the sample it rests on; both null until measured.
public struct ClockOffsetStatus: Sendable, Codable, Equatable {
    public var measured: Bool
    public var offsetMilliseconds: Double?
    public var roundTripMilliseconds: Double?

    enum CodingKeys: String, CodingKey {
        case measured
        case offsetMilliseconds = "offset_ms"
        case roundTripMilliseconds = "rtt_ms"
    }

    public init(measured: Bool, offsetMilliseconds: Double? = nil, roundTripMilliseconds: Double? = nil) {
        self.measured = measured
        self.offsetMilliseconds = offsetMilliseconds
        self.roundTripMilliseconds = roundTripMilliseconds
    }

    public static let unmeasured = ClockOffsetStatus(measured: false)

    /// One line for `studio status` and `studio cameras` on a node.
    public var summary: String {
        guard measured, let offset = offsetMilliseconds else { return "clock against the switcher: not measured yet" }
        return "clock against the switcher: offset " + String(format: "%+.1f ms (round trip %.1f ms)", offset, roundTripMilliseconds ?? 0)
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(measured, forKey: .measured)
        try keys.encode(offsetMilliseconds, forKey: .offsetMilliseconds)
        try keys.encode(roundTripMilliseconds, forKey: .roundTripMilliseconds)
    }
}
