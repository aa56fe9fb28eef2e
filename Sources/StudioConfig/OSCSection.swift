import StudioCore

/// `osc:` — OSC in and out over UDP (`OSCSettings`, docs/control-surfaces.md).
///
/// ```yaml
/// osc:
///   listen: 127.0.0.1:9000      # where OSC comes in (off without it)
///   feedback:                   # sent the tally and levels always (others subscribe)
///     - 192.0.2.30:9001
/// ```
struct OSCSection: Decodable {
    var settings = OSCSettings()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case listen, feedback
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with listen (and feedback), got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        guard let listen = try keys.parse(.listen, .listenAddress) else {
            throw decoder.failure("missing: the address and port OSC comes in on (127.0.0.1:9000)", at: CodingKeys.listen)
        }
        settings.listen = listen
        let feedback = try keys.parseList(.feedback, .listenAddress) ?? []
        for (offset, address) in feedback.enumerated() {
            guard address.port != 0 else { throw decoder.failure("feedback \(address): the port must not be 0", at: CodingKeys.feedback) }
            if feedback[..<offset].contains(address) { throw decoder.failure("feedback \(address) is listed twice", at: CodingKeys.feedback) }
        }
        settings.feedback = feedback
    }
}

extension OSCSettings: Encodable {
    /// For the snapshot.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: OSCSection.CodingKeys.self)
        try keys.encodeIfPresent(listen?.description, forKey: .listen)
        try keys.encode(feedback.map(\.description), forKey: .feedback)
    }
}
