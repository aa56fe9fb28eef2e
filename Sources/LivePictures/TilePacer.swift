/// Decides, round by round, whether the tile thread makes pictures now or skips the round because the
/// machine is behind. Pure logic: the time, the thread's CPU time and the program's late ticks come in
/// as arguments (tests drive it with made-up numbers).
///
/// - **Program behind**: the program thread's late ticks grew since the previous round: the program
///   woke too late for a frame, so the tiles give the CPU back: this round and the next `backoffRounds`
///   are skipped.
/// - **CPU budget**: the tile thread may use `budget` CPU seconds per second of wall time, counted over
///   one-second windows; once a window's budget is spent, the rest of that window's rounds are skipped.
/// - **Overrun**: a round whose pictures took longer than the period makes the rounds that fell due
///   meanwhile skipped, not queued: the next round is one period after the late one ends.
public struct TilePacer: Sendable {
    public enum Decision: Sendable, Equatable {
        case run
        case programBehind
        case overBudget
    }

    /// Nanoseconds between rounds (100 ms: 10 pictures a second per tile).
    public let period: UInt64
    /// CPU seconds per second the tile thread may use.
    public let budget: Double
    /// Rounds skipped after the program's late ticks grew (beyond the round that saw it).
    public let backoffRounds: Int

    private var lastLateTicks: Int64?
    private var backoffLeft = 0
    private var windowStart: UInt64?
    private var windowCPU: UInt64 = 0
    private var nextDue: UInt64?

    public init(period: UInt64 = 100_000_000, budget: Double = 0.25, backoffRounds: Int = 10) {
        self.period = max(1, period)
        self.budget = budget
        self.backoffRounds = max(0, backoffRounds)
    }

    /// When the next round is due (nil before the first).
    public var dueTime: UInt64? { nextDue }

    /// Called when a round falls due at `now` (wall clock), with the tile thread's CPU time so far
    /// (`cpu`, nanoseconds) and the program's late ticks so far.
    public mutating func decide(now: UInt64, cpu: UInt64, lateTicks: Int64) -> Decision {
        defer { lastLateTicks = lateTicks }
        if let last = lastLateTicks, lateTicks > last {
            backoffLeft = backoffRounds
            return .programBehind
        }
        if backoffLeft > 0 {
            backoffLeft -= 1
            return .programBehind
        }
        if let start = windowStart, now >= start, now - start < 1_000_000_000 {
            if Double(cpu &- windowCPU) >= budget * 1e9 { return .overBudget }
        } else {
            windowStart = now
            windowCPU = cpu
        }
        return .run
    }

    /// Called when a round (run or skipped) ends at `now`: when the next one is due, and how many rounds
    /// fell due while this one ran (skipped, not queued).
    public mutating func finishRound(startedAt start: UInt64, now: UInt64) -> (next: UInt64, overrun: Int) {
        let due = (nextDue ?? start) + period
        if now < due {
            nextDue = due
            return (due, 0)
        }
        let missed = Int((now - due) / period) + 1
        nextDue = now + period
        return (now + period, missed)
    }

    /// Forgets the schedule (the thread went idle: no one watched), so the next round is due at once.
    public mutating func idle() {
        nextDue = nil
        lastLateTicks = nil
        backoffLeft = 0
    }
}
