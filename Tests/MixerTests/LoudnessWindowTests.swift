import CEBUR128
import Testing
@testable import Mixer
import StudioCore
import TestSupport

/// The momentary and short-term loudness read from consecutive 100 ms windows (`WindowEnergies`) are
/// libebur128's own readings, however the meter is fed and read.
@Suite struct LoudnessWindowTests {
    private let rate = 48_000

    /// libebur128 on its own, with the meter's modes: the reference.
    private final class Reference {
        var state: UnsafeMutablePointer<ebur128_state>?
        init() { state = ebur128_init(2, 48_000, cebur_program_modes) }
        deinit { ebur128_destroy(&state) }
        func add(_ samples: ArraySlice<Float>) {
            samples.withUnsafeBufferPointer { _ = ebur128_add_frames_float(state, $0.baseAddress, $0.count / 2) }
        }
        func read(_ call: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>?) -> Int32) -> Double? {
            var value = 0.0
            guard call(state, &value) == cebur_success, value.isFinite else { return nil }
            return value
        }
    }

    /// 8 s of speech-like audio that drops by 12 dB at 5 s (the short-term moves), then 1 s of silence.
    private func program() -> [Float] {
        let speech = AudioSignals.speechLike(frames: 8 * rate, seed: 5, tone: 300)
        let step = 5 * rate * 2
        return speech.enumerated().map { $0.offset < step ? $0.element : $0.element / 4 } + AudioSignals.constant(0, frames: rate)
    }

    /// Fed in `block`-frame blocks and read after every `readEvery` blocks: each reading against
    /// libebur128's; returns the readings compared.
    private func compare(block: Int, readEvery: Int) throws -> Int {
        let meter = try #require(LoudnessMeter())
        let reference = Reference()
        let samples = program()
        var compared = 0
        for (index, offset) in stride(from: 0, to: samples.count, by: 2 * block).enumerated() {
            let part = samples[offset..<min(samples.count, offset + 2 * block)]
            part.withUnsafeBufferPointer { meter.add($0) }
            reference.add(part)
            guard index % readEvery == readEvery - 1 else { continue }
            let reading = meter.loudness
            for (name, value, expected) in [("momentary", reading.momentaryLUFS, reference.read(ebur128_loudness_momentary)),
                                            ("short-term", reading.shortTermLUFS, reference.read(ebur128_loudness_shortterm))] {
                switch (value, expected) {
                case (let value?, let expected?):
                    #expect(abs(value - expected) < 1e-9, "\(name) at frame \(offset / 2 + block): \(value), libebur128 \(expected)")
                case (nil, nil): break
                default: Issue.record("\(name) at frame \(offset / 2 + block): \(String(describing: value)), libebur128 \(String(describing: expected))")
                }
            }
            // Read again with nothing added: the same.
            #expect(meter.loudness == reading)
            compared += 1
        }
        return compared
    }

    /// As the mixer reads it: 10 ms blocks, a reading every 100 ms (from 3 s on, both from the windows).
    @Test func readingsEvery100MillisecondsAreLibebur128s() throws {
        #expect(try compare(block: 480, readEvery: 10) == 90)
    }

    /// Blocks of 441 frames read every 9 (3969 frames apart: no two readings 100 ms apart), and blocks
    /// of 1200 read every 4 (4800 apart again).
    @Test func anyOtherScheduleGivesTheSame() throws {
        #expect(try compare(block: 441, readEvery: 9) > 90)
        #expect(try compare(block: 1200, readEvery: 4) == 90)
    }

    @Test func theWindowsAreConsecutiveOnly() {
        var windows = WindowEnergies()
        #expect(windows.mean(newest: 1) == nil)
        for energy in 1...32 { windows.add(Double(energy)) }
        #expect(windows.count == WindowEnergies.capacity)
        #expect(windows.mean(newest: 4) == Double(29 + 30 + 31 + 32) / 4)
        #expect(windows.mean(newest: 30) == Double((3...32).reduce(0, +)) / 30)
        windows.restart()
        windows.add(7)
        #expect(windows.mean(newest: 1) == 7 && windows.mean(newest: 4) == nil)
    }
}
