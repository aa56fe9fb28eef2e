import FrameDrawing
import StudioCore

extension KeyedPicture {
    /// A picture of one colour: a solid-colour layer, a box, a dip colour. `opacity` 1 (or more) gives
    /// no alpha plane (the compositor copies it); below 1 every pixel has the same alpha.
    public static func solid(color: YUVColor, width: Int, height: Int, opacity: Double = 1) throws(GraphicsError) -> KeyedPicture {
        guard GraphicsLimits.allows(width: width, height: height) else { throw .badSize(width: width, height: height) }
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        frame.fill(with: color)
        let level = UInt8((max(0, min(1, opacity)) * 255).rounded())
        return KeyedPicture(picture: frame, alpha: level == 255 ? nil : [UInt8](repeating: level, count: width * height))
    }

    /// The alpha of the pixel at (`x`, `y`): 255 where the picture has no alpha plane.
    public func alpha(x: Int, y: Int) -> UInt8 { alpha?[y * width + x] ?? 255 }
}
