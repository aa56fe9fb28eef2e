/// When each frame and audio chunk of a network source is due on this machine's clock: its media time
/// plus the source's offset plus the jitter buffer's target. Pure logic: times come in as arguments
/// (nanoseconds: media times from the stream's timestamps, arrivals on CLOCK_MONOTONIC).
///
/// The offset (arrival minus media time) of the packet that came soonest stands for the path's fixed
/// delay: the base follows a smaller offset at once (less delay: a burst at connect, such as an RTMP
/// server's cached group of pictures or a backlog after a stall, ends at the newest packet's offset;
/// its pictures all fall due together, so the playout shows the newest of them only: nothing old is
/// shown one by one), and a larger one only when a whole window's smallest offset stays above it (the
/// source's clock running slow, the path slower), by at most `slewPerWindow` per window, so the delay
/// changes smoothly. Jitter only ever adds to a packet's offset and never pushes the base. A step
/// larger than `jumpLimit` either way (a publisher that restarted its timestamps, a jump of the media
/// time, the first packet after a long stall) re-bases at once (`rebases` counts them). The buffer
/// never grows on its own: each item waits `target` past the soonest packet's path delay.
struct PullTimeline: Sendable {
    /// The jitter buffer's target.
    let target: Int64
    /// How long a window of offsets is.
    let window: Int64
    /// A change of the offset larger than this re-bases at once.
    let jumpLimit: Int64
    /// How far the base moves toward a new minimum per window.
    let slewPerWindow: Int64

    private(set) var base: Int64?
    private var windowStart: Int64 = 0
    private var currentMinimum = Int64.max
    private var previousMinimum = Int64.max
    /// Re-bases since the start (jumps, restarts).
    private(set) var rebases = 0
    /// The newest item's wait from its arrival until it is due (ns): the buffer's depth now.
    private(set) var depth: Int64 = 0
    /// The base's drift against this clock, ppm (from how far it slewed), nil before two windows.
    private(set) var driftPPM: Double?
    private var firstBase: (base: Int64, at: Int64)?

    init(targetMilliseconds: Int, windowSeconds: Double = 5, jumpLimitMilliseconds: Int = 1000, slewPerWindowMilliseconds: Int = 25) {
        target = Int64(max(0, targetMilliseconds)) * 1_000_000
        window = Int64(windowSeconds * 1e9)
        jumpLimit = Int64(jumpLimitMilliseconds) * 1_000_000
        slewPerWindow = Int64(slewPerWindowMilliseconds) * 1_000_000
    }

    /// Forgets the source's timing (a new connection: fresh timing, nothing carried over).
    mutating func reset() {
        base = nil
        currentMinimum = .max
        previousMinimum = .max
        firstBase = nil
        driftPPM = nil
    }

    /// Notes an item of media time `media` that arrived at `arrival` and says when it is due.
    mutating func due(media: Int64, arrival: UInt64) -> UInt64 {
        let now = Int64(clamping: arrival)
        let offset = now &- media
        guard var current = base else {
            start(offset, at: now)
            return dueTime(media)
        }
        if abs(offset - current) > jumpLimit {
            rebases += 1
            start(offset, at: now)
            return dueTime(media)
        }
        current = min(current, offset)
        currentMinimum = min(currentMinimum, offset)
        if now - windowStart >= window {
            let minimum = min(currentMinimum, previousMinimum)
            if minimum > current {
                current += min(slewPerWindow, minimum - current)
            }
            if let first = firstBase, now > first.at { driftPPM = Double(current - first.base) / Double(now - first.at) * 1e6 }
            if firstBase == nil { firstBase = (current, now) }
            previousMinimum = currentMinimum
            currentMinimum = .max
            windowStart = now
        }
        base = current
        let due = dueTime(media)
        depth = Int64(clamping: due) - now
        return due
    }

    /// The mapping for a compressed packet of media time `media` that arrived at `arrival` (a copy into
    /// an ISO file): its due time is `media` plus the returned offset, the same mapping as the pictures'.
    /// The packet comes before its picture is decoded, so it notes the timeline only where the timeline
    /// would start or re-base on that picture (no base yet, or a jump past `jumpLimit`): the picture then
    /// finds it so, and its own `due` is unchanged. Otherwise it only reads the mapping.
    mutating func mapping(media: Int64, arrival: UInt64) -> Int64 {
        let offset = Int64(clamping: arrival) &- media
        if let base, abs(offset - base) <= jumpLimit { return base &+ target }
        _ = due(media: media, arrival: arrival)
        return (base ?? offset) &+ target
    }

    private mutating func start(_ offset: Int64, at now: Int64) {
        base = offset
        currentMinimum = offset
        previousMinimum = .max
        windowStart = now
        firstBase = nil
        driftPPM = nil
        depth = target
    }

    private func dueTime(_ media: Int64) -> UInt64 {
        UInt64(clamping: media &+ (base ?? 0) &+ target)
    }
}
