#if canImport(Glibc)
import Glibc
#endif
import AudioKernels
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
    static let taps = Int(AK_RESAMPLER_TAPS)
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
    /// Which input frames are held and where the read position is (no samples).
    private(set) var accounting = Accounting()

    /// The resampler's frame accounting, apart from the samples: what `framesNeeded` asks for, what
    /// `bufferedFrames` reports and what a block consumes. The jitter buffer's simulations run on it
    /// (JitterBufferBurstTests), so they consume input exactly as a capture does.
    struct Accounting: Sendable {
        /// Input frames held (`pending`), and the read position in frames from the first of them.
        private(set) var held = AdaptiveResampler.lookahead - 1
        private(set) var position = Double(AdaptiveResampler.lookahead - 1)

        /// Input frames held that are not yet consumed (they count toward the input's buffer delay).
        var bufferedFrames: Double { Double(held) - position }

        /// Input frames that must be appended before `frames` output frames can be produced at `step`.
        func framesNeeded(toProduce frames: Int, step: Double) -> Int {
            guard frames > 0 else { return 0 }
            let last = Int((position + Double(frames - 1) * step).rounded(.down))
            return max(0, last + AdaptiveResampler.lookahead + 1 - held)
        }

        mutating func append(frames: Int) { held += frames }

        /// `frames` output frames were produced at `step`: returns the input frames no later output
        /// needs (to drop from the front).
        mutating func advance(frames: Int, step: Double) -> Int {
            let end = position + Double(frames) * step
            let consumed = max(0, min(Int(end.rounded(.down)) - (AdaptiveResampler.lookahead - 1), held))
            held -= consumed
            position = end - Double(consumed)
            return consumed
        }
    }

    init(channels: Int) {
        self.channels = max(1, channels)
        pending = [Float](repeating: 0, count: (Self.lookahead - 1) * self.channels)
    }

    /// Input frames held that are not yet consumed (they count toward the input's buffer delay).
    var bufferedFrames: Double { accounting.bufferedFrames }

    /// Input frames that must be appended before `produce(frames:step:)` can run.
    func framesNeeded(toProduce frames: Int, step: Double) -> Int { accounting.framesNeeded(toProduce: frames, step: step) }

    mutating func append(_ samples: UnsafeBufferPointer<Float>) {
        pending.append(contentsOf: samples)
        accounting.append(frames: samples.count / channels)
    }

    /// Starts over from silence (after a gap: what is held would play late).
    mutating func reset() { self = AdaptiveResampler(channels: channels) }

    /// Writes `frames` output frames into `destination` from sample `offset`; the input must hold
    /// `framesNeeded(toProduce:step:)` more frames first.
    mutating func produce(frames: Int, step: Double, into destination: inout [Float], offset: Int) {
        precondition(frames >= 0 && offset >= 0 && offset + frames * channels <= destination.count, "the block does not fit")
        precondition(framesNeeded(toProduce: frames, step: step) == 0, "not enough input appended")
        guard frames > 0 else { return }
        let channels = self.channels
        // Each frame's read position computed as `framesNeeded` computes the last one (a running sum
        // could round one frame further than the input it asked for).
        let start = accounting.position
        pending.withUnsafeBufferPointer { input in
            destination.withUnsafeMutableBufferPointer { output in
                let input = input.baseAddress!, output = output.baseAddress! + offset
                if channels == 2 {
                    Self.stereoTable.withUnsafeBufferPointer { table in
                        ak_resample_stereo(input, table.baseAddress!, Int32(Self.phases), start, step, frames, output, ak_isa_best)
                    }
                } else {
                    Self.table.withUnsafeBufferPointer { table in
                        Self.produce(frames: frames, channels: channels, step: step, start: start, input: input,
                                     table: table.baseAddress!, output: output)
                    }
                }
            }
        }
        // Drop what no later output needs.
        pending.removeFirst(accounting.advance(frames: frames, step: step) * channels)
    }

    /// `table` with every tap twice (left, right): a row lines up with `taps` interleaved stereo frames.
    /// Stereo, the program's format, runs `ak_resample_stereo` (C, in 4- or 8-lane vectors: each output
    /// frame one pass over `taps` interleaved frames, the row's taps interpolated towards the next row's
    /// on the way); any other channel count the scalar loop below.
    static let stereoTable: [Float] = table.flatMap { [$0, $0] }

    /// Any number of channels: the row's taps interpolated once per output frame, then one pass per channel.
    private static func produce(frames: Int, channels: Int, step: Double, start: Double, input: UnsafePointer<Float>,
                                table: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: taps) { coefficients in
            for frame in 0..<frames {
                let position = start + Double(frame) * step
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
/// the envelope is the fill an on-time source gives; less half a quantum (the envelope is the sawtooth's top, the mean half a quantum below).
/// The median of the last three seconds' envelopes (`envelopes`) is what is low-pass filtered
/// (`smoothing`): a second whose envelope stands out alone (a quantum that came a whole quantum early,
/// the source's cycle started twice; a second in which every quantum was late) moves nothing. The loop
/// before this one integrated the raw fill seen at each wake-up: a late wake-up read as a fuller buffer,
/// a late quantum as an emptier one, and a few ms of that, integrated, was hundreds of ppm.
///
/// The integral runs only in the loop's linear range (level within `linearRange` of the target,
/// correction inside its bound: no wind-up) and rests `settleTime` after a (re)start or a cut. The
/// estimate is bounded (`maximumPPM`): beyond it the input is broken rather than drifting. The
/// correction (estimate and proportional part) is bounded at `maximumCorrectionPPM`, still inaudible,
/// so that a step in what the source delivers (a quantum more or less for good: the test microphones'
/// capture does that now and then, docs/audio.md) drains through the rate in seconds, the integral
/// resting until it has (`stepThreshold`); only a level beyond `AudioCapture.burstThreshold` that lasts
/// is cut (`burst`).
///
/// After a (re)start the buffer holds between one and two quanta more than the target, depending on
/// where the quanta fell: the first `alignmentTime` only measures the mean fill, then `update` asks
/// for the excess to be dropped once, so the loop starts at its target.
struct ClockRatioEstimator: Sendable {
    /// Parts per million; an input further off than this is not followed.
    static let maximumPPM = 1000.0
    /// Parts per million: the most the step moves from 1 (estimate and level correction). 2000 ppm is
    /// 3.5 cents of pitch, below what a listener hears, and drains a quantum's step (21 ms) in ~15 s.
    static let maximumCorrectionPPM = 2000.0
    /// Per second, and per second squared: natural frequency 0.1 rad/s, critically damped.
    static let proportional = 0.2
    static let integral = 0.01
    /// Seconds: the low-pass on the per-second level.
    static let smoothing = 2.0
    static let alignmentTime = 0.5  // seconds
    /// Level error (seconds) within which the integral runs.
    static let linearRange = 0.004
    /// Seconds: the level (the median of three seconds' envelopes) moving this much from one second to
    /// the next is a step (the source delivered a quantum more or less for good, or came back from a
    /// stall short of what it owed), not drift: 1000 ppm moves it 1 ms a second.
    static let stepThreshold = 0.005
    /// Seconds: a step has drained once the level is this close to the target (or beyond it), or comes
    /// back by less than a fifth of this in a second (what is left is the clock's error).
    static let drainedWithin = 0.0005
    /// Seconds after a (re)start or a cut during which the integral rests (the proportional part
    /// brings the level back without the transient winding it up).
    static let settleTime = 10.0

    private(set) var estimatedRatio = 0.0
    private(set) var correction = 0.0
    private var smoothedLevel: Double?
    private var measured = (time: 0.0, sum: 0.0, count: 0)
    /// The current second of program time: its frames so far and its highest observation.
    private var second = (frames: 0, top: -Double.infinity)
    /// The last three seconds' envelopes less half a quantum (oldest first): their median is the level.
    private var envelopes: [Double] = []
    /// A step in the level (see `stepThreshold`) still draining: the side of the target the level is on
    /// (0 when there is none) and how far it was a second ago (frames). The integral rests meanwhile (a
    /// step is no clock error, and integrating its tail winds it up).
    private var draining = (sign: 0.0, left: 0.0)
    private var sinceDisturbance = 0.0
    /// Seconds since the last (re)start (a cut does not count).
    private var sinceStart = 0.0

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
        let limit = Self.maximumPPM / 1e6, correctionLimit = Self.maximumCorrectionPPM / 1e6, elapsed = Double(frames) / rate
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
            envelopes = []
            return (1 + correction, excess)
        }
        sinceDisturbance += elapsed
        sinceStart += elapsed
        second = (second.frames + frames, max(second.top, peak))
        var level = previous
        if Double(second.frames) >= rate {
            // The level: the envelope, less half the sawtooth; the median of the last three seconds.
            let length = Double(second.frames) / rate
            envelopes.append(second.top - Double(quantum) / 2)
            if envelopes.count > 3 { envelopes.removeFirst() }
            let median = Self.median(envelopes)
            if sinceStart >= Self.settleTime, abs(median - previous) > rate * Self.stepThreshold {
                // A step (it lasted two seconds): the level follows it at once, and it drains through the
                // rate while the integral rests (it is no clock error). Not within `settleTime` of a
                // (re)start: the level is still settling from the alignment's mean fill, and what comes
                // in beyond the target is the stall's backlog (`burst`).
                level = median
                draining = (sign: level > target ? 1 : -1, left: .infinity)
            } else {
                level = previous + (1 - exp(-length / Self.smoothing)) * (median - previous)
            }
            // The step has drained once the level is back at the target (within `drainedWithin`), or no
            // longer comes back (what is left is the clock's: the integral's to follow).
            if draining.sign != 0 {
                let left = (level - target) * draining.sign
                draining = left < rate * Self.drainedWithin || left > draining.left - rate * Self.drainedWithin / 5 ? (0, 0) : (draining.sign, left)
            }
            smoothedLevel = level
            second = (0, -.infinity)
            let error = (level - target) / rate
            let wanted = estimatedRatio + Self.proportional * error
            if abs(wanted) < correctionLimit, abs(error) < Self.linearRange, sinceDisturbance >= Self.settleTime, draining.sign == 0 {
                estimatedRatio = min(max(estimatedRatio + Self.integral * error * length, -limit), limit)
            }
        }
        correction = min(max(estimatedRatio + Self.proportional * (level - target) / rate, -correctionLimit), correctionLimit)
        return (1 + correction, 0)
    }

    /// The median of one to three values (the middle one; of two, their mean). Without sorting a copy:
    /// `burst` asks for it on every block of every input.
    static func median(_ values: [Double]) -> Double {
        switch values.count {
        case 1: return values[0]
        case 2: return (min(values[0], values[1]) + max(values[0], values[1])) / 2
        case 3:
            let (a, b, c) = (values[0], values[1], values[2])
            return max(min(a, b), min(max(a, b), c))
        default:
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
    }

    /// The frames to cut from the buffer now because of a jump that lasts (0 when there is none): the
    /// source delivered more than the target for good, and the median of the last three seconds'
    /// envelopes (two seconds of it at least: a catch-up after a stall, or one early quantum, is gone by
    /// then and never gets here) is more than `AudioCapture.burstThreshold` beyond the target. Less than
    /// that drains through the rate. Within `settleTime` of a (re)start the level (smoothed)
    /// more than `AudioCapture.restartBurstThreshold` beyond the target is cut: what a source that
    /// stalled (the buffer ran dry and started over) delivers of its backlog after the restart.
    mutating func burst(target: Double, rate: Double) -> Int {
        guard let smoothed = smoothedLevel else { return 0 }
        let level: Double
        if sinceStart < Self.settleTime {
            guard smoothed > target + rate * AudioCapture.restartBurstThreshold else { return 0 }
            level = smoothed
        } else {
            guard envelopes.count == 3 else { return 0 }
            level = Self.median(envelopes)
            guard level > target + rate * AudioCapture.burstThreshold else { return 0 }
        }
        let cut = Int(level - target)
        smoothedLevel = target
        second = (0, -.infinity)
        envelopes = []
        draining = (0, 0)
        sinceDisturbance = 0
        return cut
    }

    /// After a gap the buffer starts over: the level is measured afresh, the clock ratio is kept.
    mutating func restart() {
        smoothedLevel = nil
        measured = (0, 0, 0)
        second = (0, -.infinity)
        envelopes = []
        draining = (0, 0)
        sinceDisturbance = 0
        sinceStart = 0
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
