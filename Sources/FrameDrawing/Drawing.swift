import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// Drawing on 4:2:0 frames (`i420` and `nv12`). Other pixel formats are left untouched and the calls
/// return false. Only the producer may draw, before it publishes the frame (see `FrameStorage`).
extension VideoFrame {
    /// Whether this module can draw on and measure the frame's pixel format.
    public var isDrawable: Bool { format == .i420 || format == .nv12 }

    /// Fills `rect` (clipped to the frame) with `color`. Chroma covers every 2x2 block the rectangle
    /// touches, so use even coordinates for exact colour edges.
    @discardableResult
    public func fill(_ rect: PixelRect, with color: YUVColor) -> Bool {
        guard isDrawable else { return false }
        let r = rect.clipped(width: width, height: height)
        guard !r.isEmpty else { return true }
        let luma = plane(0), lumaStride = planes[0].stride
        for row in r.y..<r.maxY {
            memset(luma + row * lumaStride + r.x, Int32(color.y), r.width)
        }
        let cx0 = r.x / 2, cx1 = (r.maxX + 1) / 2, cy0 = r.y / 2, cy1 = (r.maxY + 1) / 2
        if format == .i420 {
            let u = plane(1), v = plane(2), uStride = planes[1].stride, vStride = planes[2].stride
            for row in cy0..<cy1 {
                memset(u + row * uStride + cx0, Int32(color.u), cx1 - cx0)
                memset(v + row * vStride + cx0, Int32(color.v), cx1 - cx0)
            }
        } else {
            let uv = plane(1), stride = planes[1].stride
            // One 16-bit store per chroma pair, in memory order U then V.
            let pair = UInt16(color.u) | UInt16(color.v) << 8
            for row in cy0..<cy1 {
                let line = (uv + row * stride + cx0 * 2).assumingMemoryBound(to: UInt8.self)
                for i in 0..<(cx1 - cx0) {
                    line[2 * i] = UInt8(truncatingIfNeeded: pair)
                    line[2 * i + 1] = UInt8(truncatingIfNeeded: pair >> 8)
                }
            }
        }
        return true
    }

    /// Fills the whole frame with `color`.
    @discardableResult
    public func fill(with color: YUVColor) -> Bool {
        fill(PixelRect(x: 0, y: 0, width: width, height: height), with: color)
    }

    /// Draws `text` with its top-left corner at (`x`, `y`), each font pixel `scale` x `scale` frame pixels.
    /// Only the ink is drawn (the background shows through). Returns the drawn rectangle.
    @discardableResult
    public func drawText(_ text: String, x: Int, y: Int, scale: Int, color: YUVColor) -> PixelRect {
        let scale = max(1, scale)
        var originX = x
        for character in text {
            let rows = BitmapFont.glyph(for: character) ?? BitmapFont.glyph(for: "?")!
            for (rowIndex, bits) in rows.enumerated() where bits != 0 {
                // Fill runs of adjacent ink pixels with one call each.
                var column = 0
                while column < BitmapFont.glyphWidth {
                    guard bits & (0x10 >> UInt8(column)) != 0 else { column += 1; continue }
                    var end = column
                    while end < BitmapFont.glyphWidth, bits & (0x10 >> UInt8(end)) != 0 { end += 1 }
                    fill(PixelRect(x: originX + column * scale, y: y + rowIndex * scale,
                                   width: (end - column) * scale, height: scale), with: color)
                    column = end
                }
            }
            originX += BitmapFont.advance * scale
        }
        return PixelRect(x: x, y: y, width: BitmapFont.width(of: text, scale: scale), height: BitmapFont.height(scale: scale))
    }

    /// Draws `text` centred horizontally on the frame, top at `y`. Returns the drawn rectangle.
    @discardableResult
    public func drawCentredText(_ text: String, y: Int, scale: Int, color: YUVColor) -> PixelRect {
        let textWidth = BitmapFont.width(of: text, scale: max(1, scale))
        let x = ((width - textWidth) / 2) & ~1
        return drawText(text, x: x, y: y, scale: scale, color: color)
    }

    /// Copies every pixel of `source` into this frame (one memcpy per plane when layouts match).
    /// Both must have the same format and size. Returns false (copying nothing) otherwise.
    @discardableResult
    public func copyPixels(from source: VideoFrame) -> Bool {
        guard source.format == format, source.width == width, source.height == height,
              source.planes.count == planes.count else { return false }
        if source.planes == planes {
            // Same layout: copy the span from the first to the end of the last plane in one go.
            let start = planes.map(\.offset).min() ?? 0
            let end = planes.map { $0.offset + $0.byteCount }.max() ?? 0
            memcpy(storage.bytes + start, source.storage.bytes + start, end - start)
            return true
        }
        for index in planes.indices {
            let rowBytes = min(planes[index].stride, source.planes[index].stride)
            for row in 0..<min(planes[index].rows, source.planes[index].rows) {
                memcpy(plane(index) + row * planes[index].stride, source.plane(index) + row * source.planes[index].stride, rowBytes)
            }
        }
        return true
    }

    /// Copies the horizontal band of luma rows `rows` (and the chroma rows under it) from `source`,
    /// which must have the same format, size and plane layout. False when it cannot.
    @discardableResult
    public func copyRows(_ rows: Range<Int>, from source: VideoFrame) -> Bool {
        guard isDrawable, source.format == format, source.width == width, source.height == height,
              source.planes == planes else { return false }
        for index in planes.indices {
            let subsampling = index == 0 ? 1 : 2
            let first = max(0, rows.lowerBound / subsampling)
            let last = min(planes[index].rows, (rows.upperBound + subsampling - 1) / subsampling)
            guard first < last else { continue }
            let stride = planes[index].stride
            memcpy(plane(index) + first * stride, source.plane(index) + first * stride, (last - first) * stride)
        }
        return true
    }

    /// The mean colour of `rect` (clipped), or nil for an empty rectangle or undrawable format.
    public func averageColor(in rect: PixelRect) -> YUVColor? {
        guard isDrawable else { return nil }
        let r = rect.clipped(width: width, height: height)
        guard !r.isEmpty else { return nil }
        if format == .i420 {
            return YUVColor.average(in: r, y: plane(0), yStride: planes[0].stride, u: plane(1), uStride: planes[1].stride,
                                    v: plane(2), vStride: planes[2].stride, chromaStep: 1)
        }
        return YUVColor.average(in: r, y: plane(0), yStride: planes[0].stride, u: plane(1), uStride: planes[1].stride,
                                v: plane(1) + 1, vStride: planes[1].stride, chromaStep: 2)
    }

    /// The mean colour of a region given in fractions of the frame.
    public func averageColor(in region: RelativeRect) -> YUVColor? {
        averageColor(in: region.pixelRect(width: width, height: height))
    }
}

extension YUVColor {
    /// The mean colour of `rect` in raw 4:2:0 planes (for example a decoder's `AVFrame` in yuv420p:
    /// pass its data[0...2] and linesize[0...2]; for NV12 pass the UV plane as `u`, `u + 1` as `v` and
    /// `chromaStep` 2). `rect` must lie inside the picture.
    public static func average(in rect: PixelRect, y: UnsafeRawPointer, yStride: Int, u: UnsafeRawPointer, uStride: Int,
                               v: UnsafeRawPointer, vStride: Int, chromaStep: Int = 1) -> YUVColor? {
        guard !rect.isEmpty else { return nil }
        var sumY = 0
        for row in rect.y..<rect.maxY {
            let line = (y + row * yStride).assumingMemoryBound(to: UInt8.self)
            for column in rect.x..<rect.maxX { sumY += Int(line[column]) }
        }
        let cx0 = rect.x / 2, cx1 = max(cx0 + 1, rect.maxX / 2), cy0 = rect.y / 2, cy1 = max(cy0 + 1, rect.maxY / 2)
        var sumU = 0, sumV = 0
        for row in cy0..<cy1 {
            let uLine = (u + row * uStride).assumingMemoryBound(to: UInt8.self)
            let vLine = (v + row * vStride).assumingMemoryBound(to: UInt8.self)
            for column in cx0..<cx1 {
                sumU += Int(uLine[column * chromaStep])
                sumV += Int(vLine[column * chromaStep])
            }
        }
        let lumaCount = rect.width * rect.height, chromaCount = (cx1 - cx0) * (cy1 - cy0)
        return YUVColor(y: UInt8((sumY + lumaCount / 2) / lumaCount), u: UInt8((sumU + chromaCount / 2) / chromaCount),
                        v: UInt8((sumV + chromaCount / 2) / chromaCount))
    }
}
