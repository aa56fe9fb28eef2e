import Testing
import StudioCore
@testable import Switcher

/// A frame of `width` x `height` I420 with every sample random (seeded).
func noiseFrame(width: Int, height: Int, seed: UInt64) -> VideoFrame {
    let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    for index in 0..<3 {
        let plane = frame.plane(index).assumingMemoryBound(to: UInt8.self)
        for offset in 0..<(frame.planes[index].rows * frame.planes[index].stride) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            plane[offset] = UInt8(truncatingIfNeeded: state >> 56)
        }
    }
    return frame
}

/// Every sample of `frame` as [plane][row][x], `width` x `height` (its own size unless given).
func samples(of frame: VideoFrame) -> [[[UInt8]]] {
    (0..<3).map { index in
        let (width, rows) = PlaneOps.size(ofPlane: index, width: frame.width, height: frame.height)
        return (0..<rows).map { row in
            let line = (frame.plane(index) + row * frame.planes[index].stride).assumingMemoryBound(to: UInt8.self)
            return Array(UnsafeBufferPointer(start: line, count: width))
        }
    }
}

@Suite struct PlaneOpsTests {
    /// The blend as written in its documentation, one sample at a time in plain Int arithmetic.
    private func referenceBlend(_ source: [[[UInt8]]], over destination: [[[UInt8]]], alpha: [UInt8]?, width: Int, opacity: Int) -> [[[UInt8]]] {
        (0..<3).map { index in
            let step = index == 0 ? 1 : 2
            return destination[index].indices.map { row in
                destination[index][row].indices.map { x in
                    var weight = opacity
                    if let alpha {
                        let a = Int(alpha[row * step * width + x * step])
                        weight = (a + a / 128) * opacity / 256
                    }
                    let d = Int(destination[index][row][x]), s = Int(source[index][row][x])
                    return UInt8((d * (256 - weight) + s * weight + 128) / 256)
                }
            }
        }
    }

    @Test(arguments: [(1, 1), (2, 2), (7, 5), (33, 17), (64, 3), (129, 9)])
    func blendMatchesTheReferenceAndTouchesNothingElse(size: (width: Int, height: Int)) {
        let (width, height) = size
        for opacity in [1, 77, 255, 256] {
            for withAlpha in [false, true] {
                let seed = UInt64(width * 1000 + height * 10 + opacity) &+ (withAlpha ? 7 : 0)
                let source = noiseFrame(width: width, height: height, seed: seed)
                // The destination: a region (2, 4) into a larger picture, its rows a wider stride apart.
                let picture = noiseFrame(width: width + 6, height: height + 8, seed: seed &+ 1)
                let rect = PixelRect(x: 2, y: 4, width: width, height: height)
                let target = picture.region(rect)!
                var state = seed | 1
                // Alpha with the extremes (0, 255) and everything between.
                let alpha: [UInt8]? = withAlpha ? (0..<(width * height)).map { i in
                    state = state &* 6_364_136_223_846_793_005 &+ 1
                    return i % 5 == 0 ? 255 : (i % 7 == 0 ? 0 : UInt8(truncatingIfNeeded: state >> 56))
                } : nil
                let before = samples(of: picture)
                let expected = referenceBlend(samples(of: source), over: samples(of: target), alpha: alpha, width: width, opacity: opacity)
                if let alpha {
                    alpha.withUnsafeBufferPointer { PlaneOps.blend(source, alpha: $0, opacity: opacity, over: target) }
                } else {
                    PlaneOps.blend(source, alpha: nil, opacity: opacity, over: target)
                }
                #expect(samples(of: target) == expected, "\(width)x\(height) opacity \(opacity) alpha \(withAlpha)")
                // Outside the region: as it was.
                let after = samples(of: picture)
                for index in 0..<3 {
                    let (x0, y0) = index == 0 ? (rect.x, rect.y) : (rect.x / 2, rect.y / 2)
                    let (w, h) = PlaneOps.size(ofPlane: index, width: width, height: height)
                    for row in after[index].indices {
                        for x in after[index][row].indices where !((y0..<(y0 + h)).contains(row) && (x0..<(x0 + w)).contains(x)) {
                            if after[index][row][x] != before[index][row][x] {
                                Issue.record("\(width)x\(height) opacity \(opacity): plane \(index) (\(x), \(row)) outside changed")
                                return
                            }
                        }
                    }
                }
            }
        }
    }
}
