/// The program's audio clock, run by an audio source on its own thread (the test tone, a microphone):
/// every `interval` it wakes and has the source fill exactly the samples due by now, sample `k` due at
/// `origin + k / rate` and stamped `MediaTime(count: k, rate: rate)`, so the timeline has no holes and
/// no drift (everything is computed from the sample index on one `FrameGrid`).
///
/// A thread that starts a little after the origin (a loaded machine) still begins at sample 0, so the
/// program's audio starts with its video; an origin longer than `maximumChunkDuration` past starts at
/// the sample due now (nothing older is back-filled). A wake-up a little late (up to `stallThreshold`)
/// has the source fill the backlog, in chunks of at most `maximumChunkDuration`.
///
/// A stall (a wake-up finding more than `stallThreshold` due: the whole process stood still, SIGSTOP, a
/// VM pause, a suspended laptop): the program video skips the ticks it missed and resumes on the tick
/// due now, its frames' pts jumping over the stall. The audio keeps its timeline continuous instead:
/// every sample of the stalled time is silence (never the source's: nothing was captured then), in
/// chunks of at most `maximumChunkDuration` handed to `stalled` (not `fill`) and then to `deliver`, and
/// the source fills again from the sample due now, which is the video's resume point. So audio and video
/// resume at the same program time, the audio with no hole: AAC in FLV (and most players, whose audio
/// drives their clock) want audio without timestamp gaps, while a video gap just holds the last picture.
/// The silent chunks share one zero buffer, so a long stall costs no memory.
public struct AudioClock: Sendable {
    public let format: AudioFormat
    /// Nanoseconds between wake-ups (at least 1 ms).
    public let interval: UInt64
    public let clock: any Clock
    /// No chunk carries more than this many seconds.
    public static let maximumChunkDuration = 0.1
    /// A wake-up finding more than this many seconds due means the process stood still (see the type's
    /// doc): 25 wake-ups missed, far beyond any scheduling delay, and longer than the microphone's jitter
    /// buffer (at most 1/8 s), so the source cannot have captured the stalled time.
    public static let stallThreshold = 0.25

    public init(format: AudioFormat, interval: UInt64, clock: any Clock = .monotonic) {
        self.format = format
        self.interval = max(interval, 1_000_000)
        self.clock = clock
    }

    /// Runs the clock on the calling thread until `stop()` is true (asked before every chunk, so a stop
    /// never waits for a backlog to be caught up).
    /// - Parameters:
    ///   - origin: monotonic time (on `clock`) of sample 0.
    ///   - begin: called once, before any chunk, with the index of the first sample delivered.
    ///   - fill: fills a chunk of silence, already stamped (`firstSample`, `pts`), with the source's samples
    ///     (and counts it); the chunk is then handed to `deliver`.
    ///   - stalled: sees (and counts) each chunk of a stall's silence before it is handed to `deliver`; the
    ///     source should forget what it buffered before the stall (it would play late).
    ///   - idle: called after each wake-up's chunks (the source's housekeeping).
    public func run(origin: UInt64, stop: () -> Bool, begin: (Int64) -> Void = { _ in }, fill: (inout AudioChunk) -> Void,
                    stalled: (AudioChunk) -> Void = { _ in }, deliver: (AudioChunk) -> Void, idle: () -> Void = {}) {
        let channels = max(1, format.channels)
        let grid = FrameGrid(origin: origin, rate: Rational(Int32(format.sampleRate)))
        let maximumFrames = Int64(Double(format.sampleRate) * Self.maximumChunkDuration)
        let stallFrames = Int64(Double(format.sampleRate) * Self.stallThreshold)
        let silence = [Float](repeating: 0, count: Int(maximumFrames) * channels)
        let dueAtStart = grid.frame(at: clock.now())
        var next = dueAtStart <= maximumFrames ? 0 : dueAtStart
        begin(next)
        // Wake-ups on a grid from the origin (or from now, when the origin is past).
        let start = max(origin, clock.now())
        var wake: UInt64 = 1
        while !stop() {
            guard clock.sleep(until: start + wake * interval, unless: stop) else { break }
            let now = clock.now()
            // Next wake-up: the next grid point after now (skips wake-ups missed in a stall).
            wake = max(wake + 1, (now - start) / interval + 1)
            let due = grid.frame(at: now)
            if due - next > stallFrames {
                // The process stood still: the stalled time is silence, up to the sample due now.
                // A stop asked for meanwhile ends the catch-up (a thread that cannot keep up, on a
                // starved machine, would otherwise hold the stop back for as long as it is behind).
                while next < due, !stop() {
                    let count = min(due - next, maximumFrames)
                    let samples = count == maximumFrames ? silence : Array(silence.prefix(Int(count) * channels))
                    let chunk = AudioChunk(format: format, samples: samples, pts: grid.pts(ofFrame: next), firstSample: next)
                    stalled(chunk)
                    next += count
                    deliver(chunk)
                }
            }
            while next < due, !stop() {
                let count = min(due - next, maximumFrames)
                var chunk = AudioChunk(format: format, samples: [Float](repeating: 0, count: Int(count) * channels),
                                       pts: grid.pts(ofFrame: next), firstSample: next)
                fill(&chunk)
                next += count
                deliver(chunk)
            }
            idle()
        }
    }
}
