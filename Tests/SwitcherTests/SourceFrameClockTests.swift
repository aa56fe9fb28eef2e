import Testing
import Synchronization
import StudioCore
import StudioSystem
import Switcher

/// What a `SourceFrameClock` submitted.
private final class Submissions: Sendable {
    private let entries = Mutex<[(pts: MediaTime, frame: VideoFrame)]>([])
    func submit(_ frame: VideoFrame, _ pts: MediaTime) { entries.withLock { $0.append((pts, frame)) } }
    var all: [(pts: MediaTime, frame: VideoFrame)] { entries.withLock { $0 } }
    var ticks: [Int64] { all.map { $0.pts.count(at: Rational(10)) } }
}

private extension MediaTime {
    /// The frame index of this time at `rate` (the clock stamps exactly on the grid).
    func count(at rate: Rational) -> Int64 { microseconds * Int64(rate.numerator) / (Int64(rate.denominator) * 1_000_000) }
}

/// The one-source frame clock on a `ManualClock`: every tick is placed by the test, whatever the load.
@Suite(.serialized) struct SourceFrameClockTests {
    private let rate = Rational(10)  // a tick every 100 ms
    private let tick: UInt64 = 100_000_000

    private func make(_ clock: ManualClock, frames: LatestValue<VideoFrame>, submissions: Submissions,
                      staleAfter: Double = 10) -> SourceFrameClock {
        SourceFrameClock(name: "test.clock", staleAfterSeconds: staleAfter, clock: clock, frames: { frames },
                         submit: { submissions.submit($0, $1) })
    }

    @Test func submitsTheNewestFrameOnEachTickWithItsTimestamp() throws {
        let clock = ManualClock()
        let frames = LatestValue<VideoFrame>()
        let submissions = Submissions()
        let source = make(clock, frames: frames, submissions: submissions)
        let origin = clock.now()
        frames.publish(VideoFrame.allocate(format: .i420, width: 64, height: 36, captureTime: origin, sequence: 1))
        source.start(grid: FrameGrid(origin: origin, rate: rate))
        defer { source.stop() }
        #expect(clock.waitForSleepers(1))
        #expect(submissions.ticks == [0], "tick 0 is due at the origin")
        // A newer frame replaces the older one: the next tick takes it.
        let second = VideoFrame.allocate(format: .i420, width: 64, height: 36, captureTime: origin + tick / 2, sequence: 2)
        frames.publish(second)
        #expect(clock.run(to: origin + 4 * tick, step: tick / 10))
        #expect(submissions.ticks == [0, 1, 2, 3, 4])
        let all = submissions.all
        #expect(all.first?.frame.sequence == 1 && all.dropFirst().allSatisfy { $0.frame.storage === second.storage },
                "I420 passes through unconverted")
        #expect(source.statistics.framesSubmitted == 5 && source.statistics.ticksMissed == 0)
    }

    @Test func doesNotSubmitAStaleFrame() throws {
        let clock = ManualClock()
        let frames = LatestValue<VideoFrame>()
        let submissions = Submissions()
        let source = make(clock, frames: frames, submissions: submissions, staleAfter: 0.25)
        let origin = clock.now()
        frames.publish(VideoFrame.allocate(format: .i420, width: 64, height: 36, captureTime: origin))
        source.start(grid: FrameGrid(origin: origin, rate: rate))
        defer { source.stop() }
        #expect(clock.waitForSleepers(1))
        #expect(clock.run(to: origin + 5 * tick, step: tick / 10))
        // Ticks 0, 1, 2 see a frame at most 250 ms old; ticks 3, 4, 5 do not.
        #expect(submissions.ticks == [0, 1, 2])
        #expect(source.statistics.ticksWithoutFrame == 3)
    }

    @Test func convertsOtherFormatsToI420AtTheSourcesOwnSize() throws {
        let clock = ManualClock()
        let frames = LatestValue<VideoFrame>()
        let submissions = Submissions()
        let source = make(clock, frames: frames, submissions: submissions)
        let origin = clock.now()
        frames.publish(VideoFrame.allocate(format: .nv12, width: 96, height: 54, captureTime: origin))
        source.start(grid: FrameGrid(origin: origin, rate: rate))
        defer { source.stop() }
        #expect(clock.waitForSleepers(1))
        // The source changes size: the next frame is converted at the new size.
        frames.publish(VideoFrame.allocate(format: .yuyv, width: 64, height: 36, captureTime: origin))
        #expect(clock.run(to: origin + tick, step: tick / 10))
        let all = submissions.all
        #expect(all.count == 2)
        #expect(all.allSatisfy { $0.frame.format == .i420 })
        #expect(all.map(\.frame.width) == [96, 64] && all.map(\.frame.height) == [54, 36])
        #expect(source.statistics.framesUnusable == 0)
    }

    @Test func skipsAndCountsTheTicksItMissed() throws {
        let clock = ManualClock()
        let frames = LatestValue<VideoFrame>()
        let submissions = Submissions()
        let source = make(clock, frames: frames, submissions: submissions)
        let origin = clock.now()
        frames.publish(VideoFrame.allocate(format: .i420, width: 64, height: 36, captureTime: origin))
        source.start(grid: FrameGrid(origin: origin, rate: rate))
        defer { source.stop() }
        #expect(clock.waitForSleepers(1))
        // The thread wakes 350 ms later in one go (a starved machine): ticks 1 and 2 are gone, tick 3 is due.
        clock.advance(by: 3 * tick + tick / 2)
        #expect(clock.waitForSleepers(1))
        #expect(submissions.ticks == [0, 3])
        #expect(source.statistics.ticksMissed == 2 && source.statistics.framesSubmitted == 2)
    }
}
