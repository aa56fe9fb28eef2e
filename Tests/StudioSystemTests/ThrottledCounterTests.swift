import Testing
import StudioSystem

private typealias Report = ThrottledCounter.Report

/// The rate limit of the encoders' `frames_dropped` events and the ISO feeds' skip warnings, with time
/// as an argument (deterministic).
@Suite struct ThrottledCounterTests {
    let second: UInt64 = 1_000_000_000

    @Test func atMostOneReportPerIntervalCarryingTheCountsSinceTheLastOne() {
        var counter = ThrottledCounter(interval: 5 * second)
        let t0 = 100 * second
        // Sustained overload: a drop every program tick (30/s) for 12 s.
        var reports: [(time: UInt64, report: Report)] = []
        for tick in 0..<(12 * 30) {
            let now = t0 + UInt64(tick) * second / 30
            if let report = counter.note(at: now) { reports.append((now, report)) }
        }
        #expect(reports.map(\.report) == [.init(count: 1, total: 1), .init(count: 150, total: 151), .init(count: 150, total: 301)])
        #expect(reports.map(\.time) == [t0, t0 + 5 * second, t0 + 10 * second])
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $1.time - $0.time >= 5 * second })
        #expect(counter.total == 360 && counter.pending == 59)
        // Nothing due before the interval; the stage's finish takes the rest.
        #expect(counter.due(at: t0 + 14 * second) == nil)
        #expect(counter.flush() == .init(count: 59, total: 360))
        #expect(counter.flush() == nil)
        #expect(counter.due(at: t0 + 100 * second) == nil, "nothing pending, nothing reported")
    }

    @Test func countsThatStopAreReportedOnceTheIntervalHasPassed() {
        var counter = ThrottledCounter(interval: 5 * second)
        #expect(counter.note(at: 10 * second) == .init(count: 1, total: 1))
        #expect(counter.note(at: 11 * second) == nil)
        #expect(counter.note(at: 12 * second) == nil)
        // The stage thread polls while it keeps encoding: due at 15 s, not before.
        #expect(counter.due(at: 14 * second) == nil)
        #expect(counter.due(at: 15 * second) == .init(count: 2, total: 3))
        #expect(counter.due(at: 30 * second) == nil)
        // A new run after a quiet spell is reported at once.
        #expect(counter.note(at: 60 * second) == .init(count: 1, total: 4))
    }

    /// The ISO feed's use: several skipped ticks at a time, and 0 on a tick that skipped nothing.
    @Test func skipWarningsAreAtMostOnePerIntervalAndAddUp() {
        var counter = ThrottledCounter(interval: 5_000_000_000)
        #expect(counter.note(0, at: 1) == nil)
        #expect(counter.note(2, at: 10)?.count == 2)
        #expect(counter.note(3, at: 1_000_000_000) == nil)
        #expect(counter.note(1, at: 4_000_000_000) == nil)
        #expect(counter.pending == 4)
        #expect(counter.note(0, at: 5_000_000_010) == .init(count: 4, total: 6))
        #expect(counter.pending == 0)
        #expect(ThrottledCounter().interval == 5 * second, "the server's warnings: one per 5 s")
    }
}
