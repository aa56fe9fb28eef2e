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
