/// Rectangles on a picture, in pixels and in fractions of its size.

/// A rectangle in pixels. Drawing clips it to the frame.
public struct PixelRect: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The part inside a `width` x `height` frame (possibly empty).
    public func clipped(width frameWidth: Int, height frameHeight: Int) -> PixelRect {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(frameWidth, maxX), y1 = min(frameHeight, maxY)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    /// Shrinks the rectangle by `dx`, `dy` pixels on each side.
    public func insetBy(dx: Int, dy: Int) -> PixelRect {
        PixelRect(x: x + dx, y: y + dy, width: max(0, width - 2 * dx), height: max(0, height - 2 * dy))
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// A rectangle in fractions of the frame (0...1 on both axes), independent of the frame's size:
/// how test-pattern regions are published so tests can find them in scaled or decoded pictures, and
/// how a crop or a scene layer's place is given.
public struct RelativeRect: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The pixels this covers in a `width` x `height` frame. Edges snap to even pixels so that 4:2:0
    /// chroma samples are wholly inside or outside.
    public func pixelRect(width frameWidth: Int, height frameHeight: Int) -> PixelRect {
        func even(_ value: Double) -> Int { Int((value / 2).rounded()) * 2 }
        let x0 = even(x * Double(frameWidth)), y0 = even(y * Double(frameHeight))
        let x1 = min(frameWidth, even((x + width) * Double(frameWidth)))
        let y1 = min(frameHeight, even((y + height) * Double(frameHeight)))
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    /// The whole picture.
    public static let whole = RelativeRect(x: 0, y: 0, width: 1, height: 1)

    /// Why this is not a non-empty rectangle inside the picture, in the operator's words; nil when it is.
    public var problem: String? {
        guard width > 0, height > 0 else { return "width and height must be above 0 (got \(width)x\(height))" }
        guard x >= 0, y >= 0, x + width <= 1.000_001, y + height <= 1.000_001 else {
            return "\(self) reaches outside the picture (0...1)"
        }
        return nil
    }

    /// The centre part of this rectangle, `fraction` of its width and height (for sampling away from
    /// edges that scaling and compression blur).
    public func centre(_ fraction: Double) -> RelativeRect {
        let w = width * fraction, h = height * fraction
        return RelativeRect(x: x + (width - w) / 2, y: y + (height - h) / 2, width: w, height: h)
    }
}

extension RelativeRect {
    public var description: String { "\(x),\(y) \(width)x\(height)" }
}
