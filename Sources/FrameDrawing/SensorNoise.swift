import StudioCore

/// Camera-like sensor noise for test pictures (`pw-virtual-camera --noise N`, the test-pattern cameras'
/// `studio serve --camera-noise N`): every sample of every
/// plane moves by up to +-`amplitude` (a triangular distribution, as the sum of two uniform draws; a
/// sensor's noise is closer to that than to flat), different in every frame. So an encoder sees what a
/// real camera gives it (a JPEG of a noisy picture is several times the size of a clean pattern's, and
/// x264 works as hard as on a webcam) instead of flat areas it compresses for free.
///
/// Cheap enough for 1280x720 at 30 fps in a release build: the noise comes from a table made once
/// (`tableSize` values), read from a different random place for every row of every frame.
public struct SensorNoise {
    public let amplitude: Int
    static let tableSize = 1 << 16
    private var table: [Int16]
    private var state: UInt64

    /// `amplitude` 0 (no noise) to 255; `seed` makes a run repeatable.
    public init(amplitude: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        self.amplitude = max(0, min(255, amplitude))
        state = seed | 1
        table = []
        table.reserveCapacity(Self.tableSize)
        let span = UInt64(self.amplitude + 1)
        for _ in 0..<Self.tableSize {
            let a = Int(next() % span), b = Int(next() % span)
            table.append(Int16(a - b))
        }
    }

    /// xorshift64*.
    private mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    /// A copy of `frame` with noise on every plane (any planar or packed 8-bit format). A copy, not in
    /// place: test-pattern cameras redraw only what moves into recycled buffers, where noise would pile up.
    public mutating func noisy(_ frame: VideoFrame, pool: FramePool? = nil) -> VideoFrame {
        let out = VideoFrame.allocate(format: frame.format, width: frame.width, height: frame.height, pool: pool,
                                      captureTime: frame.captureTime, sequence: frame.sequence)
        let rowBytes = frame.format.rowBytes(width: frame.width)
        let mask = Self.tableSize - 1
        table.withUnsafeBufferPointer { noise in
            for (index, plane) in frame.planes.enumerated() {
                let source = frame.plane(index).assumingMemoryBound(to: UInt8.self)
                let destination = out.plane(index).assumingMemoryBound(to: UInt8.self)
                let columns = rowBytes[index]
                for row in 0..<plane.rows {
                    let line = source + row * plane.stride, outLine = destination + row * out.planes[index].stride
                    var offset = Int(next() >> 40) & mask
                    for column in 0..<columns {
                        outLine[column] = UInt8(clamping: Int(line[column]) + Int(noise[offset]))
                        offset = (offset + 1) & mask
                    }
                }
            }
        }
        return out
    }
}
