/// What the switcher does to one camera's picture before composing it (`studio picture cam1 --mirror
/// --beauty 40`, a pin's `picture:`): applied in this order: crop, mirror/flip, rotation, colour
/// (brightness, contrast, saturation, gamma), beauty. The defaults change nothing.
public struct PictureSettings: Sendable, Hashable, Codable {
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

    /// Why these settings cannot be applied, in the operator's words; nil when they can.
    public var problem: String? {
        if let crop, let why = crop.problem { return "crop: \(why)" }
        if ![0, 90, 180, 270].contains(rotation) { return "rotate must be 0, 90, 180 or 270 (got \(rotation))" }
        if !(-1...1).contains(brightness) { return "brightness must be between -1 and 1 (got \(brightness))" }
        if !(0...4).contains(contrast) { return "contrast must be between 0 and 4 (got \(contrast))" }
        if !(0...4).contains(saturation) { return "saturation must be between 0 and 4 (got \(saturation))" }
        if !(0.1...10).contains(gamma) { return "gamma must be between 0.1 and 10 (got \(gamma))" }
        if !(0...100).contains(beauty) { return "beauty must be between 0 and 100 (got \(beauty))" }
        return nil
    }
}
