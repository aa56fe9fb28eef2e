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
    var ticks: [Int64] { all.map { $0.pts.count(at: Rig.rate) } }
}

private extension MediaTime {
    /// The frame index of this time at `rate` (the clock stamps exactly on the grid).
    func count(at rate: Rational) -> Int64 { microseconds * Int64(rate.numerator) / (Int64(rate.denominator) * 1_000_000) }
}

/// A started clock on a `ManualClock`, its source holding `first`, asleep until tick 1.
private struct Rig {
    static let rate = Rational(10)  // a tick every 100 ms
    static let tick: UInt64 = 100_000_000
    let clock = ManualClock()
    let frames = LatestValue<VideoFrame>()
    let submissions = Submissions()
    let source: SourceFrameClock
    let origin: UInt64

    init(first format: PixelFormat = .i420, width: Int = 64, height: Int = 36, staleAfter: Double = 10) {
        let frames = self.frames, submissions = self.submissions
        source = SourceFrameClock(name: "test.clock", staleAfterSeconds: staleAfter, clock: clock, frames: { frames },
                                  submit: { submissions.submit($0, $1) })
        origin = clock.now()
        frames.publish(VideoFrame.allocate(format: format, width: width, height: height, captureTime: origin, sequence: 1))
        source.start(grid: FrameGrid(origin: origin, rate: Self.rate))
        #expect(clock.waitForSleepers(1))
    }

    /// Runs the clock to tick `n` in 10 ms steps.
    func run(toTick n: UInt64) { #expect(clock.run(to: origin + n * Self.tick, step: Self.tick / 10)) }
}

/// The one-source frame clock on a `ManualClock`: every tick is placed by the test, whatever the load.
@Suite(.serialized) struct SourceFrameClockTests {
    @Test func submitsTheNewestFrameOnEachTickWithItsTimestamp() throws {
        let rig = Rig()
        defer { rig.source.stop() }
        #expect(rig.submissions.ticks == [0], "tick 0 is due at the origin")
        // A newer frame replaces the older one: the next tick takes it.
        let second = VideoFrame.allocate(format: .i420, width: 64, height: 36, captureTime: rig.origin + Rig.tick / 2, sequence: 2)
        rig.frames.publish(second)
        rig.run(toTick: 4)
        #expect(rig.submissions.ticks == [0, 1, 2, 3, 4])
        let all = rig.submissions.all
        #expect(all.first?.frame.sequence == 1 && all.dropFirst().allSatisfy { $0.frame.storage === second.storage },
                "I420 passes through unconverted")
        #expect(rig.source.statistics.framesSubmitted == 5 && rig.source.statistics.ticksMissed == 0)
    }

    @Test func doesNotSubmitAStaleFrame() throws {
        let rig = Rig(staleAfter: 0.25)
        defer { rig.source.stop() }
        rig.run(toTick: 5)
        // Ticks 0, 1, 2 see a frame at most 250 ms old; ticks 3, 4, 5 do not.
        #expect(rig.submissions.ticks == [0, 1, 2])
        #expect(rig.source.statistics.ticksWithoutFrame == 3)
    }

    @Test func convertsOtherFormatsToI420AtTheSourcesOwnSize() throws {
        let rig = Rig(first: .nv12, width: 96, height: 54)
        defer { rig.source.stop() }
        // The source changes size: the next frame is converted at the new size.
        rig.frames.publish(VideoFrame.allocate(format: .yuyv, width: 64, height: 36, captureTime: rig.origin))
        rig.run(toTick: 1)
        let all = rig.submissions.all
        #expect(all.count == 2)
        #expect(all.allSatisfy { $0.frame.format == .i420 })
        #expect(all.map(\.frame.width) == [96, 64] && all.map(\.frame.height) == [54, 36])
        #expect(rig.source.statistics.framesUnusable == 0)
    }

    @Test func skipsAndCountsTheTicksItMissed() throws {
        let rig = Rig()
        defer { rig.source.stop() }
        // The thread wakes 350 ms later in one go (a starved machine): ticks 1 and 2 are gone, tick 3 is due.
        rig.clock.advance(by: 3 * Rig.tick + Rig.tick / 2)
        #expect(rig.clock.waitForSleepers(1))
        #expect(rig.submissions.ticks == [0, 3])
        #expect(rig.source.statistics.ticksMissed == 2 && rig.source.statistics.framesSubmitted == 2)
    }
}
