import Graphics
import StudioCore

/// An image or text layer's picture, made once when the scenes (or overlays) are set, on the caller's
/// thread: already at the size it is drawn at, so the program thread only blends it with its alpha.
struct LayerGraphic: Sendable {
    /// Colour and coverage, exactly `rect`'s size (even width and height).
    let picture: KeyedPicture
    /// Where it goes on the program picture (even x and y, inside the layer's rectangle).
    let rect: PixelRect
}

/// Makes the pictures of image and text layers. Images are decoded with libavcodec and scaled with
/// libswscale straight to the layer's size under its fit (once, at prepare time); texts are rendered
/// with FreeType at their style's size, shrunk (never enlarged) to fit their layer, and placed in it by
/// the style's alignment, centred vertically.
enum LayerGraphics {
    /// The picture of `layer`, nil for cameras and colours (drawn per frame) and for empty layers.
    static func prepare(_ layer: ResolvedLayer, texts: TextRenderer) throws(GraphicsError) -> LayerGraphic? {
        guard !layer.rect.isEmpty else { return nil }
        switch layer.source {
        case .camera, .color:
            return nil
        case .image(let path):
            return try image(path, layer: layer)
        case let .text(text, style):
            return try self.text(try texts.render(text, style: style), alignment: style.alignment, in: layer.rect)
        }
    }

    private static func image(_ path: String, layer: ResolvedLayer) throws(GraphicsError) -> LayerGraphic? {
        let natural = try StillImage(contentsOf: path)
        let (crop, destination) = layer.placement(sourceWidth: natural.sourceWidth, sourceHeight: natural.sourceHeight)
        let rect = PixelRect(x: destination.x & ~1, y: destination.y & ~1, width: destination.width & ~1, height: destination.height & ~1)
        guard !rect.isEmpty else { return nil }
        if crop == .whole, rect.width == natural.sourceWidth, rect.height == natural.sourceHeight {
            return LayerGraphic(picture: natural.picture, rect: rect)
        }
        // Scale the whole image so that its cropped part is the rectangle's size, then cut that part out.
        let side = GraphicsLimits.maxSide
        let fullWidth = min(side, max(rect.width, Int((Double(rect.width) / crop.width).rounded())))
        let fullHeight = min(side, max(rect.height, Int((Double(rect.height) / crop.height).rounded())))
        let scaled = try StillImage(contentsOf: path, size: (fullWidth, fullHeight)).picture
        let x = min(Int((crop.x * Double(fullWidth)).rounded()) & ~1, (fullWidth - rect.width) & ~1)
        let y = min(Int((crop.y * Double(fullHeight)).rounded()) & ~1, (fullHeight - rect.height) & ~1)
        return LayerGraphic(picture: cut(scaled, PixelRect(x: x, y: y, width: rect.width, height: rect.height)), rect: rect)
    }

    private static func text(_ rendered: KeyedPicture, alignment: TextAlignment, in layer: PixelRect) throws(GraphicsError) -> LayerGraphic? {
        var picture = rendered
        if picture.width > layer.width || picture.height > layer.height {
            let scale = min(Double(layer.width) / Double(picture.width), Double(layer.height) / Double(picture.height))
            picture = shrink(picture, width: max(2, Int(Double(picture.width) * scale)), height: max(2, Int(Double(picture.height) * scale)))
        }
        picture = evenSized(picture)
        let width = min(picture.width, layer.width & ~1), height = min(picture.height, layer.height & ~1)
        guard width > 0, height > 0 else { return nil }
        let spare = layer.width - width
        let x: Int
        switch alignment {
        case .left: x = layer.x
        case .center: x = layer.x + spare / 2
        case .right: x = layer.x + spare
        }
        let rect = PixelRect(x: x & ~1, y: (layer.y + (layer.height - height) / 2) & ~1, width: width, height: height)
        if width != picture.width || height != picture.height {
            picture = cut(picture, PixelRect(x: 0, y: 0, width: width, height: height))
        }
        return LayerGraphic(picture: picture, rect: rect)
    }

    /// The `rect` part of `picture` (even x and y), as its own picture with a packed alpha plane.
    static func cut(_ picture: KeyedPicture, _ rect: PixelRect) -> KeyedPicture {
        let colour = VideoFrame.allocate(format: .i420, width: rect.width, height: rect.height)
        if let region = picture.picture.region(rect) { PlaneOps.copy(region, into: colour) }
        let alpha = picture.alpha.map { alpha in
            var packed = [UInt8](repeating: 0, count: rect.width * rect.height)
            for row in 0..<rect.height {
                let from = (rect.y + row) * picture.width + rect.x
                packed.replaceSubrange(row * rect.width..<(row + 1) * rect.width, with: alpha[from..<from + rect.width])
            }
            return packed
        }
        return KeyedPicture(picture: colour, alpha: alpha)
    }

    /// `picture` with a transparent column and row added where its width or height is odd, so it can
    /// be placed on whole 4:2:0 chroma samples (the colour repeats its last column and row).
    static func evenSized(_ picture: KeyedPicture) -> KeyedPicture {
        let width = (picture.width + 1) & ~1, height = (picture.height + 1) & ~1
        guard width != picture.width || height != picture.height else { return picture }
        return remap(picture, width: width, height: height, keepsAlpha: false) { source, x, y, isAlpha in
            if isAlpha { return x < source.width && y < source.height ? source.read(x, y) : 0 }
            return source.read(min(x, source.width - 1), min(y, source.height - 1))
        }
    }

    /// `picture` scaled down to `width` x `height` by averaging the source pixels each target pixel
    /// covers (colour and alpha alike; at prepare time, so plain loops are fast enough).
    static func shrink(_ picture: KeyedPicture, width: Int, height: Int) -> KeyedPicture {
        remap(picture, width: width, height: height, keepsAlpha: picture.alpha == nil) { source, x, y, _ in
            let top = y * source.height / source.targetHeight, bottom = max(top + 1, (y + 1) * source.height / source.targetHeight)
            let left = x * source.width / source.targetWidth, right = max(left + 1, (x + 1) * source.width / source.targetWidth)
            var sum = 0
            for sy in top..<bottom { for sx in left..<right { sum += Int(source.read(sx, sy)) } }
            let count = (bottom - top) * (right - left)
            return UInt8((sum + count / 2) / count)
        }
    }

    /// One plane of the source picture as `remap` reads it, with the size of the target plane.
    private struct SourcePlane {
        let width: Int
        let height: Int
        let targetWidth: Int
        let targetHeight: Int
        let read: (Int, Int) -> UInt8
    }

    /// A `width` x `height` picture whose every sample is `sample(plane, x, y, isAlpha)`, plane by plane
    /// (Y, U, V, then alpha; a source without alpha reads 255 there). `keepsAlpha`: a source without
    /// alpha gives a picture without alpha.
    private static func remap(_ picture: KeyedPicture, width: Int, height: Int, keepsAlpha: Bool,
                              _ sample: (SourcePlane, Int, Int, Bool) -> UInt8) -> KeyedPicture {
        let colour = VideoFrame.allocate(format: .i420, width: width, height: height)
        for index in 0..<3 {
            let (sourceWidth, sourceRows) = PlaneOps.size(ofPlane: index, width: picture.width, height: picture.height)
            let (targetWidth, targetRows) = PlaneOps.size(ofPlane: index, width: width, height: height)
            let from = picture.picture.plane(index).assumingMemoryBound(to: UInt8.self), stride = picture.picture.planes[index].stride
            let to = colour.plane(index).assumingMemoryBound(to: UInt8.self), toStride = colour.planes[index].stride
            let plane = SourcePlane(width: sourceWidth, height: sourceRows, targetWidth: targetWidth, targetHeight: targetRows) { x, y in
                from[y * stride + x]
            }
            for y in 0..<targetRows { for x in 0..<targetWidth { to[y * toStride + x] = sample(plane, x, y, false) } }
        }
        if keepsAlpha, picture.alpha == nil { return KeyedPicture(picture: colour, alpha: nil) }
        let source = picture.alpha
        let plane = SourcePlane(width: picture.width, height: picture.height, targetWidth: width, targetHeight: height) { x, y in
            source?[y * picture.width + x] ?? 255
        }
        var alpha = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height { for x in 0..<width { alpha[y * width + x] = sample(plane, x, y, true) } }
        return KeyedPicture(picture: colour, alpha: alpha)
    }
}
