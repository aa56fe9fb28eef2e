import StudioCore

/// A frame with alpha (yuva420p: a player's item with transparency) composited over black, for a
/// consumer that has no alpha (the program full screen, an ISO recording, a console tile): each sample
/// `black + (sample - black) * weight >> 8`, the weight `a + a >> 7` (0...256) of its alpha (chroma: of
/// its 2x2 block's top-left pixel), black being Y 16, U and V 128. Done here rather than by libswscale's
/// `alphablend` option, whose unscaled path (libswscale 6) reports 0 rows written. The output comes from
/// a pool kept for the size; a frame without alpha is returned as it is (no cost). Not thread-safe.
struct AlphaOverBlack {
    private var pool: FramePool?

    mutating func flattened(_ source: VideoFrame) -> VideoFrame {
        guard let alphaPlane = source.format.row.alphaPlane else { return source }
        let bytes = VideoFrame.byteCount(format: .i420, width: source.width, height: source.height)
        if pool?.capacity != bytes { pool = FramePool(capacity: bytes, limit: 4) }
        let output = VideoFrame.allocate(format: .i420, width: source.width, height: source.height, pool: pool,
                                         captureTime: source.captureTime, sequence: source.sequence)
        let alpha = UnsafePointer(source.plane(alphaPlane).assumingMemoryBound(to: UInt8.self))
        let alphaStride = source.planes[alphaPlane].stride
        for index in 0..<3 {
            let geometry = source.format.row.planes[index]
            let (width, rows) = (geometry.rowBytes(width: source.width), geometry.rows(height: source.height))
            let step = geometry.groupWidth, black = index == 0 ? 16 : 128
            let from = UnsafePointer(source.plane(index).assumingMemoryBound(to: UInt8.self))
            let to = output.plane(index).assumingMemoryBound(to: UInt8.self)
            let (fromStride, toStride) = (source.planes[index].stride, output.planes[index].stride)
            for row in 0..<rows {
                let line = from + row * fromStride, out = to + row * toStride, weights = alpha + row * geometry.rowStep * alphaStride
                for x in 0..<width {
                    let a = Int(weights[x * step]), weight = a + a >> 7
                    out[x] = UInt8(truncatingIfNeeded: black + ((Int(line[x]) - black) * weight + 128) >> 8)
                }
            }
        }
        return output
    }
}
