import StudioCore

/// What the clock thread decides for each block of an input read through its jitter buffer, apart from
/// the buffer itself (a capture's ring under its lock; a simulated one in the tests): whether captured
/// audio plays, the last resort (a jump or a burst cut back to the target), the alignment after a start,
/// and the resampling step (`ClockRatioEstimator`).
///
/// A block's fill is read with the buffer's lock held: `ring` frames not yet read, `held` more in the
/// resampler. `lateness` is how long after the block's last frame was due the clock thread fills it
/// (a wake-up late by more than a block fills several): what the source delivered meanwhile is in the
/// ring but is no excess, so neither the last resort nor the estimator counts it. `sinceArrival`: how
/// long ago the source's last quantum came in.
struct JitterBufferLoop: Sendable {
    /// Whether captured audio plays (the buffer reached its target since the last gap).
    private(set) var playing = false
    private(set) var estimator = ClockRatioEstimator()

    /// One block's plan: drop `jump + burst` frames (last resort, counted as discarded), then `aligned`
    /// (after a start; not a last resort), then read through the resampler at `step`. `started`: the
    /// block is the first after a gap (the resampler starts over before it).
    struct Plan: Equatable, Sendable {
        var started = false
        var jump = 0
        var burst = 0
        var aligned = 0
        var step = 1.0
    }

    /// Plans a block of `frames` program frames; nil while the buffer is filling (silence).
    mutating func plan(ring: Int, held: Double, frames: Int, lateness: Double, sinceArrival: Double = 0, target: Int, quantum: Int,
                       rate: Double) -> Plan? {
        var plan = Plan()
        var ring = ring, held = held
        // Play captured audio only with the target queued (a quantum arriving a little late does not
        // become a gap); start over after a gap.
        if !playing {
            guard ring >= target else { return nil }
            playing = true
            plan.started = true
            held = 0
            estimator.restart()
        }
        // Last resort, a jump (the source delivered a burst, or came back with a backlog): back to the
        // target at once; the resampling handles only drift. What came in since the block was due is no
        // jump (a late wake-up).
        let owed = Double(frames) + max(0, lateness) * rate
        let excess = Double(ring) + held - owed - Double(target)
        if excess > rate * AudioCapture.jumpThreshold {
            plan.jump = min(Int(excess), ring)
            ring -= plan.jump
            estimator.restart()
        }
        // Last resort, a burst (the source caught up after a stall): back to the target at once.
        plan.burst = min(estimator.burst(target: Double(target), rate: rate), ring)
        ring -= plan.burst
        let (step, aligned) = estimator.update(fill: Double(ring) + held, frames: frames, lateness: lateness, sinceArrival: sinceArrival, target: Double(target),
                                               quantum: quantum, rate: rate)
        plan.aligned = min(aligned, ring)
        plan.step = step
        return plan
    }

    /// The buffer ran dry, or the process stalled (what it holds would play late): fill it again first.
    mutating func stop() { playing = false }

    /// A new stream: nothing is known about its clock.
    mutating func reset() { self = JitterBufferLoop() }
}

/// What every captured audio input shares: its jitter buffer's target and the last resort's threshold.
public enum AudioCapture {
    /// Fill (frames) the jitter buffer is held at: two of the source's largest quanta, at least 40 ms,
    /// plus what the clock's `block` (frames) is beyond 10 ms; at most 125 ms. A block takes its whole
    /// span at once, and the slack of two quanta was found with 10 ms blocks: with 20 ms blocks and no
    /// more, the simulated quiet machine (`JitterBufferBurstTests`) ran dry after a stall and cut the
    /// catch-up, with 10 ms more it holds. With the test rig's 1024-frame quanta and the program's 10 ms
    /// block: 2048 frames (42.7 ms). `headroom` (frames) is what underruns added (`UnderrunHeadroom`).
    static func target(largestQuantum: Int, rate: Int, block: Int, headroom: Int = 0) -> Int {
        min(max(2 * largestQuantum, rate / 25) + max(0, block - rate / 100) + max(0, headroom), maximumTarget(rate: rate))
    }
    /// The most the target grows to after underruns: 125 ms.
    static func maximumTarget(rate: Int) -> Int { rate / 8 }
    /// The most the jitter buffer is held at, in samples at the program's rate.
    public static let maximumTarget = maximumTarget(rate: AudioFormat.program.sampleRate)
    /// A level (the median of three seconds' envelopes, so one stray second is gone) beyond the target
    /// by more than this many seconds is a jump that lasts, not drift: cut back to the target (counted as
    /// discarded). Less drains through the rate (`ClockRatioEstimator.maximumCorrectionPPM`): a source
    /// that delivers a quantum more (21 ms at 1024 frames) is no cut.
    public static let burstThreshold = 0.03
    /// The same within `ClockRatioEstimator.settleTime` of a (re)start (the buffer ran dry; what comes
    /// after the restart beyond the target is the stall's backlog), on the smoothed level: 8 ms.
    public static let restartBurstThreshold = 0.008
    /// A buffer this many seconds beyond its target is a jump (a burst, a backlog), not drift: it is cut
    /// back to the target at once (counted as discarded).
    public static let jumpThreshold = 0.1
}
