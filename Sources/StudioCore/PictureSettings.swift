/// What the switcher does to one camera's picture before composing it (`studio picture cam1 --mirror
/// --beauty 40`, a pin's `picture:`): applied in this order: crop, mirror/flip, rotation, colour
/// (brightness, contrast, saturation, gamma), beauty. The defaults change nothing.
public struct PictureSettings: Sendable, Hashable {
    /// A rectangle of the camera's picture, in fractions of its width and height (0...1); nil: all of it.
    public var crop: RelativeRect?
    /// Left and right swapped (a selfie view).
    public var mirror = false
    /// Top and bottom swapped.
    public var flip = false
    /// Clockwise quarter turns: 0, 90, 180 or 270.
    public var rotation = 0
    /// Added to luma, -1...1 (a full-range shift at +-1).
    public var brightness = 0.0
    /// Luma contrast around mid grey, 0...4 (1 unchanged).
    public var contrast = 1.0
    /// Chroma gain, 0...4 (0 grey, 1 unchanged).
    public var saturation = 1.0
    /// Luma gamma, 0.1...10 (1 unchanged).
    public var gamma = 1.0
    /// Skin smoothing strength, 0...100 (0 off): an edge-preserving blur of skin tones.
    public var beauty = 0

    public init() {}

    /// True when applying these settings would leave every picture as it was.
    public var isIdentity: Bool { self == PictureSettings() }

    // The ranges, declared once: `problem`, the config, the control command and the CLI's help say them.
    public static let rotations = [0, 90, 180, 270]
    public static let brightnessRange = -1.0...1.0
    public static let contrastRange = 0.0...4.0
    public static let saturationRange = 0.0...4.0
    public static let gammaRange = 0.1...10.0
    public static let beautyRange = 0...100

    /// Why these settings cannot be applied, in the operator's words; nil when they can.
    public var problem: String? { Key.allCases.lazy.compactMap(problem).first }

    /// Why the setting `key` cannot be applied (`beauty must be between 0 and 100 (got 140)`); nil when it can.
    public func problem(_ key: Key) -> String? {
        func outside(_ value: Double, _ range: ClosedRange<Double>) -> String? {
            guard value.isFinite else { return "\(key) must be a number between \(Self.describe(range)) (got \(value))" }
            return range.contains(value) ? nil : "\(key) must be between \(Self.describe(range)) (got \(Self.number(value)))"
        }
        switch key {
        case .crop: return crop.flatMap(\.problem).map { "crop: \($0)" }
        case .mirror, .flip: return nil
        case .rotate:
            return Self.rotations.contains(rotation) ? nil : "rotate must be 0, 90, 180 or 270 (got \(rotation))"
        case .brightness: return outside(brightness, Self.brightnessRange)
        case .contrast: return outside(contrast, Self.contrastRange)
        case .saturation: return outside(saturation, Self.saturationRange)
        case .gamma: return outside(gamma, Self.gammaRange)
        case .beauty:
            let range = Self.beautyRange
            return range.contains(beauty) ? nil : "beauty must be between \(range.lowerBound) and \(range.upperBound) (got \(beauty))"
        }
    }
}

extension PictureSettings {
    /// The settings' names, declared once: the keys of a pin's `picture:` in the config, of the `picture`
    /// control command and its reply, `studio picture`'s options and `picture_changed`'s details.
    public enum Key: String, CaseIterable, Sendable, CodingKey, CustomStringConvertible {
        case crop, mirror, flip, rotate, brightness, contrast, saturation, gamma, beauty

        public var description: String { rawValue }

        /// What the setting does and what it takes, for help texts.
        public var help: String {
            switch self {
            case .crop: return "show only X,Y,W,H (fractions of the picture), or none"
            case .mirror: return "swap left and right"
            case .flip: return "swap top and bottom"
            case .rotate: return "turn clockwise: \(PictureSettings.rotations.map(String.init).joined(separator: ", ")) degrees"
            case .brightness: return "add to the brightness, \(describe(PictureSettings.brightnessRange)) (0: unchanged)"
            case .contrast: return "contrast, \(describe(PictureSettings.contrastRange)) (1: unchanged)"
            case .saturation: return "colour saturation, \(describe(PictureSettings.saturationRange)) (0: grey, 1: unchanged)"
            case .gamma: return "gamma, \(describe(PictureSettings.gammaRange)) (1: unchanged)"
            case .beauty:
                let range = PictureSettings.beautyRange
                return "skin smoothing, \(range.lowerBound) to \(range.upperBound) (0: off)"
            }
        }

        /// On/off settings (`--mirror`, `--no-mirror`); the others take a value.
        public var isSwitch: Bool { self == .mirror || self == .flip }

        private func describe(_ range: ClosedRange<Double>) -> String { PictureSettings.describe(range, joiner: "to") }
    }

    /// The setting `key` as text: `0.1,0,0.8,1` or `none` for the crop, `true`, `90`, `1.2`.
    public func text(_ key: Key) -> String {
        switch key {
        case .crop: return crop.map { [$0.x, $0.y, $0.width, $0.height].map(Self.number).joined(separator: ",") } ?? "none"
        case .mirror: return String(mirror)
        case .flip: return String(flip)
        case .rotate: return String(rotation)
        case .brightness: return Self.number(brightness)
        case .contrast: return Self.number(contrast)
        case .saturation: return Self.number(saturation)
        case .gamma: return Self.number(gamma)
        case .beauty: return String(beauty)
        }
    }

    /// The settings that differ from `old`, each as `old -> new` (`mirror: false -> true`), in key order.
    public func changes(from old: PictureSettings) -> [(key: Key, change: String)] {
        Key.allCases.compactMap { key in
            let (before, after) = (old.text(key), text(key))
            return before == after ? nil : (key, "\(before) -> \(after)")
        }
    }

    /// `-1 and 1`, `0.1 and 10`.
    static func describe(_ range: ClosedRange<Double>, joiner: String = "and") -> String {
        "\(number(range.lowerBound)) \(joiner) \(number(range.upperBound))"
    }

    /// `1`, `0.25`: whole numbers without a decimal point.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// Encoded with the `Key` names, every key present (`crop` null for none, as [x, y, width, height]
/// fractions otherwise); decoded the same way, a missing key keeping its default.
extension PictureSettings: Codable {
    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: Key.self)
        self.init()
        if let crop = try keys.decodeIfPresent([Double].self, forKey: .crop) {
            guard crop.count == 4 else {
                throw DecodingError.dataCorruptedError(forKey: .crop, in: keys, debugDescription: "expected [x, y, width, height]")
            }
            self.crop = RelativeRect(x: crop[0], y: crop[1], width: crop[2], height: crop[3])
        }
        mirror = try keys.decodeIfPresent(Bool.self, forKey: .mirror) ?? mirror
        flip = try keys.decodeIfPresent(Bool.self, forKey: .flip) ?? flip
        rotation = try keys.decodeIfPresent(Int.self, forKey: .rotate) ?? rotation
        brightness = try keys.decodeIfPresent(Double.self, forKey: .brightness) ?? brightness
        contrast = try keys.decodeIfPresent(Double.self, forKey: .contrast) ?? contrast
        saturation = try keys.decodeIfPresent(Double.self, forKey: .saturation) ?? saturation
        gamma = try keys.decodeIfPresent(Double.self, forKey: .gamma) ?? gamma
        beauty = try keys.decodeIfPresent(Int.self, forKey: .beauty) ?? beauty
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: Key.self)
        if let crop { try keys.encode([crop.x, crop.y, crop.width, crop.height], forKey: .crop) } else { try keys.encodeNil(forKey: .crop) }
        try keys.encode(mirror, forKey: .mirror)
        try keys.encode(flip, forKey: .flip)
        try keys.encode(rotation, forKey: .rotate)
        try keys.encode(brightness, forKey: .brightness)
        try keys.encode(contrast, forKey: .contrast)
        try keys.encode(saturation, forKey: .saturation)
        try keys.encode(gamma, forKey: .gamma)
        try keys.encode(beauty, forKey: .beauty)
    }
}
