import Testing
import AudioKernels

/// The channel strip's C loops (`ak_strip_write`, `ak_strip_mix`) against the plain per-sample loop they
/// replaced, over the ring's wrap, odd frame counts and samples that are not numbers.
@Suite struct StripKernelTests {
    static let ringFrames = 64, mask = ringFrames - 1

    /// A repeatable sequence of samples in -1...1, with a NaN, an infinity and a -infinity among them.
    static func samples(_ count: Int, seed: UInt64) -> [Float] {
        var state = seed
        return (0..<count).map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            switch index % 37 {
            case 5: return .nan
            case 11: return .infinity
            case 23: return -.infinity
            default: return Float(Int64(bitPattern: state >> 11) % 2_000_001 - 1_000_000) / 1_000_000
            }
        }
    }

    @Test(arguments: [(0, 17), (50, 31), (63, 1), (10, 64), (40, 0)])
    func writeKeepsFiniteSamplesAndSilencesTheRestAcrossTheWrap(first: Int, frames: Int) {
        var ring = [Float](repeating: 7, count: 2 * Self.ringFrames)
        let input = Self.samples(2 * frames, seed: UInt64(first + 1))
        ak_strip_write(&ring, Self.mask, Int64(first), input, frames)
        for frame in 0..<frames {
            for channel in 0..<2 {
                let sample = input[2 * frame + channel], slot = 2 * ((first + frame) & Self.mask) + channel
                #expect(ring[slot] == (sample.isFinite ? sample : 0), "frame \(frame) channel \(channel)")
            }
        }
        // Nothing else written; and silence (no input) writes zeros.
        #expect(ring.filter { $0 == 7 }.count == 2 * (Self.ringFrames - frames))
        ak_strip_write(&ring, Self.mask, Int64(first), nil, frames)
        #expect((0..<frames).allSatisfy { ring[2 * ((first + $0) & Self.mask)] == 0 && ring[2 * ((first + $0) & Self.mask) + 1] == 0 })
    }

    @Test(arguments: [(100, 10, 17), (60, 3, 31), (0, 63, 64), (37, 0, 1), (5, 20, 48)])
    func mixIsThePlainLoopsSumPeakAndSquares(first: Int, delay: Int, frames: Int) {
        var ring = Self.samples(2 * Self.ringFrames, seed: 3).map { $0.isFinite ? $0 : 0.5 }
        let matrix: [Float] = [0.7, -0.2, 0.1, 1.3]
        var bus = Self.samples(2 * frames, seed: 9).map { $0.isFinite ? $0 : 0 }
        var expectedBus = bus, expectedPeaks: [Float] = [0.25, 0.05], expectedSums = [1.5, 2.5]
        for frame in 0..<frames {
            let slot = 2 * ((first + frame - delay) & Self.mask), left = ring[slot], right = ring[slot + 1]
            let out = [matrix[0] * left + matrix[1] * right, matrix[2] * left + matrix[3] * right]
            for channel in 0..<2 {
                expectedBus[2 * frame + channel] += out[channel]
                expectedPeaks[channel] = max(expectedPeaks[channel], abs(out[channel]))
                expectedSums[channel] += Double(out[channel] * out[channel])
            }
        }
        var peaks: [Float] = [0.25, 0.05], sums = [1.5, 2.5]
        ring.withUnsafeMutableBufferPointer { ring in
            ak_strip_mix(ring.baseAddress, Self.mask, Int64(first), Int64(delay), frames, matrix, &bus, &peaks, &sums)
        }
        #expect(bus == expectedBus)
        #expect(peaks == expectedPeaks)
        // The squares summed in another order: equal to rounding.
        #expect(abs(sums[0] - expectedSums[0]) < 1e-9 && abs(sums[1] - expectedSums[1]) < 1e-9, "\(sums) against \(expectedSums)")
    }
}
