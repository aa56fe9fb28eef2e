import Testing
import Mixer
import StudioCore
import TestSupport

private let rate = 48_000

/// A mixer handed its inputs ahead of the program (`readAhead`) places each input earlier by its
/// compensation (its capture latency): clicks located to the sample, a change heard as a cross-fade.
@Suite struct CaptureCompensationTests {
    /// A click at input sample 10 000 on two inputs, one compensated by 1000 frames (set before it has a
    /// strip), panned apart: the compensated one is heard 1000 samples earlier, the other where it was.
    @Test func aCompensatedInputIsHeardEarlierByItsCompensation() throws {
        var click = AudioSignals.constant(0, frames: rate)
        click[2 * 10_000] = 0.5
        click[2 * 10_000 + 1] = 0.5
        var run = MixerRun(readAhead: 4_800)
        run.signals = ["mic1": click, "mic2": click]
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(pan: .position(-1))), at: 0)
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(pan: .position(1))), at: 0)
        run.mixer.setCompensation("mic1", frames: 1_000)
        let program = run.run(frames: rate - 4_800)
        let left = AudioSignals.channel(0, of: program), right = AudioSignals.channel(1, of: program)
        #expect(left.firstIndex { $0 != 0 } == 9_000 && left.lastIndex { $0 != 0 } == 9_000 && left[9_000] == 0.5)
        #expect(right.firstIndex { $0 != 0 } == 10_000 && right.lastIndex { $0 != 0 } == 10_000)
        #expect(run.mixer.compensation(of: "mic1") == 1_000 && run.mixer.compensation(of: "mic2") == 0)
    }

    /// The operator's delay adds to it: 40 ms later than the compensated place; a compensation beyond
    /// the read-ahead is the read-ahead.
    @Test func aDelayAddsToTheCompensationWhichStopsAtTheReadAhead() throws {
        var click = AudioSignals.constant(0, frames: 2 * rate)
        click[2 * 20_000] = 0.5
        click[2 * 20_000 + 1] = 0.5
        var run = MixerRun(readAhead: 4_800)
        run.signals = ["mic1": click, "mic2": click]
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(pan: .position(-1), delayMS: 40)), at: 0)
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(pan: .position(1))), at: 0)
        run.beforeBlock = { start, mixer in
            if start == 0 {
                mixer.setCompensation("mic1", frames: 700)
                mixer.setCompensation("mic2", frames: 99_999)
            }
        }
        let program = run.run(frames: rate)
        let left = AudioSignals.channel(0, of: program), right = AudioSignals.channel(1, of: program)
        #expect(left.firstIndex { $0 != 0 } == 20_000 - 700 + 1_920)
        #expect(right.firstIndex { $0 != 0 } == 20_000 - 4_800)
        #expect(run.mixer.compensation(of: "mic2") == 4_800)
    }

    /// A compensation that changes mid-signal (a microphone's buffer grew after an underrun) moves the
    /// input by a cross-fade: a 440 Hz sine has no step larger than its own slope allows, and after the
    /// change it is heard 480 samples earlier.
    @Test func aChangingCompensationCrossFadesWithoutAStep() throws {
        let sine = AudioSignals.tone(frequency: 440, peak: 0.5, frames: 2 * rate)
        var run = MixerRun(readAhead: 4_800)
        run.signals = ["mic1": sine]
        run.beforeBlock = { start, mixer in
            if start == 24_000 { mixer.setCompensation("mic1", frames: 480) }
        }
        let program = AudioSignals.channel(0, of: run.run(frames: rate))
        let steps = zip(program.dropFirst(), program).map { abs($0 - $1) }
        let slope = 2 * Float.pi * 440 / Float(rate) * 0.5
        #expect(steps.max()! < 1.5 * slope, "largest step \(steps.max()!) against the sine's \(slope)")
        // Before: sample n is the input's n; well after: the input's n + 480.
        let input = AudioSignals.channel(0, of: sine)
        #expect(abs(program[20_000] - input[20_000]) < 1e-4 && abs(program[30_000] - input[30_480]) < 1e-4)
    }
}
