import Testing
import Foundation
import Mixer
import StudioCore
import TestSupport

private let rate = 48_000

/// The limiter on hot inputs, and the program's loudness against EBU Tech 3341's reference signals and
/// against ffmpeg's own EBU R128 filter.
@Suite struct LimiterAndLoudnessTests {
    @Test func theLimiterNeverExceedsItsCeilingWithHotInputs() throws {
        var run = MixerRun()
        run.signals = ["mic1": AudioSignals.tone(frequency: 440, peak: 0.9, frames: 2 * rate),
                       "mic2": AudioSignals.speechLike(frames: 2 * rate, seed: 7, tone: 1000),
                       "mic3": AudioSignals.tone(frequency: 61, peak: 1, frames: 2 * rate, channel: 1)]
        for name in ["mic1", "mic2", "mic3"] { run.mixer.controls.post(.input(name, try MixerInputSettings(gainDB: 24)), at: 0) }
        // The ceiling lowered mid-run: from its sample on exactly (the output is on the inputs' timeline).
        run.mixer.controls.post(.master(try MixerMasterSettings(gainDB: 6, ceilingDBFS: -1)), at: 0)
        run.mixer.controls.post(.master(try MixerMasterSettings(gainDB: 6, ceilingDBFS: -6)), at: 60_000)
        let program = run.run(frames: 2 * rate)
        let first = Float(linearGain(decibels: -1)), second = Float(linearGain(decibels: -6))
        let before = program[..<(2 * 60_000)].map(abs).max() ?? 0
        let after = program[(2 * 60_000)...].map(abs).max() ?? 0
        #expect(before <= first, "a sample at \(decibels(Double(before))) dBFS over a -1 dBFS ceiling")
        #expect(before > first * 0.99, "hot inputs should reach the ceiling")
        #expect(program[(2 * 59_000)..<(2 * 60_000)].map(abs).max() ?? 0 > second * 1.05, "the lower ceiling applied early")
        #expect(after <= second, "a sample at \(decibels(Double(after))) dBFS over a -6 dBFS ceiling")
        #expect(run.mixer.limitedFrames > rate)
        #expect(run.mixer.clampedSamples == 0, "the look-ahead gain let samples through that only the last clamp caught")
    }

    @Test func theLimiterIsTransparentBelowItsCeiling() throws {
        var run = MixerRun()
        let speech = AudioSignals.speechLike(frames: rate, seed: 3, tone: 440)
        run.signals = ["mic1": speech]
        let program = run.run(frames: rate)
        #expect((speech.map(abs).max() ?? 1) < Float(linearGain(decibels: -1)))
        #expect(program == speech, "below the ceiling the program is the input, sample for sample")
        #expect(run.mixer.limitedFrames == 0)
    }

    /// EBU Tech 3341 (2016) test cases 1, 2 and 3 (stereo 1 kHz sines): momentary, short-term and
    /// integrated within ±0.1 LU of the reference.
    @Test(arguments: [(-23.0, -23.0), (-33.0, -33.0)])
    func aSteadySineReadsItsTech3341Loudness(level: Double, expected: Double) throws {
        var run = MixerRun()
        run.block = 1024
        run.signals = ["tone": AudioSignals.tone(frequency: 1000, peak: linearGain(decibels: level), frames: 20 * rate)]
        _ = run.run(frames: 20 * rate)
        let loudness = run.mixer.controls.meters.loudness
        for (name, value) in [("momentary", loudness.momentaryLUFS), ("short-term", loudness.shortTermLUFS),
                              ("integrated", loudness.integratedLUFS)] {
            let reading = try #require(value, "no \(name) reading")
            #expect(abs(reading - expected) <= 0.1, "\(name) \(reading) LUFS, expected \(expected)")
        }
        let peak = try #require(loudness.samplePeakDBFS)
        #expect(abs(peak - level) < 0.01)
        #expect(try #require(loudness.rangeLU) < 0.1)
    }

    @Test func theGatedIntegratedLoudnessOfTech3341Case3() throws {
        // -36 dBFS for 10 s, -23 dBFS for 60 s, -36 dBFS for 10 s: I = -23.0 ±0.1.
        let meter = try #require(LoudnessMeter())
        for (level, seconds) in [(-36.0, 10), (-23.0, 60), (-36.0, 10)] {
            meter.add(AudioSignals.tone(frequency: 1000, peak: linearGain(decibels: level), frames: seconds * rate))
        }
        let integrated = try #require(meter.loudness.integratedLUFS)
        #expect(abs(integrated - -23) <= 0.1, "integrated \(integrated) LUFS")
    }

    @Test func silenceHasNoLoudness() throws {
        let meter = try #require(LoudnessMeter())
        meter.add(AudioSignals.constant(0, frames: 5 * rate))
        #expect(meter.loudness.integratedLUFS == nil && meter.loudness.momentaryLUFS == nil && meter.loudness.truePeakDBTP == nil)
    }

    @Test func theProgramsLoudnessAgreesWithFFmpegsEBUR128Filter() throws {
        var run = MixerRun()
        run.block = 441
        run.signals = ["mic1": AudioSignals.speechLike(frames: 12 * rate, seed: 11, tone: 440),
                       "mic2": AudioSignals.speechLike(frames: 12 * rate, seed: 12, tone: 1000),
                       "mic3": AudioSignals.tone(frequency: 220, peak: 0.05, frames: 12 * rate)]
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(gainDB: 6, pan: .position(0.3))), at: 0)
        let program = run.run(frames: 12 * rate)
        let loudness = run.mixer.controls.meters.loudness
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mixer-r128-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("program.wav")
        // The whole program the meter measured (the mixer ran `latency` frames past the returned part).
        try AudioSignals.writeWAV(program, to: file)
        let reference = try AudioSignals.ffmpegLoudness(of: file)
        let integrated = try #require(loudness.integratedLUFS)
        #expect(abs(integrated - reference.integratedLUFS) <= 0.2, "studio \(integrated) LUFS, ffmpeg \(reference.integratedLUFS) LUFS")
        let truePeak = try #require(loudness.truePeakDBTP), ffmpegPeak = try #require(reference.truePeakDBFS)
        #expect(abs(truePeak - ffmpegPeak) <= 0.5, "true peak: studio \(truePeak) dBTP, ffmpeg \(ffmpegPeak) dBFS")
    }
}
