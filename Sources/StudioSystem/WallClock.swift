#if canImport(Glibc)
import Glibc
#endif

/// This machine's wall clock (CLOCK_REALTIME) in microseconds since 1970, shifted by `shift`: the time
/// base of a capture node's clock-offset measurement and of the capture times its frames carry. The
/// shift is a testing aid (`serve --inject-clock-offset MS`): a clock offset is injected into a node's
/// clock, not set on the machine; 0 everywhere else.
public struct WallClock: Sendable {
    /// Added to the machine's wall clock, in microseconds.
    public let shift: Int64

    public init(shiftMilliseconds: Int = 0) { shift = Int64(shiftMilliseconds) * 1000 }

    public static let system = WallClock()

    public func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000 + shift
    }

    /// The wall-clock time (µs) of `monotonic` (CLOCK_MONOTONIC ns, a frame's `captureTime`): now, less
    /// how long ago it was.
    public func time(ofMonotonic monotonic: UInt64) -> Int64 {
        let wall = now(), since = Int64(bitPattern: MonotonicClock.now() &- monotonic) / 1000
        return wall - since
    }
}
