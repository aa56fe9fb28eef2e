import StudioCore

/// A colour in 8-bit Y'CbCr, BT.601 limited ("studio") range: Y 16...235, Cb/Cr 16...240, 128 is neutral.
/// That is how the pipeline's I420 is interpreted (libswscale's and x264's default), so the RGB
/// conversions here match what a decoder of the program shows.
public struct YUVColor: Hashable, Sendable, Codable, CustomStringConvertible {
    public var y: UInt8
    public var u: UInt8
    public var v: UInt8

    public init(y: UInt8, u: UInt8, v: UInt8) {
        self.y = y
        self.u = u
        self.v = v
    }

    /// From full-range 8-bit RGB (BT.601 matrix, limited-range output).
    public init(red: Int, green: Int, blue: Int) {
        let r = Double(red), g = Double(green), b = Double(blue)
        let y = 16 + 0.256788 * r + 0.504129 * g + 0.097906 * b
        let u = 128 - 0.148223 * r - 0.290993 * g + 0.439216 * b
        let v = 128 + 0.439216 * r - 0.367788 * g - 0.071427 * b
        self.init(y: Self.clamp(y), u: Self.clamp(u), v: Self.clamp(v))
    }

    /// Back to full-range RGB, each component clamped to 0...255.
    public var rgb: (red: Int, green: Int, blue: Int) {
        let y = 1.164383 * (Double(self.y) - 16), u = Double(self.u) - 128, v = Double(self.v) - 128
        func c(_ x: Double) -> Int { Int(max(0, min(255, x.rounded()))) }
        return (c(y + 1.596027 * v), c(y - 0.391762 * u - 0.812968 * v), c(y + 2.017232 * u))
    }

    /// Euclidean distance in RGB (0...441): how tests tell colours apart after scaling and compression.
    public func distance(to other: YUVColor) -> Double {
        let a = rgb, b = other.rgb
        let dr = Double(a.red - b.red), dg = Double(a.green - b.green), db = Double(a.blue - b.blue)
        return (dr * dr + dg * dg + db * db).squareRoot()
    }

    public var description: String {
        let c = rgb
        return "YUV(\(y),\(u),\(v)) RGB(\(c.red),\(c.green),\(c.blue))"
    }

    public static let black = YUVColor(y: 16, u: 128, v: 128)
    public static let white = YUVColor(y: 235, u: 128, v: 128)

    /// A neutral grey of the given full-range RGB level (0...255).
    public static func grey(_ level: Int) -> YUVColor { YUVColor(red: level, green: level, blue: level) }

    private static func clamp(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
}

extension YUVColor {
    /// An operator's sRGB colour (config, commands) as the pipeline's limited-range BT.601 Y'CbCr.
    public init(_ color: RGBColor) {
        self.init(red: Int(color.red), green: Int(color.green), blue: Int(color.blue))
    }
}
