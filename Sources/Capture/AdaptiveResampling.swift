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

/// Measures an input's clock against the program's from its jitter buffer and gives the resampling
/// step that keeps the buffer at its target: a PI loop on the buffer's fill, low-pass filtered (about
/// 1 s) to average out the quanta's arrival pattern. The integral converges to the input's clock ratio
/// (`estimatedPPM`); the proportional part pulls the buffer back to its target, so the delay stays
/// fixed. The correction is bounded (`maximumPPM`, and the integral stops while it is: no wind-up):
/// beyond it the input is broken rather than drifting, and the last resort (discard, insert) takes over.
///
/// After a (re)start the buffer holds between one and two quanta more than the target, depending on
/// where the quanta fell: the first `alignmentTime` only measures the mean fill, then `update` asks
/// for the excess to be dropped once, so the loop starts at its target instead of spending seconds at
/// its bound pulling it there.
struct ClockRatioEstimator: Sendable {
    /// Parts per million; an input further off than this is not followed.
    static let maximumPPM = 1000.0
    /// Loop constants (per second): natural frequency 0.2 rad/s, critically damped; settles in ~25 s.
    static let proportional = 0.4
    static let integral = 0.04
    static let smoothing = 1.0  // seconds
    static let alignmentTime = 0.5  // seconds
    /// Fill error (seconds) within which the integral runs.
    static let linearRange = 0.004
    /// Seconds after a (re)start or a cut during which the integral rests: the proportional part
    /// brings the fill back (time constant 2.5 s) without the transient winding the integral up. On a
    /// starved machine every underrun is followed by the source's catch-up burst; integrated, each
    /// pushed the estimate up by up to a few hundred ppm.
    static let settleTime = 10.0

    private(set) var estimatedRatio = 0.0
    private(set) var correction = 0.0
    private var smoothedFill: Double?
    private var measured = (time: 0.0, sum: 0.0, count: 0)
    private var sinceDisturbance = 0.0

    /// The smoothed fill in frames (nil while measuring after a start).
    var fill: Double? { smoothedFill }
    var estimatedPPM: Double { estimatedRatio * 1e6 }
    var correctionPPM: Double { correction * 1e6 }

    /// Feeds one observation: `fill` frames buffered now against `target`, `elapsed` seconds after the
    /// last one. Returns the step (input frames per output frame) for the next block, and the frames to
    /// drop from the buffer now (once, at the end of the alignment; else 0).
    mutating func update(fill: Double, target: Double, elapsed: Double, rate: Double) -> (step: Double, excess: Int) {
        let limit = Self.maximumPPM / 1e6
        guard let previous = smoothedFill else {
            measured = (measured.time + elapsed, measured.sum + fill, measured.count + 1)
            correction = estimatedRatio
            guard measured.time >= Self.alignmentTime else { return (1 + correction, 0) }
            let mean = measured.sum / Double(measured.count), excess = max(0, Int((mean - target).rounded()))
            smoothedFill = mean - Double(excess)
            return (1 + correction, excess)
        }
        let smoothed = previous + min(1, elapsed / Self.smoothing) * (fill - previous)
        smoothedFill = smoothed
        let error = (smoothed - target) / rate  // seconds of excess delay
        let wanted = estimatedRatio + Self.proportional * error
        // Integrate only in the loop's linear range: not while the correction is at its bound (no
        // wind-up), nor while the fill is far from its target (a burst or a gap the machine caused,
        // not the clock: it would pull the estimate away from the clock ratio).
        sinceDisturbance += elapsed
        if abs(wanted) < limit, abs(error) < Self.linearRange, sinceDisturbance >= Self.settleTime {
            estimatedRatio = min(max(estimatedRatio + Self.integral * error * elapsed, -limit), limit)
        }
        correction = min(max(estimatedRatio + Self.proportional * error, -limit), limit)
        return (1 + correction, 0)
    }

    /// The frames to cut from the buffer now because of a burst (0 when there is none): the mean fill
    /// more than `AudioCapture.burstThreshold` beyond the target is no drift (the source caught up after
    /// a stall); left to the loop, at its ±1000 ppm bound it would take many seconds to drain.
    mutating func burst(target: Double, rate: Double) -> Int {
        guard let smoothed = smoothedFill, smoothed > target + rate * AudioCapture.burstThreshold else { return 0 }
        let cut = Int(smoothed - target)
        smoothedFill = smoothed - Double(cut)
        sinceDisturbance = 0
        return cut
    }

    /// After a gap the buffer starts over: the fill is measured afresh, the clock ratio is kept.
    mutating func restart() {
        smoothedFill = nil
        measured = (0, 0, 0)
        sinceDisturbance = 0
    }
}

/// Measures a source's clock from when its samples arrive: sample n arriving at monotonic time t gives
/// the offset x = t - n / rate, which grows by -ratio every second for a source `ratio` fast. Arrivals
/// are only ever late (a busy machine delays the source or the callback, never hurries them), so each
/// second keeps its earliest arrival (the lower envelope, as NTP keeps its minimum-delay samples) and
/// the ratio is the robust slope (Theil-Sen) of the last `window` seconds of those. Reported beside the
/// loop's estimate as a diagnostic (`PipeWireMicrophone.Status.arrivalPPM`); not fed to the resampling
/// (see docs/pipewire.md: biased on a starved machine, cause not found).
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
