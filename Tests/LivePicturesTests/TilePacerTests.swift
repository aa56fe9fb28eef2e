import Testing
import LivePictures

/// The tile thread's pacing with made-up times (no clock, no threads).
@Suite struct TilePacerTests {
    let ms: UInt64 = 1_000_000

    @Test func roundsFollowThePeriodAndAnOverrunSkipsRatherThanQueues() {
        var pacer = TilePacer(period: 100 * ms)
        #expect(pacer.decide(now: 0, cpu: 0, lateTicks: 0) == .run)
        #expect(pacer.finishRound(startedAt: 0, now: 10 * ms) == (100 * ms, 0))
        #expect(pacer.decide(now: 100 * ms, cpu: 0, lateTicks: 0) == .run)
        // This round took 350 ms: the rounds due at 200, 300 and 400 ms are skipped; the next is a period on.
        let late = pacer.finishRound(startedAt: 100 * ms, now: 450 * ms)
        #expect(late.overrun == 3)
        #expect(late.next == 550 * ms)
        #expect(pacer.finishRound(startedAt: 550 * ms, now: 560 * ms) == (650 * ms, 0))
    }

    @Test func lateProgramTicksSkipThisRoundAndTheBackoff() {
        var pacer = TilePacer(period: 100 * ms, backoffRounds: 2)
        #expect(pacer.decide(now: 0, cpu: 0, lateTicks: 5) == .run, "late ticks from before the tiles ran do not count")
        #expect(pacer.decide(now: 100 * ms, cpu: 0, lateTicks: 6) == .programBehind)
        #expect(pacer.decide(now: 200 * ms, cpu: 0, lateTicks: 6) == .programBehind)
        #expect(pacer.decide(now: 300 * ms, cpu: 0, lateTicks: 6) == .programBehind)
        #expect(pacer.decide(now: 400 * ms, cpu: 0, lateTicks: 6) == .run)
    }

    @Test func aSpentBudgetSkipsTheRestOfTheSecond() {
        var pacer = TilePacer(period: 100 * ms, budget: 0.1)
        #expect(pacer.decide(now: 0, cpu: 1_000 * ms, lateTicks: 0) == .run)
        #expect(pacer.decide(now: 100 * ms, cpu: 1_060 * ms, lateTicks: 0) == .run)
        // 100 ms of CPU spent in this second's window: skipped until the window ends.
        #expect(pacer.decide(now: 200 * ms, cpu: 1_100 * ms, lateTicks: 0) == .overBudget)
        #expect(pacer.decide(now: 900 * ms, cpu: 1_100 * ms, lateTicks: 0) == .overBudget)
        #expect(pacer.decide(now: 1_000 * ms, cpu: 1_100 * ms, lateTicks: 0) == .run)
        #expect(pacer.decide(now: 1_100 * ms, cpu: 1_150 * ms, lateTicks: 0) == .run)
    }

    @Test func goingIdleStartsAfresh() {
        var pacer = TilePacer(period: 100 * ms, backoffRounds: 5)
        _ = pacer.decide(now: 0, cpu: 0, lateTicks: 0)
        #expect(pacer.decide(now: 100 * ms, cpu: 0, lateTicks: 1) == .programBehind)
        _ = pacer.finishRound(startedAt: 100 * ms, now: 110 * ms)
        pacer.idle()
        #expect(pacer.dueTime == nil)
        #expect(pacer.decide(now: 5_000 * ms, cpu: 0, lateTicks: 1) == .run)
    }
}
