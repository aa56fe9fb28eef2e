import StudioCore

/// Skin smoothing on I420 luma: a guided filter (He, Sun, Tang; the luma guiding itself) computed at
/// chroma resolution and applied at full resolution (the "fast guided filter"), weighted per pixel by
/// how skin-like its Cb/Cr is and by the strength.
///
/// Per low-resolution window the filter fits luma = a * guide + b: where the window's variance is
/// small next to `epsilon` (skin texture, blemishes, sensor noise) a is near 0 and the window goes to
/// its mean; across an edge the variance is large, a is near 1 and the edge stays. Each window's
/// model is first blended with "leave it" (a = 1, b = 0) by the skin weight times strength / 100,
/// then the models are averaged over the windows covering a pixel and stretched bilinearly to full
/// resolution, where every luma byte becomes `A * luma + B`. Every box sum is a running sum, so the
/// cost per pixel does not depend on the radius. Chroma is left as it is.
///
/// Owns its work buffers (about 24 bytes per chroma pixel: 5.5 MB at 720p), made again only when the picture size
/// changes. Not thread-safe: one per camera, used by the program thread.
final class BeautyFilter {
    /// Luma variance (in 8-bit code values squared) at which a window is smoothed half way: texture
    /// much weaker than sqrt(epsilon) = 16 codes is flattened, edges much stronger are kept.
    static let epsilon: Float = 256

    /// The skin region of Cb/Cr (BT.601 limited range: the usual 77...127 / 133...173 of full-range
    /// skin detection, narrowed by 224 / 255 around 128), with linear soft edges `skinRamp` wide.
    static let skinCb = 83.0...127.0
    static let skinCr = 133.0...168.0
    static let skinRamp = 10.0

    /// How skin-like each Cb and each Cr code is, 0...1; a pixel's weight is the product.
    private static let cbWeight: [Float] = (0..<256).map { weight(Double($0), in: skinCb) }
    private static let crWeight: [Float] = (0..<256).map { weight(Double($0), in: skinCr) }

    private static func weight(_ value: Double, in range: ClosedRange<Double>) -> Float {
        let outside = max(range.lowerBound - value, value - range.upperBound, 0)
        return Float(max(0, 1 - outside / skinRamp))
    }

    /// The window radius at chroma resolution for a picture `height` rows high: 4 (9 luma rows each
    /// side) at 720p, scaled with the picture so the same face is smoothed alike at every size.
    static func radius(height: Int) -> Int { max(2, (height + 90) / 180) }

    private var width = 0, height = 0, lowWidth = 0, lowHeight = 0, radius = 0
    private var guide = Buffer<Int32>(), squares = Buffer<Int32>()
    private var columnSum = Buffer<Int32>(), prefix = Buffer<Int32>()
    private var coefficientA = Buffer<Float>(), coefficientB = Buffer<Float>()
    private var columnFloat = Buffer<Float>(), prefixFloat = Buffer<Float>()
    /// The averaged models in fixed point: 4096 is 1 (A) or one luma code (B). Before that, the window
    /// sums of the guide and of its squares.
    private var meanA = Buffer<Int32>(), meanB = Buffer<Int32>()
    private var rowA = Buffer<Int32>(), rowB = Buffer<Int32>()
    /// 1 / (rows in the window) and 1 / (columns in the window): windows are clipped at the edges.
    private var inverseRows = Buffer<Float>(), inverseColumns = Buffer<Float>()

    init() {}

    /// Smooths the skin in `source`'s luma into `output`'s luma (the same size; it may be the same
    /// frame). `output`'s chroma is not touched. `strength` 1...100.
    func apply(_ source: VideoFrame, into output: VideoFrame, strength: Int) {
        prepare(width: source.width, height: source.height)
        let luma = UnsafePointer(source.plane(0).assumingMemoryBound(to: UInt8.self))
        let lumaStride = source.planes[0].stride
        makeGuide(luma: luma, stride: lumaStride)
        makeCoefficients(cb: UnsafePointer(source.plane(1).assumingMemoryBound(to: UInt8.self)), cbStride: source.planes[1].stride,
                         cr: UnsafePointer(source.plane(2).assumingMemoryBound(to: UInt8.self)), crStride: source.planes[2].stride,
                         strength: Float(min(max(strength, 0), 100)) / 100)
        boxFloat(coefficientA.pointer, into: meanA.pointer)
        boxFloat(coefficientB.pointer, into: meanB.pointer)
        applyCoefficients(luma: luma, stride: lumaStride, into: output.plane(0).assumingMemoryBound(to: UInt8.self),
                          outputStride: output.planes[0].stride)
    }

    private func prepare(width: Int, height: Int) {
        guard width != self.width || height != self.height else { return }
        self.width = width
        self.height = height
        lowWidth = (width + 1) / 2
        lowHeight = (height + 1) / 2
        radius = Self.radius(height: height)
        let area = lowWidth * lowHeight
        for buffer in [guide, squares, meanA, meanB] { buffer.resize(area) }
        for buffer in [coefficientA, coefficientB] { buffer.resize(area) }
        for buffer in [columnSum, rowA, rowB] { buffer.resize(lowWidth) }
        prefix.resize(lowWidth + 1)
        columnFloat.resize(lowWidth)
        prefixFloat.resize(lowWidth + 1)
        inverseRows.resize(lowHeight)
        inverseColumns.resize(lowWidth)
        for y in 0..<lowHeight { inverseRows.pointer[y] = 1 / Float(min(y + radius, lowHeight - 1) - max(y - radius, 0) + 1) }
        for x in 0..<lowWidth { inverseColumns.pointer[x] = 1 / Float(min(x + radius, lowWidth - 1) - max(x - radius, 0) + 1) }
    }

    /// guide = the sum of each 2x2 block of luma (0...1020), squares = its square.
    private func makeGuide(luma: UnsafePointer<UInt8>, stride: Int) {
        let guide = guide.pointer, squares = squares.pointer
        for y in 0..<lowHeight {
            let top = luma + 2 * y * stride, bottom = luma + min(2 * y + 1, height - 1) * stride
            let out = guide + y * lowWidth, outSquares = squares + y * lowWidth
            let pairs = width / 2
            for x in 0..<pairs {
                let sum = Int32(top[2 * x]) + Int32(top[2 * x + 1]) + Int32(bottom[2 * x]) + Int32(bottom[2 * x + 1])
                out[x] = sum
                outSquares[x] = sum * sum
            }
            if pairs < lowWidth {
                let sum = 2 * (Int32(top[width - 1]) + Int32(bottom[width - 1]))
                out[pairs] = sum
                outSquares[pairs] = sum * sum
            }
        }
    }

    /// Each window's model, blended with "leave it" by its skin weight: A' = 1 - w (1 - a), B' = w b.
    private func makeCoefficients(cb: UnsafePointer<UInt8>, cbStride: Int, cr: UnsafePointer<UInt8>, crStride: Int, strength: Float) {
        let sums = meanA.pointer, squareSums = meanB.pointer
        boxInteger(guide.pointer, into: sums)
        boxInteger(squares.pointer, into: squareSums)
        let epsilon = Self.epsilon
        Self.cbWeight.withUnsafeBufferPointer { cbWeight in
            Self.crWeight.withUnsafeBufferPointer { crWeight in
                for y in 0..<lowHeight {
                    let row = y * lowWidth, inverseRow = inverseRows.pointer[y]
                    let cbRow = cb + y * cbStride, crRow = cr + y * crStride
                    for x in 0..<lowWidth {
                        let inverse = inverseRow * inverseColumns.pointer[x]
                        let mean = Float(sums[row + x]) * inverse * 0.25
                        let meanSquare = Float(squareSums[row + x]) * inverse * 0.0625
                        let variance = max(meanSquare - mean * mean, 0)
                        let a = variance / (variance + epsilon)
                        let weight = cbWeight[Int(cbRow[x])] * crWeight[Int(crRow[x])] * strength
                        coefficientA.pointer[row + x] = 1 - weight * (1 - a)
                        coefficientB.pointer[row + x] = weight * mean * (1 - a)
                    }
                }
            }
        }
    }

    /// luma = A * luma + B, with A and B stretched from chroma resolution (bilinear, centred samples:
    /// an even pixel takes 3/4 of its own low-resolution sample and 1/4 of the one before, an odd
    /// pixel 1/4 of the one after; rows the same way).
    private func applyCoefficients(luma: UnsafePointer<UInt8>, stride: Int, into output: UnsafeMutablePointer<UInt8>, outputStride: Int) {
        let rowA = rowA.pointer, rowB = rowB.pointer, lowWidth = lowWidth, width = width
        for y in 0..<height {
            let near = y / 2, far = y & 1 == 0 ? max(near - 1, 0) : min(near + 1, lowHeight - 1)
            let nearA = meanA.pointer + near * lowWidth, farA = meanA.pointer + far * lowWidth
            let nearB = meanB.pointer + near * lowWidth, farB = meanB.pointer + far * lowWidth
            for x in 0..<lowWidth {
                rowA[x] = 3 * nearA[x] + farA[x]
                rowB[x] = 3 * nearB[x] + farB[x]
            }
            let source = luma + y * stride, target = output + y * outputStride
            // a and b: 16 * 4096 for 1 (four quarters across times four down).
            @inline(__always) func pixel(_ x: Int, _ a: Int32, _ b: Int32) {
                let value = (a &* Int32(source[x]) &+ b &+ (1 << 15)) >> 16
                target[x] = UInt8(truncatingIfNeeded: min(max(value, 0), 255))
            }
            @inline(__always) func clampedPixel(_ x: Int) {
                let near = x / 2, far = x & 1 == 0 ? max(near - 1, 0) : min(near + 1, lowWidth - 1)
                pixel(x, 3 &* rowA[near] &+ rowA[far], 3 &* rowB[near] &+ rowB[far])
            }
            // Pairs of pixels inside, whose neighbours need no clamping; then the first two and the last
            // few pixels, each once (the output may be the source).
            let insideEnd = max(lowWidth - 1, 1)
            for i in 1..<insideEnd {
                let a = 3 &* rowA[i], b = 3 &* rowB[i]
                pixel(2 * i, a &+ rowA[i - 1], b &+ rowB[i - 1])
                pixel(2 * i + 1, a &+ rowA[i + 1], b &+ rowB[i + 1])
            }
            for x in 0..<min(2, width) { clampedPixel(x) }
            for x in 2 * insideEnd..<max(width, 2 * insideEnd) { clampedPixel(x) }
        }
    }

    /// out = the sum over each pixel's window (clipped at the edges) of `values`, exactly.
    private func boxInteger(_ values: UnsafeMutablePointer<Int32>, into out: UnsafeMutablePointer<Int32>) {
        let column = columnSum.pointer, prefix = prefix.pointer
        column.update(repeating: 0, count: lowWidth)
        for y in 0..<min(radius, lowHeight) { add(values + y * lowWidth, to: column) }
        for y in 0..<lowHeight {
            if y + radius < lowHeight { add(values + (y + radius) * lowWidth, to: column) }
            if y - radius - 1 >= 0 {
                let old = values + (y - radius - 1) * lowWidth
                for x in 0..<lowWidth { column[x] &-= old[x] }
            }
            prefix[0] = 0
            for x in 0..<lowWidth { prefix[x + 1] = prefix[x] &+ column[x] }
            let row = out + y * lowWidth
            let (head, tail) = windowsInside
            for x in 0..<head { row[x] = prefix[min(x + radius + 1, lowWidth)] &- prefix[max(x - radius, 0)] }
            for x in head..<tail { row[x] = prefix[x + radius + 1] &- prefix[x - radius] }
            for x in tail..<lowWidth { row[x] = prefix[min(x + radius + 1, lowWidth)] &- prefix[max(x - radius, 0)] }
        }
    }

    /// The columns whose windows lie inside the picture: head..<tail.
    private var windowsInside: (Int, Int) {
        let head = min(radius, lowWidth)
        return (head, max(lowWidth - radius, head))
    }

    private func add(_ values: UnsafeMutablePointer<Int32>, to column: UnsafeMutablePointer<Int32>) {
        for x in 0..<lowWidth { column[x] &+= values[x] }
    }

    /// out = the mean over each pixel's window (clipped at the edges) of `values`, times 4096.
    private func boxFloat(_ values: UnsafeMutablePointer<Float>, into out: UnsafeMutablePointer<Int32>) {
        let column = columnFloat.pointer, prefix = prefixFloat.pointer, inverseColumns = inverseColumns.pointer
        column.update(repeating: 0, count: lowWidth)
        for y in 0..<min(radius, lowHeight) {
            let new = values + y * lowWidth
            for x in 0..<lowWidth { column[x] += new[x] }
        }
        for y in 0..<lowHeight {
            if y + radius < lowHeight {
                let new = values + (y + radius) * lowWidth
                for x in 0..<lowWidth { column[x] += new[x] }
            }
            if y - radius - 1 >= 0 {
                let old = values + (y - radius - 1) * lowWidth
                for x in 0..<lowWidth { column[x] -= old[x] }
            }
            prefix[0] = 0
            for x in 0..<lowWidth { prefix[x + 1] = prefix[x] + column[x] }
            let row = out + y * lowWidth, scale = inverseRows.pointer[y] * 4096
            @inline(__always) func fixed(_ sum: Float, _ x: Int) -> Int32 { Int32(sum * inverseColumns[x] * scale + 0.5) }
            let (head, tail) = windowsInside
            for x in 0..<head { row[x] = fixed(prefix[min(x + radius + 1, lowWidth)] - prefix[max(x - radius, 0)], x) }
            for x in head..<tail { row[x] = fixed(prefix[x + radius + 1] - prefix[x - radius], x) }
            for x in tail..<lowWidth { row[x] = fixed(prefix[min(x + radius + 1, lowWidth)] - prefix[max(x - radius, 0)], x) }
        }
    }
}

/// A work buffer owned by one filter, kept across frames and grown only when the picture grows.
final class Buffer<Element> {
    private(set) var pointer: UnsafeMutablePointer<Element>
    private var capacity = 0

    init() { pointer = UnsafeMutablePointer.allocate(capacity: 1) }

    func resize(_ count: Int) {
        guard count > capacity else { return }
        pointer.deallocate()
        pointer = UnsafeMutablePointer.allocate(capacity: count)
        capacity = count
    }

    deinit { pointer.deallocate() }
}
