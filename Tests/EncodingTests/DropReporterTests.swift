import Testing
@testable import Encoding

private func drop(_ reporter: inout DropReporter, _ now: UInt64) -> DropReporter.Report? { reporter.noteDrop(at: now) }
private func due(_ reporter: inout DropReporter, _ now: UInt64) -> DropReporter.Report? { reporter.due(at: now) }
private func flush(_ reporter: inout DropReporter) -> DropReporter.Report? { reporter.flush() }

/// The `frames_dropped` rate limit, with time as an argument (deterministic).
@Suite struct DropReporterTests {
    let second: UInt64 = 1_000_000_000

    @Test func atMostOneReportPerIntervalCarryingTheDropsSinceTheLastOne() {
        var reporter = DropReporter(interval: 5 * second)
        let t0 = 100 * second
        // Sustained overload: a drop every program tick (30/s) for 12 s.
        var reports: [(time: UInt64, report: DropReporter.Report)] = []
        for tick in 0..<(12 * 30) {
            let now = t0 + UInt64(tick) * second / 30
            if let report = reporter.noteDrop(at: now) { reports.append((now, report)) }
        }
        #expect(reports.map(\.report) == [.init(dropped: 1, total: 1), .init(dropped: 150, total: 151), .init(dropped: 150, total: 301)])
        #expect(reports.map(\.time) == [t0, t0 + 5 * second, t0 + 10 * second])
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $1.time - $0.time >= 5 * second })
        #expect(reporter.total == 360 && reporter.pending == 59)
        // Nothing due before the interval; the stage's finish takes the rest.
        #expect(due(&reporter, t0 + 14 * second) == nil)
        #expect(flush(&reporter) == .init(dropped: 59, total: 360))
        #expect(flush(&reporter) == nil)
        #expect(due(&reporter, t0 + 100 * second) == nil, "nothing pending, nothing reported")
    }

    @Test func dropsThatStopAreReportedOnceTheIntervalHasPassed() {
        var reporter = DropReporter(interval: 5 * second)
        #expect(drop(&reporter, 10 * second) == .init(dropped: 1, total: 1))
        #expect(drop(&reporter, 11 * second) == nil)
        #expect(drop(&reporter, 12 * second) == nil)
        // The stage thread polls while it keeps encoding: due at 15 s, not before.
        #expect(due(&reporter, 14 * second) == nil)
        #expect(due(&reporter, 15 * second) == .init(dropped: 2, total: 3))
        #expect(due(&reporter, 30 * second) == nil)
        // A new run after a quiet spell is reported at once.
        #expect(drop(&reporter, 60 * second) == .init(dropped: 1, total: 4))
    }
}
