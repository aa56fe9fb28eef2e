import AudioKernels
import Foundation
import Testing
@testable import Capture

/// The resampler's stereo loop in C (`ak_resample_stereo`) against the Swift loop it replaced, kept
/// here as the reference: the 4-lane build gives its output to the bit, the AVX2/FMA build within float
/// rounding, at steps and read positions across the range the clock loop uses.
@Suite struct ResamplerKernelTests {
    /// The Swift `SIMD4<Float>` loop `AdaptiveResampler` ran before the C kernel (as it was).
    private static func reference(frames: Int, step: Double, start: Double, input: UnsafePointer<Float>,
                                  table: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let taps = AdaptiveResampler.taps, phases = AdaptiveResampler.phases, lookahead = AdaptiveResampler.lookahead
        let rowBytes = 2 * taps * MemoryLayout<Float>.stride, lanes = 4 * MemoryLayout<Float>.stride
        for frame in 0..<frames {
            let position = start + Double(frame) * step
            let whole = Int(position.rounded(.down))
            let scaled = (position - Double(whole)) * Double(phases)
            let phase = min(Int(scaled), phases - 1)
            let blend = SIMD4<Float>(repeating: Float(scaled - Double(phase)))
            let row = UnsafeRawPointer(table + phase * 2 * taps)
            let samples = UnsafeRawPointer(input + (whole - (lookahead - 1)) * 2)
            var sum = SIMD4<Float>()
            for chunk in 0..<(2 * taps / 4) {
                let low = row.loadUnaligned(fromByteOffset: chunk * lanes, as: SIMD4<Float>.self)
                let high = row.loadUnaligned(fromByteOffset: rowBytes + chunk * lanes, as: SIMD4<Float>.self)
                let x = samples.loadUnaligned(fromByteOffset: chunk * lanes, as: SIMD4<Float>.self)
                sum += (low + blend * (high - low)) * x
            }
            output[2 * frame] = sum[0] + sum[2]
            output[2 * frame + 1] = sum[1] + sum[3]
        }
    }

    /// Two tones and some noise, different in each channel, near full scale.
    private static let input: [Float] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<12_000).flatMap { n -> [Float] in
            let t = Double(n) / 48_000
            let noise = Float.random(in: -0.05...0.05, using: &generator)
            return [Float(0.6 * sin(2 * .pi * 997 * t)) + noise, Float(0.4 * sin(2 * .pi * 5_003 * t + 1) + 0.3 * sin(2 * .pi * 60 * t))]
        }
    }()

    /// The largest difference between `isa`'s output and the reference's, over runs of 4,800 frames at
    /// each step from read positions landing on and between the table's phases.
    private func largestDifference(_ isa: ak_isa) -> Float {
        var worst: Float = 0
        let steps = [1.0, 1 + 300e-6, 1 - 300e-6, 1 + 2000e-6, 1 - 2000e-6, 1 + 1e-9, 0.999_999_5]
        let starts = [Double(AdaptiveResampler.lookahead - 1), 7.5, 7 + 1.0 / 256, 7 + 255.0 / 256, 7.999_999_9, 1_234.567_89]
        Self.input.withUnsafeBufferPointer { input in
            AdaptiveResampler.stereoTable.withUnsafeBufferPointer { table in
                for step in steps {
                    for start in starts {
                        let frames = 4_800
                        var expected = [Float](repeating: 0, count: 2 * frames), actual = expected
                        expected.withUnsafeMutableBufferPointer {
                            Self.reference(frames: frames, step: step, start: start, input: input.baseAddress!, table: table.baseAddress!,
                                           output: $0.baseAddress!)
                        }
                        actual.withUnsafeMutableBufferPointer {
                            ak_resample_stereo(input.baseAddress!, table.baseAddress!, Int32(AdaptiveResampler.phases), start, step, frames,
                                               $0.baseAddress!, isa)
                        }
                        for index in expected.indices { worst = max(worst, abs(actual[index] - expected[index])) }
                    }
                }
            }
        }
        return worst
    }

    @Test func theBaselineLoopIsTheSwiftLoopToTheBit() {
        #expect(largestDifference(ak_isa_baseline) == 0)
    }

    @Test func theAVX2LoopIsTheSwiftLoopWithinFloatRounding() {
        guard ak_has_avx2_fma() != 0 else {
            print("ResamplerKernelTests: this CPU has no AVX2 with FMA; the baseline loop runs (tested above)")
            return
        }
        let worst = largestDifference(ak_isa_avx2_fma)
        #expect(worst > 0 && worst < 1e-6, "largest difference \(worst)")
    }

    /// What `AdaptiveResampler` runs: the best loop this CPU has, the same as asking for it by name.
    @Test func theResamplerRunsTheBestLoop() {
        var resampler = AdaptiveResampler(channels: 2)
        let frames = 4_000, step = 1 + 250e-6
        let needed = resampler.framesNeeded(toProduce: frames, step: step)
        Self.input.withUnsafeBufferPointer { resampler.append(UnsafeBufferPointer(rebasing: $0[0..<(2 * needed)])) }
        var output = [Float](repeating: 0, count: 2 * frames), expected = output
        resampler.produce(frames: frames, step: step, into: &output, offset: 0)
        // The resampler's input starts with `lookahead - 1` frames of silence before the first appended.
        let padded = [Float](repeating: 0, count: 2 * (AdaptiveResampler.lookahead - 1)) + Self.input
        padded.withUnsafeBufferPointer { input in
            AdaptiveResampler.stereoTable.withUnsafeBufferPointer { table in
                expected.withUnsafeMutableBufferPointer {
                    ak_resample_stereo(input.baseAddress!, table.baseAddress!, Int32(AdaptiveResampler.phases),
                                       Double(AdaptiveResampler.lookahead - 1), step, frames, $0.baseAddress!,
                                       ak_has_avx2_fma() != 0 ? ak_isa_avx2_fma : ak_isa_baseline)
                }
            }
        }
        #expect(output == expected)
    }
}
