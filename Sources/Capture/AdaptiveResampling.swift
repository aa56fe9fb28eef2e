#if canImport(Glibc)
import Glibc
#endif

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

    private(set) var estimatedRatio = 0.0
    private(set) var correction = 0.0
    private var smoothedFill: Double?
    private var measured = (time: 0.0, sum: 0.0, count: 0)

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
        if abs(wanted) < limit, abs(error) < Self.linearRange {
            estimatedRatio = min(max(estimatedRatio + Self.integral * error * elapsed, -limit), limit)
        }
        correction = min(max(estimatedRatio + Self.proportional * error, -limit), limit)
        return (1 + correction, 0)
    }

    /// Frames were dropped from (negative) the buffer outside the loop's control.
    mutating func shift(by frames: Double) { smoothedFill = smoothedFill.map { $0 + frames } }

    /// After a gap the buffer starts over: the fill is measured afresh, the clock ratio is kept.
    mutating func restart() {
        smoothedFill = nil
        measured = (0, 0, 0)
    }
}

/// What every captured audio input shares: its jitter buffer's target and the last resort's threshold.
public enum AudioCapture {
    /// Fill (frames) the jitter buffer is held at: two of the source's largest quanta, at least 40 ms
    /// and at most 125 ms. With the test rig's 1024-frame quanta: 2048 frames (42.7 ms).
    static func target(largestQuantum: Int, rate: Int) -> Int { min(max(2 * largestQuantum, rate / 25), maximumTarget(rate: rate)) }
    /// The most the target grows to after underruns: 125 ms.
    static func maximumTarget(rate: Int) -> Int { rate / 8 }
    /// A mean fill (smoothed over ~1 s) beyond the target by more than a quantum and at least this many
    /// seconds is a burst, not drift: cut back at once (counted as discarded).
    public static let burstThreshold = 0.02
    /// A buffer this many seconds beyond its target is a jump (a burst, a backlog), not drift: it is cut
    /// back to the target at once (counted as discarded).
    public static let jumpThreshold = 0.1
}
