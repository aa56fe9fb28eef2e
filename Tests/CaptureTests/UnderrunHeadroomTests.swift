import Testing
@testable import Capture

/// The headroom underruns add to a jitter buffer's target, and how it comes off again, on program frames.
@Suite struct UnderrunHeadroomTests {
    let rate = 48_000

    /// Two underruns at the start add two quanta; two minutes without one take 20 ms off, two more the
    /// next 20 ms, and nothing goes below zero.
    @Test func aCalmStretchTakesTheHeadroomOffStepByStep() {
        var headroom = UnderrunHeadroom(rate: rate)
        headroom.underrun(step: 1024)
        headroom.underrun(step: 1024)
        #expect(headroom.extra == 2048)
        var relaxedAt: [Int] = []
        for block in 0..<(6 * 60 * 100) where headroom.played(frames: 480, left: 2048) { relaxedAt.append(block) }
        // 120 s, 240 s, 360 s (each stretch counted from the last relaxation): 960 + 960 + the last 128 frames.
        #expect(relaxedAt == [11_999, 23_999, 35_999], "\(relaxedAt)")
        #expect(headroom.extra == 0 && headroom.relaxations == 3)
        let more = headroom.played(frames: 480 * 100 * 200, left: 2048)
        #expect(!more, "nothing to take off")
    }

    /// A calm stretch in which the buffer once held less than 20 ms + 5 ms after a read (the jitter it
    /// sees would empty a buffer 20 ms smaller) takes nothing off; the next stretch, roomy all along, does.
    @Test func aStretchInWhichTheBufferRanLowTakesNothingOff() {
        var headroom = UnderrunHeadroom(rate: rate)
        headroom.underrun(step: 2048)
        let low = headroom.played(frames: 60 * 48_000, left: 1199)
        let lowStretch = headroom.played(frames: 60 * 48_000, left: 4000)
        #expect(!low && !lowStretch && headroom.extra == 2048)
        let roomy = headroom.played(frames: 120 * 48_000, left: 1200)
        #expect(roomy && headroom.extra == 2048 - 960)
    }

    /// An underrun soon after a relaxation (the buffer had to grow again at once) doubles the calm
    /// stretch, up to an hour; an underrun long after one does not.
    @Test func aBufferThatMustGrowAgainAtOnceShrinksMoreRarely() {
        let second = 48_000
        var headroom = UnderrunHeadroom(rate: rate)
        headroom.underrun(step: 1024)
        #expect(headroom.calm == 120 * 48_000)
        let first = headroom.played(frames: 120 * second, left: 2048)
        #expect(first)
        headroom.underrun(step: 1024)  // at once
        #expect(headroom.calm == 240 * 48_000)
        let early = headroom.played(frames: 239 * second, left: 2048), due = headroom.played(frames: second, left: 2048)
        #expect(!early && due)
        let notYet = headroom.played(frames: 240 * second - 1, left: 2048)
        #expect(!notYet)
        headroom.underrun(step: 1024)  // within the (doubled) stretch of the last relaxation
        #expect(headroom.calm == 480 * 48_000)
        for _ in 0..<10 {
            _ = headroom.played(frames: Int(headroom.calm), left: 2048)
            headroom.underrun(step: 1024)
        }
        #expect(headroom.calm == 3600 * 48_000, "at most an hour")
        // Long after a relaxation (that took all of it off), an underrun leaves the stretch as it is.
        var calm = UnderrunHeadroom(rate: rate)
        calm.underrun(step: 960)
        let relaxed = calm.played(frames: 120 * second, left: 2048)
        _ = calm.played(frames: 121 * second, left: 2048)
        calm.underrun(step: 1024)
        #expect(relaxed && calm.calm == 120 * 48_000)
    }
}
