import StudioCore

/// The mixer's settings in the config (`audio: master:` and `audio: inputs:`), each value checked
/// against its `MixerLimit` (the same bounds and messages as `studio audio`).
///
/// ```yaml
/// audio:
///   source: pipewire:all
///   master: { gain: 0, ceiling: -1 }
///   inputs:
///     - match: alsa_input.usb-Rode_NT-USB   # an identity (or part of it, or of the device's name)
///       name: mic1                          # the stable name it gets
///       gain: -6
///       mute: false
///       pan: 0          # -1..+1, or mono
///       delay: 40       # ms
///       fade: 50        # ms (mute and follow)
///       follow: cam1    # audio-follow-video
/// ```

/// One input of the mixer as the config names and sets it.
public struct AudioInputPin: Sendable, Equatable, Encodable {
    /// Matched against a PipeWire Audio/Source's identity: equal to it, or contained in it or in its
    /// name (as camera pins). nil: the settings are for the input of that name, however it was named.
    public var match: String?
    public var name: String
    public var settings: MixerInputSettings

    public init(match: String?, name: String, settings: MixerInputSettings = .unity) {
        self.match = match
        self.name = name
        self.settings = settings
    }

    /// Whether this pin is for a source with `identity` and `displayName`.
    public func matches(identity: String, displayName: String) -> Bool {
        guard let match, !match.isEmpty else { return false }
        return identity == match || identity.contains(match) || displayName.contains(match)
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case match, name, gain, mute, pan, delay, fade, follow
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encodeIfPresent(match, forKey: .match)
        try keys.encode(name, forKey: .name)
        if settings.gainDB == -.infinity { try keys.encode("-inf", forKey: .gain) } else { try keys.encode(settings.gainDB, forKey: .gain) }
        try keys.encode(settings.muted, forKey: .mute)
        try keys.encode(settings.pan.description, forKey: .pan)
        try keys.encode(settings.delayMS, forKey: .delay)
        try keys.encode(settings.fadeMS, forKey: .fade)
        try keys.encodeIfPresent(settings.follow, forKey: .follow)
    }
}

extension AudioInputPin: Decodable {
    public init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with name (and match, gain, mute, pan, delay, fade, follow), got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        guard let name = try keys.parse(.name, .text()) else {
            throw decoder.failure("missing: the input's name (for example mic1)", at: CodingKeys.name)
        }
        _ = try decoder.check(at: CodingKeys.name) { () throws(ValueError) in try ValueSyntax.name.parse(name) }
        if name == "master" { throw decoder.failure("master is the master's name: set it under audio: master:", at: CodingKeys.name) }
        let match = try keys.parse(.match, .text())
        var settings = MixerInputSettings.unity
        try keys.update(&settings.gainDB, .gain, .mixer(.gain))
        try keys.update(&settings.muted, .mute, .boolean)
        try keys.update(&settings.pan, .pan, .pan)
        try keys.update(&settings.delayMS, .delay, .mixer(.delay))
        try keys.update(&settings.fadeMS, .fade, .mixer(.fade))
        if let follow = try keys.parse(.follow, .text()) { settings.follow = follow == "none" || follow.isEmpty ? nil : follow }
        self.init(match: match, name: name, settings: settings)
    }
}

extension MixerMasterSettings: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case gain, ceiling
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with gain and ceiling, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        self = .standard
        try keys.update(&gainDB, .gain, .mixer(.masterGain))
        try keys.update(&ceilingDBFS, .ceiling, .mixer(.ceiling))
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        if gainDB == -.infinity { try keys.encode("-inf", forKey: .gain) } else { try keys.encode(gainDB, forKey: .gain) }
        try keys.encode(ceilingDBFS, forKey: .ceiling)
    }
}

/// `audio.inputs:` — matches and names are unique.
struct AudioInputList: Decodable {
    var pins: [AudioInputPin] = []

    init(from decoder: any Decoder) throws {
        var items = try decoder.unkeyedContainer()
        var matches = FirstGiven(), names = FirstGiven()
        while !items.isAtEnd {
            let item = try items.superDecoder()
            let pin = try AudioInputPin(from: item)
            if let match = pin.match {
                try matches.note(match, at: AudioInputPin.CodingKeys.match, of: item) { "\"\(match)\" is already matched on line \($0)" }
            }
            try names.note(pin.name, at: AudioInputPin.CodingKeys.name, of: item) { "the name \"\(pin.name)\" is already given on line \($0)" }
            pins.append(pin)
        }
    }
}

extension ValueSyntax where Value == Double {
    /// A mixer value within `limit` (`-inf` where its range starts there): its error is the mixer's
    /// own ("gain 30 dB is outside -inf..+24 dB").
    public static func mixer(_ limit: MixerLimit) -> Self {
        Self("a number (\(limit.rangeText))") { (text: String) throws(ValueError) -> Double in
            let lowered = text.lowercased()
            let value: Double
            if lowered == "-inf" || lowered == "off", limit.range.lowerBound == -.infinity { value = -.infinity } else {
                guard let number = Double(text), number.isFinite else { throw ValueError("expected a number (\(limit.rangeText)), got \(quoted(text))") }
                value = number
            }
            do throws(MixerSettingError) { return try limit.check(value) } catch { throw ValueError(error.description) }
        }
    }
}

extension ValueSyntax where Value == AudioPan {
    /// -1..+1 (left .. right), or `mono`.
    public static var pan: Self {
        Self("a pan (-1..+1 or mono)") { (text: String) throws(ValueError) -> AudioPan in
            if text.lowercased() == "mono" { return .monoToBoth }
            guard let number = Double(text), number.isFinite else { throw ValueError("expected a pan from -1 to +1 or mono, got \(quoted(text))") }
            do throws(MixerSettingError) { return try AudioPan.checked(number) } catch { throw ValueError(error.description) }
        }
    }
}

extension AudioSettings {
    /// The pin for a discovered source, or nil.
    public func pin(forIdentity identity: String, displayName: String) -> AudioInputPin? {
        inputs.first { $0.matches(identity: identity, displayName: displayName) }
    }

    /// Each named input's settings from its pin.
    public var inputSettings: [String: MixerInputSettings] {
        Dictionary(inputs.map { ($0.name, $0.settings) }, uniquingKeysWith: { first, _ in first })
    }
}
