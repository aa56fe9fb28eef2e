import FrameDrawing
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// The compositor's pixel work on I420 frames: copies, blends and mixes, plane by plane, row by row.
/// Weights are 0...256 (256: all of the second picture), so `a * (256 - w) + b * w` fits 16 bits and
/// the loops vectorise. Only the program thread calls these, on frames it has not published yet.
enum PlaneOps {
    /// Width and rows of plane `index` of an I420 picture `width` x `height`.
    static func size(ofPlane index: Int, width: Int, height: Int) -> (width: Int, rows: Int) {
        index == 0 ? (width, height) : ((width + 1) / 2, (height + 1) / 2)
    }

    /// Copies all of `source` into `destination` (same size, both I420).
    static func copy(_ source: VideoFrame, into destination: VideoFrame) {
        for index in 0..<3 {
            let (width, rows) = size(ofPlane: index, width: source.width, height: source.height)
            let from = source.plane(index), to = destination.plane(index)
            let fromStride = source.planes[index].stride, toStride = destination.planes[index].stride
            if fromStride == toStride, fromStride == width {
                memcpy(to, from, width * rows)
                continue
            }
            for row in 0..<rows { memcpy(to + row * toStride, from + row * fromStride, width) }
        }
    }

    /// `destination = a + (b - a) * weight / 256`, every sample (all three the same size, I420).
    static func mix(_ a: VideoFrame, _ b: VideoFrame, weight: Int, into destination: VideoFrame) {
        let w = UInt16(clamping: max(0, min(256, weight))), keep = 256 - w
        for index in 0..<3 {
            let (width, rows) = size(ofPlane: index, width: destination.width, height: destination.height)
            for row in 0..<rows {
                let pa = (a.plane(index) + row * a.planes[index].stride).assumingMemoryBound(to: UInt8.self)
                let pb = (b.plane(index) + row * b.planes[index].stride).assumingMemoryBound(to: UInt8.self)
                let out = (destination.plane(index) + row * destination.planes[index].stride).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let sum = UInt16(pa[x]) &* keep &+ UInt16(pb[x]) &* w &+ 128
                    out[x] = UInt8(truncatingIfNeeded: sum >> 8)
                }
            }
        }
    }

    /// `destination = a + (color - a) * weight / 256` (a dip's half).
    static func mix(_ a: VideoFrame, color: YUVColor, weight: Int, into destination: VideoFrame) {
        let w = UInt16(clamping: max(0, min(256, weight))), keep = 256 - w
        let values = [color.y, color.u, color.v]
        for index in 0..<3 {
            let (width, rows) = size(ofPlane: index, width: destination.width, height: destination.height)
            let term = UInt16(values[index]) &* w &+ 128
            for row in 0..<rows {
                let pa = (a.plane(index) + row * a.planes[index].stride).assumingMemoryBound(to: UInt8.self)
                let out = (destination.plane(index) + row * destination.planes[index].stride).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width { out[x] = UInt8(truncatingIfNeeded: (UInt16(pa[x]) &* keep &+ term) >> 8) }
            }
        }
    }

    /// Blends `source` over `destination` (both I420, the same size: `destination` is usually a region of
    /// the picture being composed) with a constant `opacity` 0...256 and, when given, a per-pixel `alpha`
    /// plane of `source` (0...255, `source.width` per row). Chroma takes the alpha of each 2x2 block's
    /// top-left pixel. A sample's weight is `(a + a >> 7) * opacity >> 8` (alpha 255 and opacity 256: all
    /// of `source`). Each row is one `blendRow` over raw pointers, the weight made inside the loop.
    static func blend(_ source: VideoFrame, alpha: UnsafeBufferPointer<UInt8>?, opacity: Int, over destination: VideoFrame) {
        blend(source, alpha: alpha.map { ($0.baseAddress!, source.width) }, opacity: opacity, over: destination)
    }

    /// `source` over `destination` with `opacity`, keyed by its own alpha plane when its format has one
    /// (yuva420p: a player's item with transparency), else as `blend(_:alpha: nil, ...)`.
    static func blend(_ source: VideoFrame, opacity: Int, over destination: VideoFrame) {
        let alpha = source.format.row.alphaPlane.map { (UnsafePointer(source.plane($0).assumingMemoryBound(to: UInt8.self)), source.planes[$0].stride) }
        blend(source, alpha: alpha, opacity: opacity, over: destination)
    }

    private static func blend(_ source: VideoFrame, alpha: (plane: UnsafePointer<UInt8>, stride: Int)?, opacity: Int,
                              over destination: VideoFrame) {
        let opacity = UInt16(clamping: max(0, min(256, opacity)))
        guard opacity > 0 else { return }
        if alpha == nil, opacity == 256 {
            copy(source, into: destination)
            return
        }
        for index in 0..<3 {
            let (width, rows) = size(ofPlane: index, width: source.width, height: source.height)
            let fromStride = source.planes[index].stride, toStride = destination.planes[index].stride
            let fromPlane = UnsafePointer(source.plane(index).assumingMemoryBound(to: UInt8.self))
            let toPlane = destination.plane(index).assumingMemoryBound(to: UInt8.self)
            for row in 0..<rows {
                let from = fromPlane + row * fromStride, to = toPlane + row * toStride
                if let alpha {
                    // Chroma row `row` takes alpha row 2 * row, every other sample.
                    let line = alpha.plane + row * (index == 0 ? 1 : 2) * alpha.stride
                    blendRow(from, into: to, alpha: line, subsampled: index != 0, opacity: opacity, count: width)
                } else {
                    blendRow(from, into: to, weight: opacity, count: width)
                }
            }
        }
    }

    /// `to[x] = (to[x] * (256 - weight) + from[x] * weight + 128) >> 8` for `count` samples, weight 0...256.
    @inline(__always)
    static func blendRow(_ from: UnsafePointer<UInt8>, into to: UnsafeMutablePointer<UInt8>, weight: UInt16, count: Int) {
        let keep = 256 &- weight
        for x in 0..<count {
            to[x] = UInt8(truncatingIfNeeded: (UInt16(to[x]) &* keep &+ UInt16(from[x]) &* weight &+ 128) >> 8)
        }
    }

    /// `blendRow` with each sample's weight from its alpha (`alpha[x]`, or `alpha[2 * x]` when
    /// `subsampled`) and `opacity`. Loops written out per case so each stays simple enough to vectorise:
    /// 16-bit throughout at opacity 256, 32-bit for the weight otherwise.
    @inline(__always)
    static func blendRow(_ from: UnsafePointer<UInt8>, into to: UnsafeMutablePointer<UInt8>, alpha: UnsafePointer<UInt8>,
                         subsampled: Bool, opacity: UInt16, count: Int) {
        @inline(__always) func put(_ x: Int, _ w: UInt16) {
            to[x] = UInt8(truncatingIfNeeded: (UInt16(to[x]) &* (256 &- w) &+ UInt16(from[x]) &* w &+ 128) >> 8)
        }
        switch (subsampled, opacity == 256) {
        case (false, true):
            for x in 0..<count {
                let a = UInt16(alpha[x])
                put(x, a &+ (a >> 7))
            }
        case (true, true):
            for x in 0..<count {
                let a = UInt16(alpha[2 &* x])
                put(x, a &+ (a >> 7))
            }
        case (false, false):
            let o = UInt32(opacity)
            for x in 0..<count {
                let a = UInt32(alpha[x])
                put(x, UInt16(truncatingIfNeeded: ((a &+ (a >> 7)) &* o) >> 8))
            }
        case (true, false):
            let o = UInt32(opacity)
            for x in 0..<count {
                let a = UInt32(alpha[2 &* x])
                put(x, UInt16(truncatingIfNeeded: ((a &+ (a >> 7)) &* o) >> 8))
            }
        }
    }

    /// Blends a solid colour over `rect` of `destination` with `opacity` 0...256.
    static func blend(_ color: YUVColor, opacity: Int, over rect: PixelRect, of destination: VideoFrame) {
        let opacity = max(0, min(256, opacity))
        guard opacity > 0 else { return }
        if opacity == 256 {
            destination.fill(rect, with: color)
            return
        }
        guard let region = destination.region(rect.clipped(width: destination.width, height: destination.height)) else { return }
        mix(region, color: color, weight: opacity, into: region)
    }

    /// Copies the `rect` of `source` to the same place in `destination` (same size frames, even edges).
    static func copy(_ rect: PixelRect, of source: VideoFrame, into destination: VideoFrame) {
        let rect = rect.clipped(width: destination.width, height: destination.height)
        guard let from = source.region(rect), let to = destination.region(rect) else { return }
        copy(from, into: to)
    }

    /// Copies `source` (or its part that fits) into `destination` with its top-left corner at
    /// (`x`, `y`), which may be outside `destination` (a push moves pictures partly out). Even offsets.
    static func place(_ source: VideoFrame, at x: Int, _ y: Int, into destination: VideoFrame) {
        let target = PixelRect(x: x, y: y, width: source.width, height: source.height)
            .clipped(width: destination.width, height: destination.height)
        guard !target.isEmpty,
              let from = source.region(PixelRect(x: target.x - x, y: target.y - y, width: target.width, height: target.height)),
              let to = destination.region(target) else { return }
        copy(from, into: to)
    }
}
