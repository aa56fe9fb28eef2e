#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds. The one clock that video and audio timestamps derive from.
public enum MonotonicClock {
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
