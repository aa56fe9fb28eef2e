#if canImport(Glibc)
import Glibc
#endif
import StudioCore

/// Keeps an input that runs on its own clock (a USB microphone, a graph driven by another device) on
/// the program's clock without dropping or repeating samples: `ClockRatioEstimator` measures the input's
/// clock against the program's (CLOCK_MONOTONIC) from the fill of its jitter buffer, and
/// `AdaptiveResampler` reads the input `1 + ratio` samples per program sample.

/// A band-limited resampler at a ratio near 1 that may change on every block: a 16-tap windowed sinc
/// (Blackman, cut off at 0.45 of the rate) on 256 phases, interpolated between neighbouring phases.
/// Input frames are appended as they come; each `produce` writes exactly the frames asked for and
/// consumes `step` input frames per output frame (a fractional read position carries over).
struct AdaptiveResampler: Sendable {
    static let taps = 16
    static let phases = 256
    /// Frames of input held back ahead of the read position (the filter's half length): the resampler's
    /// own delay.
    static let lookahead = taps / 2
    /// Row p: the taps for a read position p/phases past an input frame; phases + 1 rows.
    private static let table: [Float] = {
        var table = [Float](repeating: 0, count: (phases + 1) * taps)
        let cutoff = 0.9  // of Nyquist
        for phase in 0...phases {
            let fraction = Double(phase) / Double(phases)
            var row = [Double](repeating: 0, count: taps)
            for k in 0..<taps {
                // Tap k reads input frame floor(position) - (lookahead - 1) + k.
                let x = Double(k - (lookahead - 1)) - fraction
                let sinc = x == 0 ? 1 : sin(Double.pi * cutoff * x) / (Double.pi * cutoff * x)
                let w = (x + Double(lookahead)) / Double(taps)  // 0...1 across the window
                let window = 0.42 - 0.5 * cos(2 * Double.pi * w) + 0.08 * cos(4 * Double.pi * w)
                row[k] = sinc * max(window, 0)
            }
            let sum = row.reduce(0, +)
            for k in 0..<taps { table[phase * taps + k] = Float(row[k] / sum) }
        }
        return table
    }()

    let channels: Int
    /// Interleaved input not yet consumed; frame 0 is `lookahead - 1` frames before the read position's frame.
    private var pending: [Float]
    /// Read position in frames from the start of `pending`.
    private var position: Double

    init(channels: Int) {
        self.channels = max(1, channels)
        pending = [Float](repeating: 0, count: (Self.lookahead - 1) * self.channels)
        position = Double(Self.lookahead - 1)
    }

    /// Input frames held that are not yet consumed (they count toward the input's buffer delay).
    var bufferedFrames: Double { Double(pending.count / channels) - position }

    /// Input frames that must be appended before `produce(frames:step:)` can run.
    func framesNeeded(toProduce frames: Int, step: Double) -> Int {
        guard frames > 0 else { return 0 }
        let last = Int((position + Double(frames - 1) * step).rounded(.down))
        return max(0, last + Self.lookahead + 1 - pending.count / channels)
    }

    mutating func append(_ samples: UnsafeBufferPointer<Float>) { pending.append(contentsOf: samples) }

    /// Starts over from silence (after a gap: what is held would play late).
    mutating func reset() { self = AdaptiveResampler(channels: channels) }

    /// Writes `frames` output frames into `destination` from sample `offset`; the input must hold
    /// `framesNeeded(toProduce:step:)` more frames first.
    mutating func produce(frames: Int, step: Double, into destination: inout [Float], offset: Int) {
        let channels = self.channels, taps = Self.taps, phases = Self.phases
        var position = self.position
        pending.withUnsafeBufferPointer { input in
            Self.table.withUnsafeBufferPointer { table in
                destination.withUnsafeMutableBufferPointer { output in
                    var coefficients = [Float](repeating: 0, count: taps)
                    for frame in 0..<frames {
                        let whole = Int(position.rounded(.down))
                        let scaled = (position - Double(whole)) * Double(phases)
                        let phase = min(Int(scaled), phases - 1)
                        let blend = Float(scaled - Double(phase))
                        let row = phase * taps, next = row + taps
                        for k in 0..<taps { coefficients[k] = table[row + k] + blend * (table[next + k] - table[row + k]) }
                        let first = (whole - (Self.lookahead - 1)) * channels
                        for channel in 0..<channels {
                            var sum: Float = 0
                            var index = first + channel
                            for k in 0..<taps {
                                sum += coefficients[k] * input[index]
                                index += channels
                            }
                            output[offset + frame * channels + channel] = sum
                        }
                        position += step
                    }
                }
            }
        }
        // Drop what no later output needs.
        let consumed = max(0, min(Int(position.rounded(.down)) - (Self.lookahead - 1), pending.count / channels))
        pending.removeFirst(consumed * channels)
        self.position = position - Double(consumed)
    }
}

/// Keeps an input's jitter buffer at its target while its clock runs fast or slow, and gives the
/// resampling step for each block: `1 + correction` input frames per program frame, where
///
///     correction = sourceRatio + proportional * (level - target) / rate
///
/// - `sourceRatio` is the input's clock against the program's measured from the source side (its samples
///   against the graph's timestamps over a long window: `ArrivalClock`), a feed-forward: not from the
///   buffer's fill, whose moments a busy machine moves by milliseconds where 300 ppm moves it by 0.3 ms a
///   second. (The loop before this one integrated the fill itself: on a loaded machine a few ms of
///   scheduling shifted the mean fill, the integral took it for drift, and the estimate wandered by
///   hundreds of ppm.) Until it is known (15 s), the proportional part alone holds the buffer.
/// - `level` is the buffer's fill once a block is taken (what the next block reads from), measured so
///   that neither side's lateness moves it: each block's
///   observation is the fill after the block was taken, less what the source delivered since the block
///   was due (the clock thread woke `lateness` late: a late consumer no longer reads as a fuller buffer);
///   per second of program time only the highest such observation counts (a quantum that came late
///   lowers the fill, never raises it: the envelope is the fill as an on-time source gives it), less half
///   a quantum (the envelope is the sawtooth's top: the mean is half a quantum below); low-pass filtered
///   (`smoothing`). A whole second starved moves one point, which the low-pass and the slow
///   proportional gain (time constant 10 s) make a fraction of a millisecond.
///
/// The correction is bounded (`maximumPPM`): beyond it the input is broken rather than drifting, and the
/// last resort (discard, insert) takes over. With a biased `sourceRatio` the delay settles off its
/// target by bias / proportional (50 ppm: 0.5 ms) and stays there: fixed, not growing.
///
/// After a (re)start the buffer holds between one and two quanta more than the target, depending on
/// where the quanta fell: the first `alignmentTime` only measures the mean fill, then `update` asks
/// for the excess to be dropped once, so the loop starts at its target.
struct ClockRatioEstimator: Sendable {
    /// Parts per million; an input further off than this is not followed.
    static let maximumPPM = 1000.0
    /// Per second: a fill error of 1 ms is corrected at 100 ppm (time constant 10 s).
    static let proportional = 0.1
    /// Seconds: the low-pass on the per-second level.
    static let smoothing = 3.0
    static let alignmentTime = 0.5  // seconds

    /// The clock ratio followed (the source's, once measured).
    private(set) var estimatedRatio = 0.0
    private(set) var correction = 0.0
    private var smoothedLevel: Double?
    private var measured = (time: 0.0, sum: 0.0, count: 0)
    /// The current second of program time: its frames so far and its highest observation.
    private var second = (frames: 0, top: -Double.infinity)

    /// The buffer's level in frames (the fill an on-time source gives, smoothed), nil while measuring
    /// after a start.
    var fill: Double? { smoothedLevel }
    var estimatedPPM: Double { estimatedRatio * 1e6 }
    var correctionPPM: Double { correction * 1e6 }

    /// Feeds one block, before it is read: `fill` input frames buffered now, `frames` program frames to
    /// produce, whose last was due `lateness` seconds ago (0 when on time); `quantum` is the source's
    /// largest quantum; `sourceRatio` the source clock's ratio when measured. Returns the step (input
    /// frames per output frame) for this block, and the frames to drop from the buffer now (once, at the
    /// end of the alignment; else 0).
    mutating func update(fill: Double, frames: Int, lateness: Double = 0, target: Double, quantum: Int, sourceRatio: Double?,
                         rate: Double) -> (step: Double, excess: Int) {
        let limit = Self.maximumPPM / 1e6, elapsed = Double(frames) / rate
        if let sourceRatio { estimatedRatio = min(max(sourceRatio, -limit), limit) }
        // The fill once this block is taken, as it was when its last frame was due.
        let observed = fill - Double(frames) * (1 + correction) - max(0, lateness) * rate
        guard let previous = smoothedLevel else {
            // Aligning: the mean over the sawtooth, then what is beyond the target goes once.
            measured = (measured.time + elapsed, measured.sum + observed, measured.count + 1)
            correction = min(max(estimatedRatio, -limit), limit)
            guard measured.time >= Self.alignmentTime else { return (1 + correction, 0) }
            let mean = measured.sum / Double(measured.count), excess = max(0, Int((mean - target).rounded()))
            smoothedLevel = mean - Double(excess)
            second = (0, -.infinity)
            return (1 + correction, excess)
        }
        second = (second.frames + frames, max(second.top, observed))
        if Double(second.frames) >= rate {
            // The level: the envelope, less half the sawtooth.
            let level = second.top - Double(quantum) / 2
            let weight = 1 - exp(-Double(second.frames) / rate / Self.smoothing)
            smoothedLevel = previous + weight * (level - previous)
            second = (0, -.infinity)
        }
        let error = ((smoothedLevel ?? previous) - target) / rate  // seconds of excess delay
        correction = min(max(estimatedRatio + Self.proportional * error, -limit), limit)
        return (1 + correction, 0)
    }

    /// The frames to cut from the buffer now because of a burst (0 when there is none): a level more
    /// than `AudioCapture.burstThreshold` beyond the target is no drift (the source caught up after a
    /// stall); left to the loop, at its ±1000 ppm bound it would take many seconds to drain.
    mutating func burst(target: Double, rate: Double) -> Int {
        guard let smoothed = smoothedLevel, smoothed > target + rate * AudioCapture.burstThreshold else { return 0 }
        let cut = Int(smoothed - target)
        smoothedLevel = smoothed - Double(cut)
        second = (0, -.infinity)
        return cut
    }

    /// After a gap the buffer starts over: the fill is measured afresh, the clock ratio is kept.
    mutating func restart() {
        smoothedLevel = nil
        measured = (0, 0, 0)
        second = (0, -.infinity)
    }
}

/// Measures a source's clock from its samples' timestamps: sample n stamped t (the graph's time for the
/// cycle that delivered it, `pw_time.now`: when the driver started the cycle, before any thread of ours
/// ran; else when the callback got it) gives the offset x = t - n / rate, which grows by -ratio every
/// second for a source `ratio` fast. Stamps are only ever late (a busy machine delays the source or the
/// callback, never hurries them), so each second keeps its earliest (the lower envelope, as NTP keeps its
/// minimum-delay samples) and the ratio is the robust slope (Theil-Sen) of the last `window` seconds of
/// those: a second starved all through is an outlier the median ignores. It is the `sourceRatio` the
/// resampling follows (`ClockRatioEstimator`), reported as `PipeWireMicrophone.Status.arrivalPPM`.
struct ArrivalClock: Sendable {
    /// Seconds (one earliest arrival each) in the fit, and the fewest that give an estimate.
    static let window = 60
    static let minimumSeconds = 15

    private var written: Int64 = 0
    private var earliest: (x: Double, t: Double)?
    private var seconds: [(x: Double, t: Double)] = []

    /// The stream delivered `frames` more samples, the last of them arriving at `time` (seconds).
    mutating func arrived(frames: Int, at time: Double, rate: Double) {
        written += Int64(frames)
        let x = time - Double(written) / rate
        if earliest.map({ x < $0.x }) ?? true { earliest = (x, time) }
    }

    /// Closes the current second (call about once a second).
    mutating func closeSecond() {
        guard let earliest else { return }
        seconds.append(earliest)
        if seconds.count > Self.window { seconds.removeFirst(seconds.count - Self.window) }
        self.earliest = nil
    }

    /// The source's clock ratio (0.0003: 300 ppm fast), nil until `minimumSeconds` are in. The slope is
    /// Theil-Sen's (the median of the slopes between every two seconds): a second whose earliest arrival
    /// was still late (the whole second starved) is an outlier it ignores, where least squares would
    /// follow it.
    var ratio: Double? {
        guard seconds.count >= Self.minimumSeconds else { return nil }
        var slopes: [Double] = []
        slopes.reserveCapacity(seconds.count * seconds.count / 2)
        for i in seconds.indices {
            for j in seconds.indices where j > i && seconds[j].t - seconds[i].t > 0.5 {
                slopes.append((seconds[j].x - seconds[i].x) / (seconds[j].t - seconds[i].t))
            }
        }
        guard !slopes.isEmpty else { return nil }
        slopes.sort()
        let slope = slopes[slopes.count / 2]
        return -slope / (1 + slope)
    }
}

/// What every captured audio input shares: its jitter buffer's target and the last resort's threshold.
public enum AudioCapture {
    /// Fill (frames) the jitter buffer is held at: two of the source's largest quanta, at least 40 ms
    /// and at most 125 ms. With the test rig's 1024-frame quanta: 2048 frames (42.7 ms).
    static func target(largestQuantum: Int, rate: Int) -> Int { min(max(2 * largestQuantum, rate / 25), maximumTarget(rate: rate)) }
    /// The most the target grows to after underruns: 125 ms.
    static func maximumTarget(rate: Int) -> Int { rate / 8 }
    /// The most the jitter buffer is held at, in samples at the program's rate.
    public static let maximumTarget = maximumTarget(rate: AudioFormat.program.sampleRate)
    /// A mean fill (smoothed over ~1 s, so the quanta's sawtooth is gone) beyond the target by more than
    /// this many seconds is a burst, not drift (300 ppm holds it 0.75 ms off): cut back at once (counted
    /// as discarded).
    public static let burstThreshold = 0.008
    /// A buffer this many seconds beyond its target is a jump (a burst, a backlog), not drift: it is cut
    /// back to the target at once (counted as discarded).
    public static let jumpThreshold = 0.1
}
