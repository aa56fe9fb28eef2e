import Testing
import Foundation
import CEBUR128
import Mixer
import StudioCore
import TestSupport

private let rate = 48_000

/// The program's true peak (`LoudnessMeter`, measured by the mixer's own SIMD oversampler) against the
/// peak between the samples of a signal that has one, against libebur128's own true peak (the same
/// filter in its scalar code) and against ffmpeg's `ebur128=peak=true` (another filter: 192 kHz).
@Suite struct TruePeakTests {
    /// A sine at a quarter of the sample rate, 45° out of phase with the samples: every sample is at
    /// peak / √2 (-3.01 dB), the true peak lies halfway between two samples.
    static func intersampleSine(peak: Double, frames: Int) -> [Float] {
        (0..<(2 * frames)).map { index in Float(peak * sin(Double.pi / 2 * Double(index / 2) + Double.pi / 4)) }
    }

    /// libebur128's true peak of `samples` (interleaved stereo), fed in blocks of `block` frames, in dB.
    static func libebur128TruePeak(_ samples: [Float], block: Int) throws -> Double {
        let state = try #require(ebur128_init(2, UInt(rate), cebur_reference_true_peak_modes))
        defer { var owned: UnsafeMutablePointer<ebur128_state>? = state; ebur128_destroy(&owned) }
        samples.withUnsafeBufferPointer { buffer in
            var frame = 0
            while frame < samples.count / 2 {
                let count = min(block, samples.count / 2 - frame)
                _ = ebur128_add_frames_float(state, buffer.baseAddress! + 2 * frame, count)
                frame += count
            }
        }
        var highest = 0.0
        for channel in 0..<2 {
            var value = 0.0
            #expect(ebur128_true_peak(state, UInt32(channel), &value) == cebur_success)
            highest = max(highest, value)
        }
        return 20 * log10(highest)
    }

    /// The mixer's meter fed in blocks of `blocks` frames, round robin (uneven blocks: the filter's
    /// history carries across calls).
    static func meterReading(_ samples: [Float], blocks: [Int]) throws -> ProgramLoudness {
        let meter = try #require(LoudnessMeter())
        var frame = 0, turn = 0
        while frame < samples.count / 2 {
            let count = min(blocks[turn % blocks.count], samples.count / 2 - frame)
            meter.add(Array(samples[(2 * frame)..<(2 * (frame + count))]))
            frame += count
            turn += 1
        }
        return meter.loudness
    }

    @Test func theTruePeakOfAnIntersamplePeakIsBetweenTheSamples() throws {
        let samples = Self.intersampleSine(peak: 0.5, frames: 2 * rate)
        let reading = try Self.meterReading(samples, blocks: [480])
        let samplePeak = try #require(reading.samplePeakDBFS), truePeak = try #require(reading.truePeakDBTP)
        #expect(abs(samplePeak - 20 * log10(0.5 / 2.0.squareRoot())) < 0.01, "sample peak \(samplePeak) dBFS")
        // The peak itself, -6.02 dB, within EBU Tech 3341's true-peak tolerance (+0.2 / -0.4 dB); the
        // filter reads 12 kHz about 0.1 dB high (libebur128 alike: its passband ripple there).
        let error = truePeak - 20 * log10(0.5)
        #expect(error <= 0.2 && error >= -0.4, "true peak \(truePeak) dBTP, expected -6.02 +0.2/-0.4")
        #expect(truePeak > samplePeak + 2.9)
    }

    @Test(arguments: [[480], [441, 1, 7, 1024, 64], [96_000]])
    func theTruePeakIsLibebur128s(blocks: [Int]) throws {
        // Speech-like sound with an intersample-peaking tone over it, and a jump in level (a peak late in
        // the run), in blocks of several sizes.
        var samples = AudioSignals.speechLike(frames: 6 * rate, seed: 5, tone: 700)
        let sine = Self.intersampleSine(peak: 0.3, frames: 6 * rate)
        for index in samples.indices { samples[index] += index > samples.count / 2 ? sine[index] * 2 : sine[index] }
        let reading = try Self.meterReading(samples, blocks: blocks)
        let reference = try Self.libebur128TruePeak(samples, block: 480)
        let truePeak = try #require(reading.truePeakDBTP)
        #expect(abs(truePeak - reference) < 0.001, "studio \(truePeak) dBTP, libebur128 \(reference) dBTP")
        #expect(try #require(reading.samplePeakDBFS) < truePeak)
    }

    @Test func theTruePeakAgreesWithFFmpegsEBUR128Filter() throws {
        var samples = AudioSignals.speechLike(frames: 5 * rate, seed: 9, tone: 300)
        let sine = Self.intersampleSine(peak: 0.6, frames: 5 * rate)
        for index in samples.indices { samples[index] += sine[index] }
        let reading = try Self.meterReading(samples, blocks: [480])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("true-peak-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("peaks.wav")
        try AudioSignals.writeWAV(samples, to: file)
        let reference = try #require(try AudioSignals.ffmpegLoudness(of: file).truePeakDBFS)
        let truePeak = try #require(reading.truePeakDBTP)
        #expect(abs(truePeak - reference) <= 0.2, "studio \(truePeak) dBTP, ffmpeg \(reference) dBFS")
    }
}
