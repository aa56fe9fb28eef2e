/// How a text layer (a title, a name caption) looks: the font file, its pixel size, the colour of the
/// letters and an optional box behind them. The Graphics module renders it with FreeType; the config and
/// the control commands only carry it. The defaults are white DejaVu Sans at 48 px without a box.
public struct TextStyle: Sendable, Hashable, Codable {
    /// DejaVu Sans from Debian's fonts-dejavu-core (scripts/setup.sh installs it).
    public static let regularFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    /// DejaVu Sans Bold, from the same package.
    public static let boldFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    /// Font sizes in pixels (the em height) that can be rendered.
    public static let sizes: ClosedRange<Int> = 4...1024
    /// Box paddings in pixels.
    public static let paddings: ClosedRange<Int> = 0...1024

    /// Path of a TrueType or OpenType font file.
    public var font: String
    /// Pixel size (the em height), within `sizes`.
    public var size: Int
    /// The letters' colour.
    public var color: RGBColor
    /// The colour of a box behind the text; nil: no box, only the letters cover what is below.
    public var box: RGBColor?
    /// The box's opacity, 0 (invisible) to 1 (solid).
    public var boxOpacity: Double
    /// Pixels between the text and each edge of the picture (the box's margin around the letters).
    public var padding: Int
    /// How lines of different widths line up.
    public var alignment: TextAlignment

    public init(font: String = TextStyle.regularFont, size: Int = 48, color: RGBColor = .white, box: RGBColor? = nil,
                boxOpacity: Double = 1, padding: Int = 0, alignment: TextAlignment = .left) {
        self.font = font
        self.size = size
        self.color = color
        self.box = box
        self.boxOpacity = boxOpacity
        self.padding = padding
        self.alignment = alignment
    }

    /// Why text cannot be rendered in this style, in the operator's words; nil when it can. (Whether
    /// the font file loads is known only when it is rendered.)
    public var problem: String? {
        if font.isEmpty { return "font must name a font file" }
        if !Self.sizes.contains(size) {
            return "text size must be between \(Self.sizes.lowerBound) and \(Self.sizes.upperBound) pixels (got \(size))"
        }
        if !(0...1).contains(boxOpacity) { return "box opacity must be between 0 and 1 (got \(boxOpacity))" }
        if !Self.paddings.contains(padding) {
            return "padding must be between \(Self.paddings.lowerBound) and \(Self.paddings.upperBound) pixels (got \(padding))"
        }
        return nil
    }
}

/// How the lines of a text line up with each other.
public enum TextAlignment: String, Sendable, Hashable, Codable, CaseIterable {
    case left, center, right
}
