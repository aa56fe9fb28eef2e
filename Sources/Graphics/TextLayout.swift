import CFreeType
import FrameDrawing
import StudioCore

/// One text laid out with one FreeType face: each line's glyphs rendered (anti-aliased coverage) and
/// placed on a pen line, then the whole painted into a `KeyedPicture`. Used inside `TextRenderer`'s lock.
struct TextLayout {
    /// One glyph's coverage, `width` x `rows` bytes, with its top-left corner relative to the line's
    /// left end and baseline.
    private struct Glyph {
        var left: Int
        var top: Int
        var width: Int
        var rows: Int
        var coverage: [UInt8]
    }

    private struct Line {
        var glyphs: [Glyph] = []
        /// Leftmost and rightmost pixel of the line (ink or pen advance), relative to its pen start.
        var minX = 0
        var maxX = 0
        var width: Int { maxX - minX }
    }

    private let lines: [Line]
    private let style: TextStyle
    private let ascender: Int
    private let descender: Int
    private let lineHeight: Int

    init(_ text: String, face: FT_Face, style: TextStyle) throws(GraphicsError) {
        self.style = style
        let sized = FT_Set_Pixel_Sizes(face, 0, FT_UInt(style.size))
        guard sized == 0, let size = face.pointee.size else {
            throw .fontNotLoaded(path: style.font, reason: "no \(style.size) px size: \(freeTypeReason(sized))")
        }
        // Metrics are 26.6 fixed point (1/64 pixel).
        let metrics = size.pointee.metrics
        ascender = Int((metrics.ascender + 63) >> 6)
        descender = Int(metrics.descender >> 6)
        lineHeight = max(1, Int((metrics.height + 63) >> 6))
        let kerning = face.pointee.face_flags & FT_Long(FT_FACE_FLAG_KERNING) != 0
        let texts = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines = texts.map { Self.layOut($0.unicodeScalars.filter { $0.value >= 0x20 && $0 != "\r" }, face: face, kerning: kerning) }
    }

    private static func layOut(_ scalars: [Unicode.Scalar], face: FT_Face, kerning: Bool) -> Line {
        var line = Line()
        var pen = 0  // 26.6
        var previous: FT_UInt = 0
        for scalar in scalars {
            let index = FT_Get_Char_Index(face, FT_ULong(scalar.value))
            if kerning, previous != 0, index != 0 {
                var delta = FT_Vector()
                if FT_Get_Kerning(face, previous, index, FT_UInt(FT_KERNING_DEFAULT.rawValue), &delta) == 0 { pen += Int(delta.x) }
            }
            previous = index
            // A glyph the font cannot load or render is left out; the rest of the text still shows.
            guard FT_Load_Glyph(face, index, FT_Int32(FT_LOAD_RENDER)) == 0, let slot = face.pointee.glyph else { continue }
            let bitmap = slot.pointee.bitmap
            let x = (pen >> 6) + Int(slot.pointee.bitmap_left)
            if let coverage = Self.coverage(of: bitmap) {
                line.glyphs.append(Glyph(left: x, top: Int(slot.pointee.bitmap_top), width: Int(bitmap.width),
                                         rows: Int(bitmap.rows), coverage: coverage))
                line.minX = min(line.minX, x)
                line.maxX = max(line.maxX, x + Int(bitmap.width))
            }
            pen += Int(slot.pointee.advance.x)
            line.maxX = max(line.maxX, (pen + 63) >> 6)
        }
        return line
    }

    /// A rendered glyph bitmap as one byte of coverage per pixel (8-bit grey as it is, 1-bit mono as 0 or
    /// 255); nil for an empty glyph (a space) or a mode text layers do not use (colour emoji).
    private static func coverage(of bitmap: FT_Bitmap) -> [UInt8]? {
        let width = Int(bitmap.width), rows = Int(bitmap.rows), pitch = Int(bitmap.pitch)
        guard width > 0, rows > 0, let buffer = bitmap.buffer else { return nil }
        var coverage = [UInt8](repeating: 0, count: width * rows)
        // A negative pitch means the rows go bottom-up; `buffer` still points at the first row in memory.
        func row(_ y: Int) -> UnsafeMutablePointer<UInt8> { pitch >= 0 ? buffer + y * pitch : buffer + (rows - 1 - y) * -pitch }
        switch Int32(bitmap.pixel_mode) {
        case Int32(FT_PIXEL_MODE_GRAY.rawValue):
            let levels = max(1, Int(bitmap.num_grays) - 1)
            for y in 0..<rows {
                let line = row(y)
                for x in 0..<width { coverage[y * width + x] = UInt8(Int(line[x]) * 255 / levels) }
            }
        case Int32(FT_PIXEL_MODE_MONO.rawValue):
            for y in 0..<rows {
                let line = row(y)
                for x in 0..<width where line[x / 8] & (0x80 >> UInt8(x % 8)) != 0 { coverage[y * width + x] = 255 }
            }
        default:
            return nil
        }
        return coverage
    }

    /// The laid-out text painted: letters in the style's colour over its box, padding on every side,
    /// each side rounded up to even pixels (whole 4:2:0 chroma blocks).
    func picture() throws(GraphicsError) -> KeyedPicture {
        let textWidth = lines.map(\.width).max() ?? 0
        let textHeight = lineHeight * (lines.count - 1) + ascender - descender
        let width = (max(1, textWidth + 2 * style.padding) + 1) & ~1
        let height = (max(1, textHeight + 2 * style.padding) + 1) & ~1
        guard GraphicsLimits.allows(width: width, height: height) else { throw .textTooLarge(width: width, height: height) }

        var coverage = [UInt8](repeating: 0, count: width * height)
        for (number, line) in lines.enumerated() {
            let slack = textWidth - line.width
            let offset = style.alignment == .left ? 0 : style.alignment == .center ? slack / 2 : slack
            let originX = style.padding + offset - line.minX
            let baseline = style.padding + ascender + number * lineHeight
            for glyph in line.glyphs {
                for y in 0..<glyph.rows {
                    let row = baseline - glyph.top + y
                    guard row >= 0, row < height else { continue }
                    for x in 0..<glyph.width {
                        let column = originX + glyph.left + x
                        guard column >= 0, column < width else { continue }
                        let value = glyph.coverage[y * glyph.width + x]
                        if value > coverage[row * width + column] { coverage[row * width + column] = value }
                    }
                }
            }
        }
        return paint(coverage, width: width, height: height)
    }

    /// Letters (colour T, coverage c) over the box (colour B, opacity o), composed over nothing: alpha
    /// a = c + o(1 - c), colour (cT + o(1 - c)B) / a; 4:2:0 chroma is the alpha-weighted mean of its block.
    private func paint(_ coverage: [UInt8], width: Int, height: Int) -> KeyedPicture {
        let text = YUVColor(style.color)
        let box = style.box.map(YUVColor.init) ?? text
        let boxOpacity = style.box == nil ? 0 : style.boxOpacity
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        var alpha = [UInt8](repeating: 0, count: width * height)
        // Per pixel: alpha, and the colour components premultiplied by it.
        var weights = [Double](repeating: 0, count: width * height)
        var premultiplied = [(y: Double, u: Double, v: Double)](repeating: (0, 0, 0), count: width * height)
        let luma = frame.plane(0).assumingMemoryBound(to: UInt8.self), lumaStride = frame.planes[0].stride
        for index in 0..<(width * height) {
            let c = Double(coverage[index]) / 255, under = boxOpacity * (1 - c), a = c + under
            weights[index] = a
            premultiplied[index] = (c * Double(text.y) + under * Double(box.y), c * Double(text.u) + under * Double(box.u),
                                    c * Double(text.v) + under * Double(box.v))
            alpha[index] = UInt8((a * 255).rounded())
            luma[index / width * lumaStride + index % width] = a > 0 ? UInt8((premultiplied[index].y / a).rounded()) : text.y
        }
        let u = frame.plane(1).assumingMemoryBound(to: UInt8.self), v = frame.plane(2).assumingMemoryBound(to: UInt8.self)
        for row in 0..<(height / 2) {
            for column in 0..<(width / 2) {
                let top = 2 * row * width + 2 * column, bottom = top + width
                func sum(_ value: (Int) -> Double) -> Double { value(top) + value(top + 1) + value(bottom) + value(bottom + 1) }
                let a = sum { weights[$0] }, sumU = sum { premultiplied[$0].u }, sumV = sum { premultiplied[$0].v }
                u[row * frame.planes[1].stride + column] = a > 0 ? UInt8((sumU / a).rounded()) : text.u
                v[row * frame.planes[2].stride + column] = a > 0 ? UInt8((sumV / a).rounded()) : text.v
            }
        }
        return KeyedPicture(picture: frame, alpha: alpha.allSatisfy { $0 == 255 } ? nil : alpha)
    }
}
