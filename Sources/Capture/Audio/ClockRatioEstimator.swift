#if canImport(Glibc)
import Glibc
#endif
import StudioCore

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
/// loop's estimate as a diagnostic (`AudioInputStatus.arrivalPPM`), not fed to the resampling:
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
