/// The tick grid of a rate on the monotonic clock: tick `n` (a video frame, an audio sample) is due at
/// `origin + n / rate` and stamped `MediaTime(count: n, rate: rate)`. Every time is computed from `n` in
/// integers (128-bit intermediates: no overflow for years of ticks, no accumulated rounding), so a rate
/// like 30000/1001 stays exact for the whole show. Pure arithmetic: time comes in as arguments.
public struct FrameGrid: Sendable, Hashable {
    /// Monotonic nanoseconds of tick 0.
    public let origin: UInt64
    public let rate: Rational

    public init(origin: UInt64, rate: Rational) {
        precondition(rate.numerator > 0 && rate.denominator > 0, "a grid needs a positive rate, not \(rate)")
        self.origin = origin
        self.rate = rate
    }

    /// Monotonic nanoseconds at which tick `n` is due: the first whole nanosecond at or after its exact
    /// time (so `frame(at: time(ofFrame: n)) == n` for every rate).
    public func time(ofFrame n: Int64) -> UInt64 {
        let numerator = UInt128(rate.numerator)
        return origin + UInt64((UInt128(n) * UInt128(rate.denominator) * 1_000_000_000 + numerator - 1) / numerator)
    }

    /// The timestamp of tick `n` on the program timeline.
    public func pts(ofFrame n: Int64) -> MediaTime { MediaTime(count: n, rate: rate) }

    /// The newest tick due at `now` (its time at or before `now`; 0 before the origin). For audio this is
    /// also the number of samples due strictly before `now`.
    public func frame(at now: UInt64) -> Int64 {
        guard now > origin else { return 0 }
        return Int64(UInt128(now - origin) * UInt128(rate.numerator) / (UInt128(rate.denominator) * 1_000_000_000))
    }

    /// The first tick due at or after `time` (tick 0 before the origin): the tick that first sees a frame
    /// captured at `time`, and so the timestamp it gets (an ISO's frame clock takes it on that tick; a
    /// passthrough ISO stamps the camera's own frame with it).
    public func firstFrame(atOrAfter time: UInt64) -> Int64 {
        let newest = frame(at: time)
        return time <= origin || self.time(ofFrame: newest) == time ? newest : newest + 1
    }

    /// The first tick due strictly after `now` (tick 0 before the origin).
    public func nextFrame(after now: UInt64) -> Int64 { now < origin ? 0 : frame(at: now) + 1 }

    /// When the first tick strictly after `now` is due.
    public func nextTick(after now: UInt64) -> UInt64 { time(ofFrame: nextFrame(after: now)) }
}
