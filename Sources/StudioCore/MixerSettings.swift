#if canImport(Glibc)
import Glibc
#endif

/// The audio mixer's settings: what an operator sets per input (gain, mute, pan, delay, follow, fade)
/// and on the master (gain, limiter ceiling). Each bound is declared once here, in `MixerLimit`, with
/// its unit and the operator's error message, so the config, the CLI and the HTTP API check the same.

/// One bounded number an operator sets on the mixer: its name, unit and range.
public struct MixerLimit: Sendable, Equatable {
    /// The setting's name as the operator writes it ("gain", "delay").
    public let name: String
    /// The unit of the value ("dB", "ms"; empty for a plain number).
    public let unit: String
    /// The allowed values; a lower bound of -inf (written `-inf`) is a fader all the way down.
    public let range: ClosedRange<Double>

    public init(name: String, unit: String, range: ClosedRange<Double>) {
        self.name = name
        self.unit = unit
        self.range = range
    }

    /// The range as the operator reads it: "-inf..+24 dB", "0..1000 ms".
    public var rangeText: String {
        let signed = range.lowerBound < 0
        return "\(Self.text(range.lowerBound, signed: signed))..\(Self.text(range.upperBound, signed: signed))" + (unit.isEmpty ? "" : " \(unit)")
    }

    /// `value` when it is within the range, else an error naming the setting, the value and the range.
    public func check(_ value: Double) throws(MixerSettingError) -> Double {
        guard !value.isNaN, range.contains(value) else { throw MixerSettingError(limit: self, value: value) }
        return value
    }

    static func text(_ value: Double, signed: Bool) -> String {
        if value == -.infinity { return "-inf" }
        let plain = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        return signed && value > 0 ? "+" + plain : plain
    }

    /// Per input gain: -inf (off) to +24 dB.
    public static let gain = MixerLimit(name: "gain", unit: "dB", range: -Double.infinity...24)
    /// Per input pan: -1 (left) to +1 (right), 0 centre.
    public static let pan = MixerLimit(name: "pan", unit: "", range: -1...1)
    /// Per input delay: 0 to 1000 ms (lines a microphone up with a camera that lags).
    public static let delay = MixerLimit(name: "delay", unit: "ms", range: 0...1000)
    /// Per input fade of mute and audio-follow-video: 0 to 5000 ms.
    public static let fade = MixerLimit(name: "fade", unit: "ms", range: 0...5000)
    /// Master gain: -inf to +24 dB.
    public static let masterGain = MixerLimit(name: "master gain", unit: "dB", range: -Double.infinity...24)
    /// The limiter's ceiling: -20 to 0 dBFS.
    public static let ceiling = MixerLimit(name: "limiter ceiling", unit: "dBFS", range: -20...0)
}

/// A mixer setting outside its range, in the operator's words:
/// "gain 30 dB is outside -inf..+24 dB".
public struct MixerSettingError: Error, Equatable, Sendable, CustomStringConvertible {
    public let limit: MixerLimit
    public let value: Double

    public init(limit: MixerLimit, value: Double) {
        self.limit = limit
        self.value = value
    }
    public var description: String {
        let shown = value.isNaN ? "nan" : MixerLimit.text(value, signed: false)
        return "\(limit.name) \(shown)\(limit.unit.isEmpty ? "" : " " + limit.unit) is outside \(limit.rangeText)"
    }
}

/// Where an input sits in the program's stereo picture.
public enum AudioPan: Sendable, Hashable, CustomStringConvertible {
    /// A balance: -1 only the left channel (at unity), 0 both unchanged, +1 only the right.
    case position(Double)
    /// The input's two channels summed ((L + R) / 2) to both sides: a mono microphone on one channel
    /// of an interface is heard in the middle.
    case monoToBoth

    public static let centre = AudioPan.position(0)

    /// Checked against `MixerLimit.pan`.
    public static func checked(_ position: Double) throws(MixerSettingError) -> AudioPan {
        .position(try MixerLimit.pan.check(position))
    }

    public var description: String {
        switch self {
        case .position(let value): MixerLimit.text(value, signed: true)
        case .monoToBoth: "mono"
        }
    }
}

/// One input's channel strip settings.
public struct MixerInputSettings: Sendable, Hashable {
    /// The fader, dB (-inf: off).
    public var gainDB: Double
    public var muted: Bool
    public var pan: AudioPan
    /// Delay in ms (exact to the sample at the program rate).
    public var delayMS: Double
    /// Audio-follow-video: the camera or scene name this input follows (up only while it is on air), or nil.
    public var follow: String?
    /// How long mute and follow fade, ms (never shorter than the mixer's declick ramp).
    public var fadeMS: Double

    /// The fade when none is set: 50 ms.
    public static let defaultFadeMS = 50.0

    /// Every value checked against its `MixerLimit`.
    public init(gainDB: Double = 0, muted: Bool = false, pan: AudioPan = .centre, delayMS: Double = 0,
                follow: String? = nil, fadeMS: Double = MixerInputSettings.defaultFadeMS) throws(MixerSettingError) {
        self.gainDB = try MixerLimit.gain.check(gainDB)
        self.muted = muted
        if case .position(let position) = pan { _ = try MixerLimit.pan.check(position) }
        self.pan = pan
        self.delayMS = try MixerLimit.delay.check(delayMS)
        let follow = follow?.trimmingSpaces
        self.follow = follow?.isEmpty == false ? follow : nil
        self.fadeMS = try MixerLimit.fade.check(fadeMS)
    }

    /// Unity gain, unmuted, centre, no delay, following nothing.
    public static let unity = try! MixerInputSettings()
}

/// The master section.
public struct MixerMasterSettings: Sendable, Hashable {
    public var gainDB: Double
    /// No program sample's magnitude exceeds this (dBFS).
    public var ceilingDBFS: Double

    /// The ceiling when none is set: -1 dBFS (room for the AAC encoder's overshoot).
    public static let defaultCeilingDBFS = -1.0

    public init(gainDB: Double = 0, ceilingDBFS: Double = MixerMasterSettings.defaultCeilingDBFS) throws(MixerSettingError) {
        self.gainDB = try MixerLimit.masterGain.check(gainDB)
        self.ceilingDBFS = try MixerLimit.ceiling.check(ceilingDBFS)
    }

    public static let standard = try! MixerMasterSettings()
}

/// A gain in dB as a linear factor (-inf: 0).
public func linearGain(decibels: Double) -> Double {
    decibels == -.infinity ? 0 : pow(10, decibels / 20)
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}
