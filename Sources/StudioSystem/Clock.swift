import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The clock a worker loop reads and sleeps on, in nanoseconds on CLOCK_MONOTONIC's scale. The server
/// runs every loop on `MonotonicClock`; tests hand the loops a `ManualClock` and move time by hand, so a
/// test of timing never depends on how busy the machine is.
///
/// `sleep(until:)` may return before `deadline` (a `ManualClock` returns at least every 50 ms of real
/// time so a stopping thread notices): callers read `now()` again and loop, or use
/// `sleep(until:unless:)`, which does.
public protocol Clock: Sendable {
    func now() -> UInt64
    func sleep(until deadline: UInt64)
}

extension Clock where Self == MonotonicClock {
    /// The real clock (the default of every worker loop).
    public static var monotonic: MonotonicClock { MonotonicClock() }
}

extension Clock {
    /// Sleeps until `deadline` unless `stop()` becomes true, looking at `stop` at least every `step`
    /// nanoseconds (of this clock's time, and on each early return of `sleep(until:)`): every 50 ms, so a
    /// stop is prompt at any frame rate; every half millisecond, to wait for something else's condition
    /// without a lock shared with it. Returns false if it stopped, true once `deadline` has passed.
    @discardableResult
    public func sleep(until deadline: UInt64, unless stop: () -> Bool, checkingEvery step: UInt64 = 50_000_000) -> Bool {
        while !stop() {
            let now = now()
            if now >= deadline { return true }
            sleep(until: min(deadline, now + max(step, 1)))
        }
        return false
    }
}

/// CLOCK_MONOTONIC in nanoseconds. The one clock that video and audio timestamps derive from.
/// `MonotonicClock.now()` reads it directly; an instance (`.monotonic`) is the `Clock` worker loops take.
public struct MonotonicClock: Clock {
    public init() {}

    public func now() -> UInt64 { Self.now() }
    public func sleep(until deadline: UInt64) { Self.sleep(until: deadline) }

    @inline(__always)
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Sleeps until the absolute monotonic time `deadline` (no drift from repeated relative sleeps).
    public static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        // clock_nanosleep returns the error number instead of setting errno; retry on EINTR.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    public static func sleep(nanoseconds: UInt64) { sleep(until: now() + nanoseconds) }
    public static func sleep(seconds: Double) { sleep(nanoseconds: UInt64(max(0, seconds) * 1e9)) }
}

/// A clock that moves only when a test moves it. Sleepers wake when `advance` passes their deadline
/// (and, so that a stopping worker is never stuck, at least every 50 ms of real time: `sleep(until:)`
/// may return early, as the protocol allows). `waitForSleepers` tells a test that the workers have done
/// everything due at the current time and sleep again.
public final class ManualClock: Clock {
    private let lock = ConditionLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var time: UInt64
    /// Deadlines of the threads sleeping now, by sleep ticket.
    nonisolated(unsafe) private var sleepers: [Int: UInt64] = [:]
    nonisolated(unsafe) private var nextTicket = 0

    /// Starts at `start` nanoseconds (default 1 s: a non-zero origin catches "0 means unset" mistakes).
    public init(start: UInt64 = 1_000_000_000) { time = start }

    public func now() -> UInt64 { lock.withLock { time } }

    public func sleep(until deadline: UInt64) {
        lock.withLock {
            guard time < deadline else { return }
            let ticket = nextTicket
            nextTicket += 1
            sleepers[ticket] = deadline
            lock.broadcast()  // for `waitForSleepers`
            let realLimit = MonotonicClock.now() + 50_000_000
            while time < deadline, lock.wait(untilMonotonic: realLimit) {}
            sleepers[ticket] = nil
        }
    }

    /// Moves time forward by `nanoseconds` and wakes the sleepers whose deadline has come.
    public func advance(by nanoseconds: UInt64) {
        lock.withLock {
            time += nanoseconds
            lock.broadcast()
        }
    }

    /// Moves time forward to `instant` (never back).
    public func advance(to instant: UInt64) {
        lock.withLock {
            time = max(time, instant)
            lock.broadcast()
        }
    }

    /// Number of threads sleeping now on a deadline still ahead.
    public var waitingSleepers: Int { lock.withLock { sleepers.values.filter { $0 > time }.count } }

    /// Waits (real time, up to `timeoutSeconds`) until at least `count` threads sleep on a deadline still
    /// ahead of this clock: the workers have done what was due. Returns false on timeout.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1, timeoutSeconds: Double = 10) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        return lock.withLock {
            while sleepers.values.filter({ $0 > time }).count < count {
                if MonotonicClock.now() >= deadline { return false }
                _ = lock.wait(untilMonotonic: min(deadline, MonotonicClock.now() + 50_000_000))
            }
            return true
        }
    }

    /// Advances in steps of `step` up to `instant`, letting `sleepers` workers finish what each step made
    /// due before the next (so a worker sees every intermediate time, as it would in real time).
    /// Returns false if the workers did not get back to sleep within `timeoutSeconds` of one step.
    @discardableResult
    public func run(to instant: UInt64, step: UInt64, sleepers count: Int = 1, timeoutSeconds: Double = 10) -> Bool {
        while now() < instant {
            advance(to: min(instant, now() + step))
            guard waitForSleepers(count, timeoutSeconds: timeoutSeconds) else { return false }
        }
        return true
    }
}
