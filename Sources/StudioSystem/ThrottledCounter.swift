/// Counts always, reports at most once per `interval` (the rate limit of drop and skip warnings: under
/// sustained overload a stage loses up to a frame per tick, and one event per loss would flood the log
/// and the event store). The first count is reported at once; later ones are summed and reported by the
/// first `note` or `due` once the interval has passed; `flush` takes whatever is left (the stage is
/// finishing). Each report carries the counts since the previous one and the running total, so the
/// reports add up to every count. Pure logic: time (monotonic ns) comes in as arguments.
public struct ThrottledCounter: Sendable {
    public struct Report: Equatable, Sendable {
        /// Counted since the previous report.
        public var count: Int
        /// Counted in all.
        public var total: Int

        public init(count: Int, total: Int) {
            self.count = count
            self.total = total
        }
    }

    /// Five seconds: the interval of the server's drop and skip warnings.
    public static let defaultInterval: UInt64 = 5_000_000_000

    /// Nanoseconds between reports.
    public let interval: UInt64
    public private(set) var total = 0
    /// Counted and not yet reported.
    public private(set) var pending = 0
    private var lastReport: UInt64?

    public init(interval: UInt64 = ThrottledCounter.defaultInterval) { self.interval = interval }

    /// Counts `count` (0 only looks whether a report is due) at `now`; returns the report to emit, if due.
    public mutating func note(_ count: Int = 1, at now: UInt64) -> Report? {
        total += count
        pending += count
        return due(at: now)
    }

    /// The pending counts, if there are some and the interval since the last report has passed.
    public mutating func due(at now: UInt64) -> Report? {
        guard pending > 0 else { return nil }
        if let lastReport, now < lastReport + interval { return nil }
        lastReport = now
        return take()
    }

    /// Whatever is pending, interval or not.
    public mutating func flush() -> Report? { pending > 0 ? take() : nil }

    private mutating func take() -> Report {
        defer { pending = 0 }
        return Report(count: pending, total: total)
    }
}
