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
        precondition(frames >= 0 && offset >= 0 && offset + frames * channels <= destination.count, "the block does not fit")
        precondition(framesNeeded(toProduce: frames, step: step) == 0, "not enough input appended")
        guard frames > 0 else { return }
        let channels = self.channels
        var position = self.position
        pending.withUnsafeBufferPointer { input in
            destination.withUnsafeMutableBufferPointer { output in
                let input = input.baseAddress!, output = output.baseAddress! + offset
                if channels == 2 {
                    Self.stereoTable.withUnsafeBufferPointer { table in
                        Self.produceStereo(frames: frames, step: step, position: &position, input: input, table: table.baseAddress!, output: output)
                    }
                } else {
                    Self.table.withUnsafeBufferPointer { table in
                        Self.produce(frames: frames, channels: channels, step: step, position: &position, input: input,
                                     table: table.baseAddress!, output: output)
                    }
                }
            }
        }
        // Drop what no later output needs.
        let consumed = max(0, min(Int(position.rounded(.down)) - (Self.lookahead - 1), pending.count / channels))
        pending.removeFirst(consumed * channels)
        self.position = position - Double(consumed)
    }

    /// `table` with every tap twice (left, right): a row lines up with `taps` interleaved stereo frames.
    private static let stereoTable: [Float] = table.flatMap { [$0, $0] }

    /// Stereo, the program's format: each output frame is one pass over `taps` interleaved frames, four
    /// lanes (two frames) at a time, the row's taps interpolated towards the next row's on the way.
    private static func produceStereo(frames: Int, step: Double, position: inout Double, input: UnsafePointer<Float>,
                                      table: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let rowBytes = 2 * taps * MemoryLayout<Float>.stride, lanes = 4 * MemoryLayout<Float>.stride
        for frame in 0..<frames {
            let whole = Int(position.rounded(.down))
            let scaled = (position - Double(whole)) * Double(phases)
            let phase = min(Int(scaled), phases - 1)
            let blend = SIMD4<Float>(repeating: Float(scaled - Double(phase)))
            let row = UnsafeRawPointer(table + phase * 2 * taps)
            let samples = UnsafeRawPointer(input + (whole - (lookahead - 1)) * 2)
            var sum = SIMD4<Float>()
            for chunk in 0..<(2 * taps / 4) {
                let low = row.loadUnaligned(fromByteOffset: chunk * lanes, as: SIMD4<Float>.self)
                let high = row.loadUnaligned(fromByteOffset: rowBytes + chunk * lanes, as: SIMD4<Float>.self)
                let x = samples.loadUnaligned(fromByteOffset: chunk * lanes, as: SIMD4<Float>.self)
                sum += (low + blend * (high - low)) * x
            }
            output[2 * frame] = sum[0] + sum[2]
            output[2 * frame + 1] = sum[1] + sum[3]
            position += step
        }
    }

    /// Any number of channels: the row's taps interpolated once per output frame, then one pass per channel.
    private static func produce(frames: Int, channels: Int, step: Double, position: inout Double, input: UnsafePointer<Float>,
                                table: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: taps) { coefficients in
            for frame in 0..<frames {
                let whole = Int(position.rounded(.down))
                let scaled = (position - Double(whole)) * Double(phases)
                let phase = min(Int(scaled), phases - 1)
                let blend = Float(scaled - Double(phase))
                let row = table + phase * taps, next = row + taps
                for k in 0..<taps { coefficients[k] = row[k] + blend * (next[k] - row[k]) }
                let first = (whole - (lookahead - 1)) * channels
                for channel in 0..<channels {
                    var sum: Float = 0
                    var index = first + channel
                    for k in 0..<taps {
                        sum += coefficients[k] * input[index]
                        index += channels
                    }
                    output[frame * channels + channel] = sum
                }
                position += step
            }
        }
    }
}

/// Keeps an input's jitter buffer at its target while its clock runs fast or slow, and gives the
/// resampling step for each block: `1 + correction` input frames per program frame, a PI loop on the
/// buffer's level:
///
///     correction = estimatedRatio + proportional * (level - target) / rate
///     estimatedRatio += integral * (level - target) / rate, once a second
///
/// The integral converges to the input's clock ratio (`estimatedPPM`); the proportional part pulls the
/// level back to its target, so the delay stays fixed (critically damped: natural frequency 0.1 rad/s).
///
/// What makes it hold on a busy machine is the level it is fed, measured so that neither side's
/// lateness moves it (300 ppm moves the fill by 0.3 ms a second; a busy machine moves its moments by
/// tens of ms). Each block's observation is the fill once the block is taken, less what the source
/// delivered since the block was due: the clock thread woke `lateness` late, and a late consumer is no
/// fuller buffer. Taken back to when the last quantum came in (the top of the sawtooth), per second of
/// program time only the highest counts: a quantum that came late lowers the fill, never raises it, so
/// the envelope is the fill an on-time source gives; less half a quantum (the envelope is the sawtooth's top, the mean half a quantum below); low-pass filtered
/// (`smoothing`). The loop before this one integrated the raw fill seen at each wake-up: a late wake-up
/// read as a fuller buffer, a late quantum as an emptier one, and a few ms of that, integrated, was
/// hundreds of ppm.
///
/// The integral runs only in the loop's linear range (level within `linearRange` of the target,
/// correction inside its bound: no wind-up) and rests `settleTime` after a (re)start or a cut. The
/// correction is bounded (`maximumPPM`): beyond it the input is broken rather than drifting, and the
/// last resort (discard, insert) takes over.
///
/// After a (re)start the buffer holds between one and two quanta more than the target, depending on
/// where the quanta fell: the first `alignmentTime` only measures the mean fill, then `update` asks
/// for the excess to be dropped once, so the loop starts at its target.
struct ClockRatioEstimator: Sendable {
    /// Parts per million; an input further off than this is not followed.
    static let maximumPPM = 1000.0
    /// Per second, and per second squared: natural frequency 0.1 rad/s, critically damped.
    static let proportional = 0.2
    static let integral = 0.01
    /// Seconds: the low-pass on the per-second level.
    static let smoothing = 2.0
    static let alignmentTime = 0.5  // seconds
    /// Level error (seconds) within which the integral runs.
    static let linearRange = 0.004
    /// Seconds after a (re)start or a cut during which the integral rests (the proportional part
    /// brings the level back without the transient winding it up).
    static let settleTime = 10.0

    private(set) var estimatedRatio = 0.0
    private(set) var correction = 0.0
    private var smoothedLevel: Double?
    private var measured = (time: 0.0, sum: 0.0, count: 0)
    /// The current second of program time: its frames so far and its highest observation.
    private var second = (frames: 0, top: -Double.infinity)
    private var sinceDisturbance = 0.0

    /// The buffer's level in frames (the fill an on-time source gives once a block is taken,
    /// smoothed), nil while measuring after a start.
    var fill: Double? { smoothedLevel }
    var estimatedPPM: Double { estimatedRatio * 1e6 }
    var correctionPPM: Double { correction * 1e6 }

    /// Feeds one block, before it is read: `fill` input frames buffered now, `frames` program frames to
    /// produce, whose last was due `lateness` seconds ago (0 when on time), the source's last quantum in
    /// `sinceArrival` seconds ago; `quantum` is the source's quantum (its last: the sawtooth's height;
    /// not the largest, which a start or a catch-up can make several times the usual). Returns the step
    /// (input frames per output frame) for this block, and the frames to drop from the buffer now (once,
    /// at the end of the alignment; else 0).
    mutating func update(fill: Double, frames: Int, lateness: Double = 0, sinceArrival: Double = 0, target: Double, quantum: Int,
                         rate: Double) -> (step: Double, excess: Int) {
        let limit = Self.maximumPPM / 1e6, elapsed = Double(frames) / rate
        // The fill once this block is taken, as it was when its last frame was due.
        let observed = fill - Double(frames) * (1 + correction) - max(0, lateness) * rate
        // The same when the last quantum came in (the sawtooth's top: the clock has taken
        // `sinceArrival` seconds of it since).
        let peak = observed + max(0, sinceArrival) * rate
        guard let previous = smoothedLevel else {
            // Aligning: the mean over the sawtooth, then what is beyond the target goes once.
            measured = (measured.time + elapsed, measured.sum + observed, measured.count + 1)
            correction = estimatedRatio
            guard measured.time >= Self.alignmentTime else { return (1 + correction, 0) }
            let mean = measured.sum / Double(measured.count), excess = max(0, Int((mean - target).rounded()))
            smoothedLevel = mean - Double(excess)
            second = (0, -.infinity)
            return (1 + correction, excess)
        }
        sinceDisturbance += elapsed
        second = (second.frames + frames, max(second.top, peak))
        var level = previous
        if Double(second.frames) >= rate {
            // The level: the envelope, less half the sawtooth.
            let length = Double(second.frames) / rate
            level = previous + (1 - exp(-length / Self.smoothing)) * (second.top - Double(quantum) / 2 - previous)
            smoothedLevel = level
            second = (0, -.infinity)
            let error = (level - target) / rate
            let wanted = estimatedRatio + Self.proportional * error
            if abs(wanted) < limit, abs(error) < Self.linearRange, sinceDisturbance >= Self.settleTime {
                estimatedRatio = min(max(estimatedRatio + Self.integral * error * length, -limit), limit)
            }
        }
        correction = min(max(estimatedRatio + Self.proportional * (level - target) / rate, -limit), limit)
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
        sinceDisturbance = 0
        return cut
    }

    /// After a gap the buffer starts over: the level is measured afresh, the clock ratio is kept.
    mutating func restart() {
        smoothedLevel = nil
        measured = (0, 0, 0)
        second = (0, -.infinity)
        sinceDisturbance = 0
    }
}

/// Measures a source's clock from when its samples arrive: sample n arriving at monotonic time t gives
/// the offset x = t - n / rate, which grows by -ratio every second for a source `ratio` fast. Arrivals
/// are only ever late (a busy machine delays the source or the callback, never hurries them), so each
/// second keeps its earliest arrival (the lower envelope, as NTP keeps its minimum-delay samples) and
/// the ratio is the robust slope (Theil-Sen) of the last `window` seconds of those. Reported beside the
/// loop's estimate as a diagnostic (`PipeWireMicrophone.Status.arrivalPPM`), not fed to the resampling:
/// on this rig under a load of 10-25 on 2 cores it read +1000 ppm for both a +300 and a -300 ppm source,
/// and with the graph's cycle times (`pw_time.now`) in place of the arrivals +18000 and -4700: a source
/// starved that much delivers on the scheduler's clock, not its own (docs/audio.md).
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
