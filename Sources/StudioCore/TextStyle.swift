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

/// An sRGB colour with 8 bits per component, as an operator writes it: `#RRGGBB` or one of `names`.
public struct RGBColor: Sendable, Hashable, Codable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Parses `#RRGGBB` (the `#` optional, hex digits in either case) or a name from `names`.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if let named = Self.names.first(where: { $0.name == lowered }) {
            self = named.color
            return
        }
        let digits = lowered.hasPrefix("#") ? lowered.dropFirst() : Substring(lowered)
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else { return nil }
        self.init(red: UInt8(value >> 16), green: UInt8(truncatingIfNeeded: value >> 8), blue: UInt8(truncatingIfNeeded: value))
    }

    public static let black = RGBColor(red: 0, green: 0, blue: 0)
    public static let white = RGBColor(red: 255, green: 255, blue: 255)

    /// The colour names `init(parsing:)` accepts, in the order help texts list them.
    public static let names: [(name: String, color: RGBColor)] = [
        ("black", .black), ("white", .white), ("grey", RGBColor(red: 128, green: 128, blue: 128)),
        ("red", RGBColor(red: 255, green: 0, blue: 0)), ("green", RGBColor(red: 0, green: 255, blue: 0)),
        ("blue", RGBColor(red: 0, green: 0, blue: 255)), ("yellow", RGBColor(red: 255, green: 255, blue: 0)),
        ("cyan", RGBColor(red: 0, green: 255, blue: 255)), ("magenta", RGBColor(red: 255, green: 0, blue: 255)),
    ]

    /// `#rrggbb`.
    public var description: String {
        "#" + [red, green, blue].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Encoded as the operator writes it: one string, `#rrggbb` (decoding also takes the names).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let color = RGBColor(parsing: text) else {
            let names = Self.names.map(\.name).joined(separator: ", ")
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a colour: use #RRGGBB or one of \(names)")
        }
        self = color
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
