import Testing
import StudioSystem

@Suite struct FrameGridTests {
    /// The ISO feeds' use: ticks on the program timeline at the camera's NTSC rate.
    @Test func ticksAreOnTheProgramTimelineAndSkippedTicksAreFound() {
        let grid = FrameGrid(origin: 1_000_000_000, rate: Rational(30000, 1001))
        #expect(grid.time(ofFrame: 0) == 1_000_000_000)
        #expect(grid.time(ofFrame: 30) == 1_000_000_000 + 1_001_000_000)
        #expect(grid.frame(at: 500) == 0)
        #expect(grid.frame(at: grid.time(ofFrame: 7)) == 7)
        #expect(grid.frame(at: grid.time(ofFrame: 7) - 1) == 6)
        // Ten hours in, still exact to the tick.
        let late: Int64 = 30 * 3600 * 10
        #expect(grid.frame(at: grid.time(ofFrame: late) + 1) == late)
    }

    @Test func ntscRateIsExactWithoutAccumulatedRounding() {
        let origin: UInt64 = 5_000_000_000
        let grid = FrameGrid(origin: origin, rate: Rational(30000, 1001))
        // 30000 frames take exactly 1001 s; a Double accumulation of 1001/30000 s would be off.
        #expect(grid.time(ofFrame: 30_000) == origin + 1001 * 1_000_000_000)
        #expect(grid.pts(ofFrame: 30_000) == MediaTime(microseconds: 1_001_000_000))
        #expect(grid.pts(ofFrame: 1) == MediaTime(microseconds: 33_367))  // 33366.67 us, rounded
        // Frame n is due at the first nanosecond at or after n * 1001/30000 s, and is the frame of that time.
        for n: Int64 in [1, 2, 3, 29_999, 1_234_567, 30 * 86_400 * 365] {
            let time = grid.time(ofFrame: n)
            let exactNumerator = UInt128(n) * 1001 * 1_000_000_000  // (time - origin) * 30000 >= this, by < 30000
            let scaled = UInt128(time - origin) * 30000
            #expect(scaled >= exactNumerator && scaled - exactNumerator < 30000, "frame \(n) due at \(time)")
            #expect(grid.frame(at: time) == n)
            #expect(grid.frame(at: time - 1) == n - 1)
        }
    }

    /// A passthrough ISO's stamp for a camera frame: the tick that first sees it, as the frame clock would.
    @Test func aFrameCapturedAtATimeBelongsToTheFirstTickAtOrAfterIt() {
        let grid = FrameGrid(origin: 2_000_000_000, rate: Rational(30000, 1001))
        #expect(grid.firstFrame(atOrAfter: 1_000_000_000) == 0, "before the origin: tick 0")
        #expect(grid.firstFrame(atOrAfter: grid.origin) == 0)
        for n: Int64 in [1, 7, 29_999, 1_234_567] {
            let due = grid.time(ofFrame: n)
            #expect(grid.firstFrame(atOrAfter: due) == n, "exactly due: that tick")
            #expect(grid.firstFrame(atOrAfter: due - 1) == n, "just before: that tick")
            #expect(grid.firstFrame(atOrAfter: due + 1) == n + 1, "just after: the next")
        }
    }

    @Test func nextTickIsStrictlyAfterNow() {
        let grid = FrameGrid(origin: 1_000, rate: Rational(25))
        let period: UInt64 = 40_000_000
        #expect(grid.nextFrame(after: 0) == 0)
        #expect(grid.nextTick(after: 0) == 1_000)
        #expect(grid.nextFrame(after: 1_000) == 1)
        #expect(grid.nextTick(after: 1_000) == 1_000 + period)
        #expect(grid.nextTick(after: 1_000 + period - 1) == 1_000 + period)
        #expect(grid.nextTick(after: 1_000 + period) == 1_000 + 2 * period)
        #expect(grid.nextTick(after: 1_000 + 10 * period + 7) == 1_000 + 11 * period)
    }

    @Test func audioSamplesDueAreTheSampleIndexOfNow() {
        let grid = FrameGrid(origin: 2_000_000_000, rate: Rational(48_000))
        #expect(grid.frame(at: 1_000_000_000) == 0)
        #expect(grid.frame(at: 2_000_000_000 + 250_000_000) == 12_000)
        #expect(grid.frame(at: 2_000_000_000 + 1_000_000_000 - 1) == 47_999)
        #expect(grid.pts(ofFrame: 96_000) == MediaTime(microseconds: 2_000_000))
    }
}
