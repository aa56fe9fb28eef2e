import Testing
import StudioCore

/// A stinger's pictures and cut on the program's ticks, by the clock (`StingerTiming`).
@Suite struct StingerTimingTests {
    /// `count` pictures at `fps` (times rounded to whole ns as a container's time base gives them).
    private func timing(fps: Int64, count: Int) -> StingerTiming {
        let times = (0..<Int64(count)).map { ($0 * 1_000_000_000 + fps / 2) / fps }
        return StingerTiming(times: times, length: Int64(count) * 1_000_000_000 / fps)
    }

    @Test func a25fpsStingOnA30fpsProgramRepeatsEveryFifthPictureAndCutsAt400ms() {
        let sting = timing(fps: 25, count: 25)  // 1 s
        let rate = Rational(30)
        #expect(sting.frames(rate: rate) == 30)
        // Tick i is at i/30 s: the newest 25 fps picture by then is floor(i * 25 / 30).
        let shown = (0..<30).map { sting.picture(atFrame: $0, rate: rate) }
        #expect(shown == (0..<30).map { $0 * 25 / 30 }, "\(shown)")
        #expect(shown.last == 24 && Set(shown).count == 25)
        // 400 ms is tick 12 exactly: ticks 0...11 show A underneath, 12... B.
        #expect(sting.cutFrame(at: 400, rate: rate) == 12)
        #expect(sting.cutFrame(at: 401, rate: rate) == 13)
        #expect(sting.cutFrame(at: 0, rate: rate) == 0)
    }

    @Test func a60fpsStingOnA30fpsProgramShowsEveryOtherPicture() {
        let sting = timing(fps: 60, count: 45)  // 750 ms
        let rate = Rational(30)
        #expect(sting.frames(rate: rate) == 23)  // ticks at 0...733 ms start within it
        let shown = (0..<23).map { sting.picture(atFrame: $0, rate: rate) }
        #expect(shown == (0..<23).map { $0 * 2 }, "\(shown)")
        #expect(sting.cutFrame(at: 400, rate: rate) == 12)
    }

    @Test func aStingAtTheProgramsRateShowsEachPictureOnceAndNtscRatesKeepTheGrid() {
        let sting = timing(fps: 30, count: 30)
        #expect((0..<30).map { sting.picture(atFrame: $0, rate: Rational(30)) } == Array(0..<30))
        // 29.97: ticks slightly later than 30 fps pictures; still one each, the last on the 30th.
        let ntsc = Rational(30000, 1001)
        #expect(sting.frames(rate: ntsc) == 30)
        #expect((0..<30).map { sting.picture(atFrame: $0, rate: ntsc) } == Array(0..<30))
    }

    @Test func aCutPastTheLastTickIsTheEnd() {
        let sting = timing(fps: 25, count: 25)
        // 990 ms: no tick of the 30 starts at or after it, B only once the transition ends.
        #expect(sting.cutFrame(at: 990, rate: Rational(30)) == 30)
    }
}
