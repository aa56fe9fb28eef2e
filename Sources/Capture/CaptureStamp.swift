import FrameDrawing
import StudioCore

/// A machine-readable capture time drawn into a picture: a bar code of CLOCK_MONOTONIC nanoseconds that
/// survives scaling and H.264, read back at a receiver to measure capture-to-wire latency (the test
/// pattern draws it when asked: `TestPatternCamera(stampsCaptureTime:)`, `pw-virtual-camera --stamp 1`).
///
/// Layout, in fractions of the frame so any size reads the same: 80 blocks in `rows` rows of
/// `blocksPerRow`, filling `region` (the bottom of the test pattern's colour bars), each block all
/// black (0) or all white (1). The bits, row by row, left to right: the start marker `1011`, the 64 bits
/// of the time (most significant first), a CRC-8 of those 8 bytes (polynomial 0x07), the stop marker
/// `0010`. A reader samples the middle half of each block's luma; a wrong marker or CRC is a misread
/// (nil), never a wrong time. At 1280x720 a block is 24x32 pixels; at 640x360 still 12x16.
public enum CaptureStamp {
    public static let region = RelativeRect(x: 0.25, y: 0.45, width: 0.75, height: 0.10)
    public static let rows = 2
    public static let blocksPerRow = 40
    static let startMarker: [Bool] = [true, false, true, true]
    static let stopMarker: [Bool] = [false, false, true, false]
    static let white = YUVColor(y: 235, u: 128, v: 128)
    static let black = YUVColor(y: 16, u: 128, v: 128)

    /// The 80 bits that stand for `time`.
    static func bits(of time: UInt64) -> [Bool] {
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * UInt64($0))) }
        var bits = startMarker
        for shift in stride(from: 63, through: 0, by: -1) { bits.append(time >> UInt64(shift) & 1 == 1) }
        let crc = crc8(bytes)
        for shift in stride(from: 7, through: 0, by: -1) { bits.append(crc >> UInt8(shift) & 1 == 1) }
        return bits + stopMarker
    }

    /// The time the bits stand for, or nil when a marker or the CRC does not match.
    static func time(from bits: [Bool]) -> UInt64? {
        guard bits.count == rows * blocksPerRow, Array(bits.prefix(4)) == startMarker, Array(bits.suffix(4)) == stopMarker else { return nil }
        let time = bits[4..<68].reduce(UInt64(0)) { $0 << 1 | ($1 ? 1 : 0) }
        let crc = bits[68..<76].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * UInt64($0))) }
        return crc8(bytes) == crc ? time : nil
    }

    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }

    /// Block `index`'s pixels in a `width` x `height` frame (even edges, so chroma lines up).
    static func block(_ index: Int, width: Int, height: Int) -> PixelRect {
        let area = region.pixelRect(width: width, height: height)
        let column = index % blocksPerRow, row = index / blocksPerRow
        func even(_ value: Int) -> Int { value & ~1 }
        let x0 = area.x + even(area.width * column / blocksPerRow), x1 = area.x + even(area.width * (column + 1) / blocksPerRow)
        let y0 = area.y + even(area.height * row / rows), y1 = area.y + even(area.height * (row + 1) / rows)
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Draws `time` into `frame` (I420 or NV12; the producer, before it publishes the frame). Every block
    /// is painted, so drawing over an earlier stamp needs no background restore.
    public static func draw(_ time: UInt64, into frame: VideoFrame) {
        for (index, bit) in bits(of: time).enumerated() {
            frame.fill(block(index, width: frame.width, height: frame.height), with: bit ? white : black)
        }
    }

    /// Reads the stamp from a luma plane of `width` x `height` with `stride` bytes per row (a decoded
    /// frame at any size the stamped picture was scaled to); nil when there is none or it is misread.
    public static func read(luma: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int) -> UInt64? {
        var bits: [Bool] = []
        bits.reserveCapacity(rows * blocksPerRow)
        for index in 0..<(rows * blocksPerRow) {
            let rect = block(index, width: width, height: height)
            // The middle half of the block: away from edges that scaling and H.264 blur.
            let x0 = rect.x + rect.width / 4, x1 = max(x0 + 1, rect.maxX - rect.width / 4)
            let y0 = rect.y + rect.height / 4, y1 = max(y0 + 1, rect.maxY - rect.height / 4)
            guard x1 <= width, y1 <= height else { return nil }
            var sum = 0
            for row in y0..<y1 {
                let line = luma + row * stride
                for column in x0..<x1 { sum += Int(line[column]) }
            }
            bits.append(sum / ((x1 - x0) * (y1 - y0)) >= 126)
        }
        return time(from: bits)
    }

    /// Reads the stamp from a frame (I420 or NV12).
    public static func read(_ frame: VideoFrame) -> UInt64? {
        guard frame.format == .i420 || frame.format == .nv12 else { return nil }
        return read(luma: UnsafePointer(frame.plane(0).assumingMemoryBound(to: UInt8.self)), stride: frame.planes[0].stride,
                    width: frame.width, height: frame.height)
    }
}
