/// Bounds the events of something that goes and comes back (a camera whose USB cable is going bad, lost and
/// back ten times a second), the way `ThrottledCounter` bounds drop reports, while keeping what the history
/// needs exact: the first `allowance` transitions of each `window` are written as they come; past them the
/// subject is *flapping*: its first loss is still written at once (an outage starts exactly when it did), the
/// other transitions are held and counted, and once it has been quiet for `settle` the episode ends: its final
/// state is written if it differs from the one written (the last return, with its own time), then one summary
/// with the counts. A long episode also gets a summary every `window`. So a flapping subject costs at most
/// `allowance` transitions, a loss, a return and a summary per window and episode, however fast it flaps, and
/// what was written pairs up (a loss, then a return) and ends in the subject's real state.
///
/// Pure logic: time (monotonic ns) comes in as arguments; `Held` is what the caller writes (its event).
public struct FlapLimiter<Held: Sendable>: Sendable {
    public enum Transition: Sendable { case lost, back }

    /// An episode's (or a window of it) counts: every transition while flapping, written or held.
    public struct Summary: Equatable, Sendable {
        public var lost: Int
        public var back: Int
        /// Monotonic ns of the first and the last transition counted.
        public var first: UInt64
        public var last: UInt64
        /// The episode is over (quiet for `settle`): the subject's state is the last one written.
        public var ended: Bool
        /// The subject's state at the last transition.
        public var isLost: Bool
    }

    public enum Output: Sendable {
        /// Write this event now (with its own time).
        case write(Held)
        case summary(Summary)
    }

    public let allowance: Int
    public let window: UInt64
    public let settle: UInt64

    private var windowStart: UInt64?
    private var writtenInWindow = 0
    /// The state the written events leave the subject in, and its real state.
    private var writtenLost = false
    private var actualLost = false
    /// While flapping: the episode's counts since its last summary, when that began, the newest held return.
    private var flapping = false
    private var counts: Summary?
    private var summaryStart: UInt64 = 0
    private var lastTransition: UInt64 = 0
    private var heldReturn: Held?

    /// Defaults: 6 transitions (three outages) a minute written as they come; an episode ends after 10 s quiet.
    public init(allowance: Int = 6, window: UInt64 = 60_000_000_000, settle: UInt64 = 10_000_000_000) {
        self.allowance = allowance
        self.window = window
        self.settle = settle
    }

    /// The subject went (`lost`) or came back at `now`; what to write, in order.
    public mutating func note(_ transition: Transition, _ event: Held, at now: UInt64) -> [Output] {
        var out = due(at: now)
        let lost = transition == .lost
        actualLost = lost
        if !flapping {
            if windowStart.map({ now >= $0 + window }) ?? true {
                windowStart = now
                writtenInWindow = 0
            }
            if writtenInWindow < allowance {
                writtenInWindow += 1
                writtenLost = lost
                out.append(.write(event))
                return out
            }
            flapping = true
            summaryStart = now
        }
        lastTransition = now
        var summary = counts ?? Summary(lost: 0, back: 0, first: now, last: now, ended: false, isLost: lost)
        if lost { summary.lost += 1 } else { summary.back += 1 }
        summary.last = now
        summary.isLost = lost
        counts = summary
        if lost && !writtenLost {
            // The outage starts now, exactly; the returns and losses after it wait for the episode's end.
            writtenLost = true
            out.append(.write(event))
        } else if !lost {
            heldReturn = event
        }
        return out
    }

    /// What is due at `now` without a transition: the end of a quiet episode (its final state and summary), or a
    /// long episode's summary of the last window. Call it now and then (a second apart is plenty).
    public mutating func due(at now: UInt64) -> [Output] {
        guard flapping else { return [] }
        if now >= lastTransition + settle { return end() }
        guard now >= summaryStart + window, let summary = counts else { return [] }
        counts = nil
        summaryStart = now
        return [.summary(summary)]
    }

    /// Whatever is held, due or not (the server is stopping): the final state and the summary.
    public mutating func flush() -> [Output] { flapping ? end() : [] }

    private mutating func end() -> [Output] {
        var out: [Output] = []
        if writtenLost && !actualLost, let heldReturn {
            writtenLost = false
            out.append(.write(heldReturn))
        }
        let last = counts?.last ?? lastTransition
        out.append(.summary(Summary(lost: counts?.lost ?? 0, back: counts?.back ?? 0, first: counts?.first ?? last, last: last,
                                    ended: true, isLost: actualLost)))
        flapping = false
        counts = nil
        heldReturn = nil
        return out
    }
}
