import Testing
import Synchronization
import Capture
import StudioCore
import StudioSystem
import Switcher

/// What the program's video and audio clocks hand on, in order.
private final class Program: Sendable {
    let videoPts = Mutex<[MediaTime]>([])
    let audio = Mutex<[AudioChunk]>([])
}

/// The whole process stands still (SIGSTOP, a VM pause): the video clock and the audio clock, on one
/// `ManualClock`, see time jump by 5 s at once. Their timelines must resume at the same program time.
@Suite(.serialized) struct StallTests {
    @Test func afterAStallAudioIsSilentForExactlyTheTimeVideoSkipped() throws {
        let format = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))
        let frame = 1.0 / 30
        let clock = ManualClock()
        let program = Program()
        let switcher = ProgramSwitcher(format: format, clock: clock, events: DiscardingEventSink()) { _, pts in
            program.videoPts.withLock { $0.append(pts) }
        }
        let tone = TestToneSource(signal: .standard, clock: clock) { chunk in program.audio.withLock { $0.append(chunk) } }
        let origin = clock.now()
        switcher.start(origin: origin)
        tone.start(origin: origin)
        defer { switcher.stop(); tone.stop() }
        #expect(clock.waitForSleepers(2), "the clock threads never slept")
        #expect(clock.run(to: origin + 1_000_000_000, step: 5_000_000, sleepers: 2))
        clock.advance(by: 5_000_000_000)  // nothing ran for 5 s
        #expect(clock.waitForSleepers(2), "the clock threads did not resume")
        #expect(clock.run(to: clock.now() + 500_000_000, step: 5_000_000, sleepers: 2))
        switcher.stop()
        tone.stop()

        // Video: the ticks of the stall are skipped, the pts stay on the grid.
        let video = program.videoPts.withLock { $0 }.map(\.seconds)
        let jumps = zip(video, video.dropFirst()).filter { $1 - $0 > 1.5 * frame }
        try #require(jumps.count == 1, "one skip in the video, found \(jumps)")
        let (lastBefore, firstAfter) = jumps[0]
        #expect(firstAfter - lastBefore > 4.9, "video skipped \(firstAfter - lastBefore) s")

        // Audio: one gap-free timeline from sample 0 (no hole for the player's clock to stumble on).
        let chunks = program.audio.withLock { $0 }
        var next: Int64 = 0
        for chunk in chunks {
            #expect(chunk.firstSample == next, "audio hole or overlap at sample \(next)")
            #expect(chunk.pts == MediaTime(count: chunk.firstSample, rate: Rational(48_000)))
            next = chunk.firstSample + Int64(chunk.frameCount)
        }
        // The stalled time is silence, in one run; the tone plays before and after it.
        let silent = chunks.filter { $0.samples.allSatisfy { $0 == 0 } }
        let firstSilent = try #require(silent.first, "no silence: the stalled time was filled with the tone").firstSample
        let endSilent = try #require(silent.last).firstSample + Int64(silent.last!.frameCount)
        #expect(silent.reduce(0) { $0 + Int64($1.frameCount) } == endSilent - firstSilent, "the silent chunks form one run")
        #expect(chunks.contains { $0.firstSample >= endSilent && !$0.samples.allSatisfy { $0 == 0 } }, "the tone resumed")
        let silenceStart = Double(firstSilent) / 48_000, silenceEnd = Double(endSilent) / 48_000
        // The silence covers what the video skipped: it starts during the video's last frame before the
        // stall (give or take one 10 ms audio wake-up) and stops where the video resumes, within a frame.
        #expect(silenceStart >= lastBefore - 0.01 && silenceStart <= lastBefore + frame + 0.01,
                "silence from \(silenceStart) s, the video's last frame before the stall at \(lastBefore) s")
        #expect(abs(silenceEnd - firstAfter) <= frame, "audio resumes at \(silenceEnd) s, video at \(firstAfter) s")
        // And the two stay together: both end within a frame of the time that passed.
        let elapsed = Double(clock.now() - origin) / 1e9
        #expect(abs(Double(next) / 48_000 - elapsed) <= 0.02, "audio ends at \(Double(next) / 48_000) s of \(elapsed) s")
        #expect(abs(try #require(video.last) - elapsed) <= frame + 0.005, "video ends at \(video.last!) s of \(elapsed) s")
    }
}
