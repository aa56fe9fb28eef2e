import StudioCore

/// Where a camera's picture lands after crop, mirror/flip and rotation: the pixel rectangle cropped
/// (even offsets and sizes, so I420 chroma stays whole), and, for every output pixel, the source pixel
/// it shows, as an affine step in source bytes per output column and per output row.
struct PictureGeometry: Equatable {
    /// The cropped part of the source, in pixels (even x, y, width and height).
    var cropX: Int
    var cropY: Int
    var cropWidth: Int
    var cropHeight: Int
    var mirror: Bool
    var flip: Bool
    /// 0, 90, 180 or 270 degrees clockwise.
    var rotation: Int

    /// The output size: the crop's, with width and height swapped by a quarter turn.
    var outputWidth: Int { rotation == 90 || rotation == 270 ? cropHeight : cropWidth }
    var outputHeight: Int { rotation == 90 || rotation == 270 ? cropWidth : cropHeight }

    /// True when the output is the source itself.
    func isIdentity(sourceWidth: Int, sourceHeight: Int) -> Bool {
        cropX == 0 && cropY == 0 && cropWidth == sourceWidth && cropHeight == sourceHeight && !mirror && !flip && rotation == 0
    }

    /// The geometry `settings` ask of a `width` x `height` source. The crop's edges are rounded to
    /// even pixels (at least 2x2); without a crop an odd-sized source loses its last column or row
    /// only when something else (mirror, flip, rotation) must move pixels.
    init(settings: PictureSettings, sourceWidth width: Int, sourceHeight height: Int) {
        let rect = settings.crop ?? .whole
        func even(_ value: Double, _ limit: Int) -> Int { min(max(Int(value.rounded()) & ~1, 0), limit & ~1) }
        let left = even(rect.x * Double(width), width - 2), top = even(rect.y * Double(height), height - 2)
        let right = max(even((rect.x + rect.width) * Double(width), width), left + 2)
        let bottom = max(even((rect.y + rect.height) * Double(height), height), top + 2)
        if settings.crop == nil || (left == 0 && top == 0 && right == width & ~1 && bottom == height & ~1) {
            // The whole picture: keep odd sizes as they are when nothing moves.
            let keep = !settings.mirror && !settings.flip && settings.rotation == 0
            cropX = 0
            cropY = 0
            cropWidth = keep ? width : width & ~1
            cropHeight = keep ? height : height & ~1
        } else {
            cropX = left
            cropY = top
            cropWidth = right - left
            cropHeight = bottom - top
        }
        mirror = settings.mirror
        flip = settings.flip
        rotation = settings.rotation
    }

    /// How to walk one plane of the source for this geometry. `divisor` is the plane's subsampling (2
    /// for I420 chroma), `stride` its bytes per row: the output pixel (x, y) of the plane is the source
    /// byte at `start + x * column + y * row`.
    func walk(divisor: Int, stride: Int) -> (start: Int, column: Int, row: Int) {
        let width = cropWidth / divisor, height = cropHeight / divisor
        // (u, v): the pixel in the cropped, mirrored and flipped picture that output (x, y) shows,
        // as u = u0 + ux * x + uy * y and v = v0 + vx * x + vy * y.
        var (u0, ux, uy, v0, vx, vy): (Int, Int, Int, Int, Int, Int)
        switch rotation {
        case 90: (u0, ux, uy, v0, vx, vy) = (0, 0, 1, height - 1, -1, 0)
        case 180: (u0, ux, uy, v0, vx, vy) = (width - 1, -1, 0, height - 1, 0, -1)
        case 270: (u0, ux, uy, v0, vx, vy) = (width - 1, 0, -1, 0, 1, 0)
        default: (u0, ux, uy, v0, vx, vy) = (0, 1, 0, 0, 0, 1)
        }
        if mirror { (u0, ux, uy) = (width - 1 - u0, -ux, -uy) }
        if flip { (v0, vx, vy) = (height - 1 - v0, -vx, -vy) }
        let start = (cropY / divisor + v0) * stride + cropX / divisor + u0
        return (start, ux + vx * stride, uy + vy * stride)
    }

    /// Copies every plane of the I420 `source` into `output` (already `outputWidth` x `outputHeight`).
    func apply(_ source: VideoFrame, into output: VideoFrame) {
        for plane in 0..<3 {
            let divisor = plane == 0 ? 1 : 2
            let (start, column, row) = walk(divisor: divisor, stride: source.planes[plane].stride)
            let from = UnsafePointer(source.plane(plane).assumingMemoryBound(to: UInt8.self))
            let to = output.plane(plane).assumingMemoryBound(to: UInt8.self)
            let width = (output.width + divisor - 1) / divisor, height = (output.height + divisor - 1) / divisor
            Self.copy(from: from + start, column: column, row: row, into: to, stride: output.planes[plane].stride,
                      width: width, height: height)
        }
    }

    /// out[y][x] = from[x * column + y * row]: rows copied whole when they run forwards, reversed when
    /// backwards, and a quarter turn in 32x32 tiles so both sides stay in cache.
    static func copy(from: UnsafePointer<UInt8>, column: Int, row: Int, into to: UnsafeMutablePointer<UInt8>, stride: Int,
                     width: Int, height: Int) {
        if column == 1 {
            for y in 0..<height { (to + y * stride).update(from: from + y * row, count: width) }
        } else if column == -1 {
            for y in 0..<height {
                let source = from + y * row, target = to + y * stride
                for x in 0..<width { target[x] = source[-x] }
            }
        } else {
            let tile = 32
            for tileY in Swift.stride(from: 0, to: height, by: tile) {
                for tileX in Swift.stride(from: 0, to: width, by: tile) {
                    for y in tileY..<min(tileY + tile, height) {
                        let source = from + y * row, target = to + y * stride
                        for x in tileX..<min(tileX + tile, width) { target[x] = source[x * column] }
                    }
                }
            }
        }
    }
}
