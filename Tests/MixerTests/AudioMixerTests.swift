import Testing
import Mixer
import StudioCore
import TestSupport

private let rate = 48_000

/// The mixer's signal path on real signals: tones measured with a Goertzel filter, constant levels and
/// clicks located to the sample.
@Suite struct AudioMixerTests {
    @Test func twoTonesComeOutAtTheirSetGains() throws {
        var run = MixerRun()
        run.signals = ["mic1": AudioSignals.tone(frequency: 440, peak: 0.25, frames: rate),
                       "mic2": AudioSignals.tone(frequency: 1000, peak: 0.25, frames: rate)]
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(gainDB: -6)), at: 0)
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(gainDB: 3)), at: 0)
        let program = run.run(frames: rate)
        for side in 0..<2 {
            let channel = AudioSignals.channel(side, of: program)[4800..<(4800 + 38_400)]
            let low = AudioSignals.goertzelAmplitude(channel, frequency: 440)
            let high = AudioSignals.goertzelAmplitude(channel, frequency: 1000)
            #expect(abs(decibels(low / 0.25) - -6) < 0.05, "440 Hz at \(decibels(low / 0.25)) dB, set -6")
            #expect(abs(decibels(high / 0.25) - 3) < 0.05, "1 kHz at \(decibels(high / 0.25)) dB, set +3")
        }
        #expect(run.mixer.limitedFrames == 0)
    }

    @Test func gainAndMuteChangesStartAtTheirSample() throws {
        var run = MixerRun()
        run.signals = ["mic1": AudioSignals.constant(0.5, frames: rate)]
        let gainAt: Int64 = 12_345, muteAt: Int64 = 30_001
        run.mixer.controls.post(.input("mic1", .unity), at: 0)
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(gainDB: -6)), at: gainAt)
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(gainDB: -6, muted: true, fadeMS: 20)), at: muteAt)
        let left = AudioSignals.channel(0, of: run.run(frames: rate))
        let declick = run.mixer.declickFrames
        let lowered = Float(0.5 * linearGain(decibels: -6))
        // Unchanged up to the sample before, moving at the sample itself, there after the declick ramp.
        #expect(left[Int(gainAt) - 1] == 0.5)
        #expect(left[Int(gainAt)] < 0.5 && left[Int(gainAt)] > lowered)
        #expect(abs(left[Int(gainAt) + declick - 2] - lowered) > 1e-4, "the ramp is shorter than \(declick) frames")
        #expect(abs(left[Int(gainAt) + declick - 1] - lowered) < 1e-6)
        #expect(abs(left[Int(muteAt) - 1] - lowered) < 1e-6)
        #expect(left[Int(muteAt)] < left[Int(muteAt) - 1])
        let fade = 20 * rate / 1000
        #expect(left[Int(muteAt) + fade - 2] > 0, "the mute's fade is shorter than 20 ms")
        #expect(left[(Int(muteAt) + fade - 1)...].allSatisfy { $0 == 0 })
        #expect(run.mixer.controls.lateChanges == 0)
    }

    @Test func aChangeForASampleAlreadyMixedAppliesAtTheNextBlockAndIsCounted() throws {
        let mixer = AudioMixer()
        _ = mixer.mix(["mic1": AudioSignals.constant(0.5, frames: 480)], from: 0, frames: 480)
        mixer.controls.post(.input("mic1", try MixerInputSettings(muted: true, fadeMS: 0)), at: 100)
        let chunk = mixer.mix(["mic1": AudioSignals.constant(0.5, frames: 480)], from: 480, frames: 480)
        #expect(mixer.controls.lateChanges == 1)
        // The chunk holds samples 384..<864: unchanged before 480, fading from 480.
        let left = AudioSignals.channel(0, of: chunk.samples)
        #expect(chunk.firstSample == 480 - Int64(AudioMixer.latency))
        #expect(left[AudioMixer.latency - 1] == 0.5)
        #expect(left[AudioMixer.latency] < 0.5)
    }

    @Test func aJumpOnTheTimelineClearsTheDelayLines() throws {
        let mixer = AudioMixer()
        mixer.controls.post(.input("mic1", try MixerInputSettings(delayMS: 100)), at: 0)
        for start in stride(from: 0, to: 9600, by: 480) {
            _ = mixer.mix(["mic1": AudioSignals.constant(0.5, frames: 480)], from: Int64(start), frames: 480)
        }
        // 100 ms later than the jump's first sample lies where samples 1000..<5800 were kept (the delay
        // line is 65536 frames): uncleared, they would play again.
        let jump: Int64 = 10 * 65_536 + 5_800
        let chunk = mixer.mix([:], from: jump, frames: 4800)
        #expect(chunk.firstSample == jump - Int64(AudioMixer.latency))
        #expect(chunk.samples[(2 * AudioMixer.latency)...].allSatisfy { $0 == 0 })
    }

    @Test func nothingBeforeTheOriginIsHandedOn() throws {
        // By default the first call's own first sample: the limiter's 2 ms start-up delay is cut.
        let first = AudioMixer()
        let opening = first.mix(["mic1": AudioSignals.constant(0.5, frames: 480)], from: 1000, frames: 480)
        #expect(opening.firstSample == 1000 && opening.frameCount == 480 - AudioMixer.latency)
        let next = first.mix(["mic1": AudioSignals.constant(0.5, frames: 480)], from: 1480, frames: 480)
        #expect(next.firstSample == 1480 - Int64(AudioMixer.latency) && next.frameCount == 480)
        // Set by a caller that mixes a pre-roll first: the spans before it give nothing (an empty chunk at
        // its end), the one across it from the origin on, and nothing is lost or repeated after it.
        let preRolled = AudioMixer()
        preRolled.origin = 1200
        let before = preRolled.mix([:], from: 0, frames: 480)
        #expect(before.frameCount == 0 && before.firstSample == 480 - Int64(AudioMixer.latency))
        let across = preRolled.mix(["mic1": AudioSignals.constant(0.5, frames: 480)], from: 960, frames: 480)
        #expect(across.firstSample == 1200 && across.frameCount == 960 + 480 - AudioMixer.latency - 1200)
        let after = preRolled.mix(["mic1": AudioSignals.constant(0.5, frames: 480)], from: 1440, frames: 480)
        #expect(after.firstSample == across.firstSample + Int64(across.frameCount) && after.frameCount == 480)
    }

    @Test func aDelayIsExactToTheSample() throws {
        var click = AudioSignals.constant(0, frames: rate)
        click[2 * 10_000] = 0.5
        click[2 * 10_000 + 1] = 0.5
        var run = MixerRun()
        run.signals = ["mic1": click, "mic2": click]
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(pan: .position(-1), delayMS: 40)), at: 0)
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(pan: .position(1))), at: 0)
        let program = run.run(frames: rate)
        let left = AudioSignals.channel(0, of: program), right = AudioSignals.channel(1, of: program)
        #expect(left.firstIndex { $0 != 0 } == 10_000 + 1920, "40 ms at 48 kHz is 1920 samples")
        #expect(left.lastIndex { $0 != 0 } == 10_000 + 1920)
        #expect(left[10_000 + 1920] == 0.5)
        #expect(right.firstIndex { $0 != 0 } == 10_000)
    }

    @Test func panAndMonoToBoth() throws {
        var run = MixerRun()
        run.signals = ["mic1": AudioSignals.tone(frequency: 440, peak: 0.25, frames: rate),
                       "mic2": AudioSignals.tone(frequency: 1000, peak: 0.2, frames: rate, channel: 0)]
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(pan: .position(0.5))), at: 0)
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(pan: .monoToBoth)), at: 0)
        let program = run.run(frames: rate)
        let left = AudioSignals.channel(0, of: program)[4800..<43_200], right = AudioSignals.channel(1, of: program)[4800..<43_200]
        #expect(abs(AudioSignals.goertzelAmplitude(left, frequency: 440) - 0.125) < 0.001)
        #expect(abs(AudioSignals.goertzelAmplitude(right, frequency: 440) - 0.25) < 0.001)
        // A microphone on the left channel only, heard on both at half its level ((L + R) / 2).
        #expect(abs(AudioSignals.goertzelAmplitude(left, frequency: 1000) - 0.1) < 0.001)
        #expect(abs(AudioSignals.goertzelAmplitude(right, frequency: 1000) - 0.1) < 0.001)
    }

    @Test func anInputFollowingACameraComesUpAtTheCutAndDownWhenItLeaves() throws {
        var run = MixerRun()
        run.signals = ["mic1": AudioSignals.constant(0.25, frames: 2 * rate), "mic2": AudioSignals.constant(0.125, frames: 2 * rate)]
        let cut: Int64 = 30_017, away: Int64 = 70_003
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(pan: .position(-1), follow: "cam1", fadeMS: 100)), at: 0)
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(pan: .position(1), follow: "interview", fadeMS: 100)), at: 0)
        run.mixer.controls.post(.onAir(["cam2"]), at: 0)
        run.mixer.controls.post(.onAir(["cam1", "interview", "cam2"]), at: cut)
        run.mixer.controls.post(.onAir(["cam2"]), at: away)
        let program = run.run(frames: 2 * rate)
        let left = AudioSignals.channel(0, of: program), right = AudioSignals.channel(1, of: program)
        let fade = 100 * rate / 1000
        for (side, level) in [(left, Float(0.25)), (right, Float(0.125))] {
            #expect(side[..<Int(cut)].allSatisfy { $0 == 0 }, "up before the cut")
            #expect(side[Int(cut)] > 0 && side[Int(cut)] < level / 100)
            #expect(side[Int(cut) + fade - 2] < level)
            #expect(side[(Int(cut) + fade)..<Int(away)].allSatisfy { abs($0 - level) < 1e-6 })
            #expect(side[Int(away)] < side[Int(away) - 1])
            #expect(side[(Int(away) + fade)...].allSatisfy { $0 == 0 })
        }
    }

    @Test func aMissingInputIsSilenceInItsOwnPartOnly() throws {
        var run = MixerRun()
        run.signals = ["mic1": AudioSignals.tone(frequency: 440, peak: 0.25, frames: 2 * rate),
                       "mic2": AudioSignals.tone(frequency: 1000, peak: 0.25, frames: 2 * rate)]
        run.missing = { name, start in name == "mic2" && start >= 24_000 && start < 72_000 }
        let left = AudioSignals.channel(0, of: run.run(frames: 2 * rate))
        for window in stride(from: 0, to: 2 * rate - 4800, by: 4800) {
            let part = left[window..<(window + 4800)]
            let low = AudioSignals.goertzelAmplitude(part, frequency: 440), high = AudioSignals.goertzelAmplitude(part, frequency: 1000)
            #expect(abs(low - 0.25) < 0.001, "440 Hz at \(low) in the window from \(window)")
            if window >= 24_000 && window + 4800 <= 72_000 {
                #expect(high < 1e-6, "1 kHz at \(high) while mic2 is missing (window from \(window))")
            } else if window + 4800 <= 24_000 || window >= 72_000 {
                #expect(abs(high - 0.25) < 0.001, "1 kHz at \(high) in the window from \(window)")
            }
        }
    }

    @Test func samplesThatAreNotNumbersAreSilenceAndPoisonNothing() throws {
        var broken = AudioSignals.tone(frequency: 1000, peak: 0.25, frames: rate)
        for index in stride(from: 4800, to: 2 * rate, by: 977) { broken[index] = [Float.nan, .infinity, -.infinity][index % 3] }
        var run = MixerRun()
        run.signals = ["mic1": broken, "mic2": AudioSignals.tone(frequency: 440, peak: 0.25, frames: rate)]
        let program = run.run(frames: rate)
        #expect(program.allSatisfy { $0.isFinite })
        let left = AudioSignals.channel(0, of: program)[4800..<43_200]
        #expect(abs(AudioSignals.goertzelAmplitude(left, frequency: 440) - 0.25) < 0.001)
        let loudness = run.mixer.controls.meters.loudness
        #expect(loudness.integratedLUFS?.isFinite == true && loudness.truePeakDBTP?.isFinite == true)
    }

    @Test func metersReadEachInputAfterItsFaderAndTheProgram() throws {
        var run = MixerRun()
        run.signals = ["mic1": AudioSignals.tone(frequency: 1000, peak: 0.5, frames: rate),
                       "mic2": AudioSignals.tone(frequency: 440, peak: 0.5, frames: rate)]
        run.mixer.controls.post(.input("mic1", try MixerInputSettings(gainDB: -6)), at: 0)
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(muted: true)), at: 0)
        _ = run.run(frames: rate)
        let meters = run.mixer.controls.meters
        let mic1 = try #require(meters.inputs["mic1"]), mic2 = try #require(meters.inputs["mic2"])
        #expect(abs(mic1.peakDBFS[0] - (decibels(0.5) - 6)) < 0.05)
        #expect(abs(mic1.rmsDBFS[0] - (decibels(0.5 / 2.0.squareRoot()) - 6)) < 0.05)
        #expect(mic2.peakDBFS == [AudioLevels.floor, AudioLevels.floor])
        #expect(abs(meters.program.peakDBFS[1] - (decibels(0.5) - 6)) < 0.05)
        #expect(meters.end >= Int64(rate) - 4800)
        let momentary = try #require(meters.loudness.momentaryLUFS)
        #expect(momentary < -9 && momentary > -15)
    }

    @Test func aRemovedInputLeavesTheMixItsMetersAndItsSettingsAtItsSample() throws {
        var run = MixerRun()
        let removeAt: Int64 = 24_000
        // mic2 stops coming at the removal (its source is gone), as `ProgramAudio` hands the names.
        run.signals = ["mic1": AudioSignals.tone(frequency: 440, peak: 0.25, frames: rate),
                       "mic2": AudioSignals.tone(frequency: 1000, peak: 0.25, frames: rate)]
        run.missing = { name, start in name == "mic2" && start >= removeAt }
        run.mixer.controls.post(.input("mic2", try MixerInputSettings(gainDB: -6)), at: 0)
        run.mixer.controls.post(.remove("mic2"), at: removeAt)
        let left = AudioSignals.channel(0, of: run.run(frames: rate))
        let before = left[4800..<19_200], after = left[28_800..<43_200]  // whole cycles of both tones
        #expect(abs(decibels(AudioSignals.goertzelAmplitude(before, frequency: 1000) / 0.25) - -6) < 0.05)
        #expect(AudioSignals.goertzelAmplitude(after, frequency: 1000) < 1e-6)
        #expect(abs(AudioSignals.goertzelAmplitude(after, frequency: 440) - 0.25) < 0.001, "the other input goes on")
        #expect(run.mixer.inputNames == ["mic1"] && run.mixer.controls.meters.inputs.keys.sorted() == ["mic1"])
        // The name again (a source of that name added later): a new strip, at unity, not at its old -6 dB.
        let chunk = run.mixer.mix(["mic2": AudioSignals.constant(0.5, frames: 4800)], from: Int64(rate + AudioMixer.latency), frames: 4800)
        #expect(run.mixer.inputNames == ["mic1", "mic2"])
        #expect(abs(AudioSignals.channel(0, of: chunk.samples).last! - 0.5) < 1e-6)
    }
}
