import CEBUR128
import Testing
@testable import Mixer
import StudioCore
import TestSupport

/// Every loudness reading made from consecutive 100 ms windows (`WindowEnergies`, `LoudnessHistogram`)
/// is libebur128's own (all its modes on, histogram mode) at the newest window's end, however the meter
/// is fed and read.
@Suite struct LoudnessWindowTests {
    private let rate = 48_000

    /// libebur128 on its own, with every mode the meter replaces: the reference.
    private final class Reference {
        var state: UnsafeMutablePointer<ebur128_state>?
        init() { state = ebur128_init(2, 48_000, cebur_program_modes) }
        deinit { ebur128_destroy(&state) }
        func add(_ samples: ArraySlice<Float>) {
            samples.withUnsafeBufferPointer { _ = ebur128_add_frames_float(state, $0.baseAddress, $0.count / 2) }
        }
        func read(_ call: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>?) -> Int32) -> Double? {
            var value = 0.0
            guard call(state, &value) == cebur_success else { return nil }
            // As the meter reports it (the integrated loudness is gated at -70 LUFS and the range is
            // in LU: only momentary and short-term ever fall below the floor).
            return ProgramLoudness.reading(value)
        }
        /// Momentary, short-term, integrated and range now.
        var readings: [Double?] {
            [read(ebur128_loudness_momentary), read(ebur128_loudness_shortterm), read(ebur128_loudness_global), read(ebur128_loudness_range)]
        }
    }

    /// 15 s of speech-like audio that drops by 12 dB at 5 s and comes back up by 6 dB at 10 s (the
    /// short-term moves, the range is some LU), then 1 s of silence.
    private func program() -> [Float] {
        let speech = AudioSignals.speechLike(frames: 15 * rate, seed: 5, tone: 300)
        return speech.enumerated().map { index, sample in
            index < 5 * rate * 2 ? sample : index < 10 * rate * 2 ? sample / 4 : sample / 2
        } + AudioSignals.constant(0, frames: rate)
    }

    /// libebur128's readings at the end of every 100 ms window of `samples`.
    private func referenceReadings(_ samples: [Float]) -> [[Double?]] {
        let reference = Reference(), window = 2 * rate / 10
        return stride(from: 0, to: samples.count - window + 1, by: window).map { offset in
            reference.add(samples[offset..<(offset + window)])
            return reference.readings
        }
    }

    /// Fed in `block`-frame blocks and read after every `readEvery` blocks: each reading against
    /// libebur128's at the newest window's end; returns the readings compared.
    private func compare(block: Int, readEvery: Int) throws -> Int {
        let meter = try #require(LoudnessMeter())
        let samples = program()
        let expected = referenceReadings(samples)
        var compared = 0
        for (index, offset) in stride(from: 0, to: samples.count, by: 2 * block).enumerated() {
            let part = samples[offset..<min(samples.count, offset + 2 * block)]
            part.withUnsafeBufferPointer { meter.add($0) }
            guard index % readEvery == readEvery - 1 else { continue }
            let frames = offset / 2 + part.count / 2, windows = frames / (rate / 10)
            let reading = meter.loudness
            guard windows > 0 else {
                #expect(reading.momentaryLUFS == nil && reading.integratedLUFS == nil, "a reading before the first window's end")
                continue
            }
            let values = [reading.momentaryLUFS, reading.shortTermLUFS, reading.integratedLUFS, reading.rangeLU]
            for (name, (value, wanted)) in zip(["momentary", "short-term", "integrated", "range"], zip(values, expected[windows - 1])) {
                switch (value, wanted) {
                case (let value?, let wanted?):
                    #expect(abs(value - wanted) < 1e-9, "\(name) at frame \(frames): \(value), libebur128 \(wanted)")
                case (nil, nil): break
                default: Issue.record("\(name) at frame \(frames): \(String(describing: value)), libebur128 \(String(describing: wanted))")
                }
            }
            // Read again with nothing added: the same.
            #expect(meter.loudness == reading)
            compared += 1
        }
        return compared
    }

    /// As the mixer feeds it: 10 ms blocks, a reading every 100 ms.
    @Test func readingsEvery100MillisecondsAreLibebur128s() throws {
        #expect(try compare(block: 480, readEvery: 10) == 160)
    }

    /// Digital silence after sound: the momentary loudness is none once its 400 ms hold only silence
    /// (libebur128 reads the K-weighting filter's tail there as -2000 LUFS and less); the short-term,
    /// which still holds sound, reads on.
    @Test func silenceReadsAsNoLoudness() throws {
        let meter = try #require(LoudnessMeter())
        meter.add(program())
        let reading = meter.loudness
        #expect(reading.momentaryLUFS == nil, "momentary after 1 s of silence: \(String(describing: reading.momentaryLUFS))")
        #expect((reading.shortTermLUFS ?? -.infinity) > -40, "short-term: \(String(describing: reading.shortTermLUFS))")
        let reference = Reference()
        reference.add(program()[...])
        var raw = 0.0
        #expect(ebur128_loudness_momentary(reference.state, &raw) == cebur_success && raw < AudioLevels.floor,
                "libebur128's momentary over the silence: \(raw)")
    }

    /// Blocks of 441 frames read every 9 (3969 frames apart, across the windows' ends), blocks of 1200
    /// read every 4, and of 7000 (more than a window) read after each.
    @Test func anyOtherScheduleGivesTheReadingAtTheNewestWindowsEnd() throws {
        #expect(try compare(block: 441, readEvery: 9) > 150)
        #expect(try compare(block: 1200, readEvery: 4) == 160)
        #expect(try compare(block: 7000, readEvery: 1) > 100)
    }

    /// The range and the integrated loudness mean something here: the signal's three levels.
    @Test func theProgramHasARangeAndAnIntegratedLoudness() throws {
        let meter = try #require(LoudnessMeter())
        meter.add(program())
        let reading = meter.loudness
        #expect(reading.rangeLU.map { $0 > 3 && $0 < 15 } == true, "range \(String(describing: reading.rangeLU)) LU")
        #expect(reading.integratedLUFS.map { $0 > -40 && $0 < -5 } == true, "integrated \(String(describing: reading.integratedLUFS))")
    }

    @Test func theWindowsCountSilenceBeforeTheFirst() {
        var windows = WindowEnergies()
        windows.add(8)
        #expect(windows.mean(newest: 1) == 8 && windows.mean(newest: 4) == 2)
        for energy in 2...32 { windows.add(Double(energy)) }
        #expect(windows.closed == 32)
        #expect(windows.mean(newest: 4) == Double(29 + 30 + 31 + 32) / 4)
        #expect(windows.mean(newest: 30) == Double((3...32).reduce(0, +)) / 30)
    }

    /// The histogram's bins are libebur128's: 0.1 LU from -70 LUFS, the absolute gate below.
    @Test func theHistogramBinsAreTenthsOfALoudnessUnitFromMinus70() {
        func bin(_ loudness: Double) -> Int { LoudnessHistogram.bin(of: LoudnessHistogram.energy(loudness: loudness)) }
        #expect(bin(-69.99) == 0 && bin(-69.91) == 0 && bin(-69.89) == 1 && bin(-23.04) == 469 && bin(29.99) == 999 && bin(40) == 999)
        var histogram = LoudnessHistogram()
        histogram.add(energy: LoudnessHistogram.energy(loudness: -75))
        #expect(histogram.blocks == 0 && histogram.integrated == nil && histogram.range == 0)
    }
}
