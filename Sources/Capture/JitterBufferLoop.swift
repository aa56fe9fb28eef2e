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
