import StudioCore
import AudioKernels

/// A value moving linearly to a target over a number of frames; the first step lands on the first
/// frame after `set` (a change for frame N moves frame N already).
struct Ramp {
    private(set) var value: Float
    private var target: Float
    private var step: Float = 0
    private(set) var remaining = 0

    init(_ value: Float) {
        self.value = value
        target = value
    }

    var isMoving: Bool { remaining > 0 }

    /// Heads for `target` over `frames` frames (at once when 0).
    mutating func set(_ target: Float, over frames: Int) {
        guard target != self.target || isMoving else { return }
        self.target = target
        if frames <= 0 || target == value {
            value = target
            remaining = 0
        } else {
            step = (target - value) / Float(frames)
            remaining = frames
        }
    }

    /// The value for the next frame.
    mutating func next() -> Float {
        if remaining > 0 {
            remaining -= 1
            value = remaining == 0 ? target : value + step
        }
        return value
    }
}

/// One input's strip: delay line, fader and pan (a 2x2 matrix of ramped coefficients), and the
/// mute/follow "open" fade, summed into the program bus; its post-fader levels measured on the way.
/// Owned by the mixer's audio thread.
///
/// The delay line reads `settings.delayMS` plus `readAhead - compensation` frames back: the mixer is
/// handed each input `readAhead` frames ahead of the program, and an input placed `compensation`
/// frames earlier than it arrived (its capture latency, see `AudioMixer.setCompensation`) is read
/// that much less delayed.
final class ChannelStrip {
    /// Frames of delay line: 1 s (the longest delay) plus the longest read-ahead (`maximumReadAhead`)
    /// plus the longest slice the mixer processes at once, rounded up to a power of two.
    static let ringFrames = 65_536
    private static let mask = ringFrames - 1
    /// The most the mixer may be handed its inputs ahead of the program: 8192 frames (171 ms at 48 kHz).
    static let maximumReadAhead = 8_192

    let name: String
    var settings: MixerInputSettings
    private let ring: UnsafeMutableBufferPointer<Float>
    private let readAhead: Int
    private let sampleRate: Int
    /// Frames this input is placed earlier than it arrives (0...readAhead).
    private(set) var compensation = 0
    /// The frames the delay line reads back now: the settings' delay + readAhead - compensation.
    private var delay: Int
    /// During a delay change: the previous delay, faded out while the new one fades in.
    private var previousDelay = 0
    private var delayFade = Ramp(1)
    /// Left->left, right->left, left->right, right->right, each with the fader's gain in it.
    private var matrix: [Ramp]
    private var open: Ramp
    var meter: AudioLevelMeter
    /// Post-fader peak and sum of squares of the current meter block.
    private var peak: (Float, Float) = (0, 0)
    private var squares: (Double, Double) = (0, 0)
    private var measured = 0

    init(name: String, settings: MixerInputSettings, isOpen: Bool, sampleRate: Int, readAhead: Int = 0) {
        precondition((0...Self.maximumReadAhead).contains(readAhead), "read-ahead beyond the delay line")
        self.name = name
        self.settings = settings
        self.readAhead = readAhead
        self.sampleRate = sampleRate
        ring = .allocate(capacity: 2 * Self.ringFrames)
        ring.initialize(repeating: 0)
        delay = Self.frames(ms: settings.delayMS, sampleRate: sampleRate) + readAhead
        matrix = Self.matrix(settings).map(Ramp.init)
        open = Ramp(isOpen ? 1 : 0)
        meter = AudioLevelMeter(sampleRate: sampleRate, channels: 2)
    }

    deinit { ring.deallocate() }

    static func frames(ms: Double, sampleRate: Int) -> Int { Int((ms * Double(sampleRate) / 1000).rounded()) }

    /// The fader and pan as the four coefficients of `matrix`.
    static func matrix(_ settings: MixerInputSettings) -> [Float] {
        let gain = Float(linearGain(decibels: settings.gainDB))
        switch settings.pan {
        case .monoToBoth:
            return [gain / 2, gain / 2, gain / 2, gain / 2]
        case .position(let position):
            let left = Float(position > 0 ? 1 - position : 1), right = Float(position < 0 ? 1 + position : 1)
            return [gain * left, 0, 0, gain * right]
        }
    }

    /// New settings from frame on: the fader and pan over `declick` frames, a new delay cross-faded over
    /// `declick`, the open fade towards `isOpen` over the input's fade (at least `declick`).
    func apply(_ settings: MixerInputSettings, isOpen: Bool, declick: Int, sampleRate: Int) {
        self.settings = settings
        for (index, coefficient) in Self.matrix(settings).enumerated() { matrix[index].set(coefficient, over: declick) }
        retargetDelay(declick: declick)
        setOpen(isOpen, declick: declick, sampleRate: sampleRate)
    }

    /// Places the input `frames` earlier than it arrives (clamped to 0...readAhead) from the next frame
    /// on, cross-faded over `declick` as a delay change.
    func setCompensation(_ frames: Int, declick: Int) {
        compensation = min(max(frames, 0), readAhead)
        retargetDelay(declick: declick)
    }

    /// Cross-fades to the delay the settings and the compensation give, when it differs.
    private func retargetDelay(declick: Int) {
        let newDelay = Self.frames(ms: settings.delayMS, sampleRate: sampleRate) + readAhead - compensation
        guard newDelay != delay else { return }
        previousDelay = delay
        delay = newDelay
        delayFade = Ramp(0)
        delayFade.set(1, over: declick)
    }

    /// Fades up or down from the next frame, over the input's fade time.
    func setOpen(_ isOpen: Bool, declick: Int, sampleRate: Int) {
        open.set(isOpen ? 1 : 0, over: max(declick, Self.frames(ms: settings.fadeMS, sampleRate: sampleRate)))
    }

    /// Writes `input` (interleaved stereo for frames `start..<start + frames`, nil: silence; NaN and
    /// infinities: silence) into the delay line, then adds the delayed, faded strip into `bus` (the same frames).
    func mix(_ input: UnsafeBufferPointer<Float>?, start: Int64, frames: Int, into bus: UnsafeMutableBufferPointer<Float>) {
        let mask = Self.mask
        let first = Int(truncatingIfNeeded: start)
        // Into the delay line (C: `ak_strip_write`; a sample that is not a number is silence).
        ak_strip_write(ring.baseAddress, mask, Int64(start), input?.baseAddress, frames)
        var peakLeft = peak.0, peakRight = peak.1
        var sumLeft = 0.0, sumRight = 0.0
        /// Adds one frame of the strip's output into the bus and its meter block.
        @inline(__always) func add(_ outLeft: Float, _ outRight: Float, at index: Int) {
            bus[2 * index] += outLeft
            bus[2 * index + 1] += outRight
            peakLeft = max(peakLeft, abs(outLeft))
            peakRight = max(peakRight, abs(outRight))
            sumLeft += Double(outLeft * outLeft)
            sumRight += Double(outRight * outRight)
        }
        let steady = !open.isMoving && !delayFade.isMoving && !matrix.contains(where: \.isMoving)
        if steady {
            let gain = open.value
            let ll = matrix[0].value * gain, rl = matrix[1].value * gain, lr = matrix[2].value * gain, rr = matrix[3].value * gain
            if gain == 0 {
                measured += frames
                return
            }
            // The steady mix, in C (`ak_strip_mix`: vectorized at -O2, in every build).
            // Homogeneous tuples are laid out as C arrays: no array made per call.
            var matrix = (ll, rl, lr, rr), peaks = (peakLeft, peakRight), sums = (0.0, 0.0)
            withUnsafePointer(to: &matrix) { matrix in
                withUnsafeMutablePointer(to: &peaks) { peaks in
                    withUnsafeMutablePointer(to: &sums) { sums in
                        ak_strip_mix(ring.baseAddress, mask, Int64(start), Int64(delay), frames,
                                     UnsafeRawPointer(matrix).assumingMemoryBound(to: Float.self), bus.baseAddress,
                                     UnsafeMutableRawPointer(peaks).assumingMemoryBound(to: Float.self),
                                     UnsafeMutableRawPointer(sums).assumingMemoryBound(to: Double.self))
                    }
                }
            }
            (peakLeft, peakRight, sumLeft, sumRight) = (peaks.0, peaks.1, sums.0, sums.1)
        } else {
            for index in 0..<frames {
                var slot = 2 * ((first + index - delay) & mask)
                var left = ring[slot], right = ring[slot + 1]
                if delayFade.isMoving {
                    let fade = delayFade.next()
                    slot = 2 * ((first + index - previousDelay) & mask)
                    left = fade * left + (1 - fade) * ring[slot]
                    right = fade * right + (1 - fade) * ring[slot + 1]
                }
                let gain = open.next()
                let ll = matrix[0].next(), rl = matrix[1].next(), lr = matrix[2].next(), rr = matrix[3].next()
                add(gain * (ll * left + rl * right), gain * (lr * left + rr * right), at: index)
            }
        }
        peak = (peakLeft, peakRight)
        squares.0 += sumLeft
        squares.1 += sumRight
        measured += frames
    }

    /// Forgets the delay line's audio (after a jump on the timeline).
    func clearDelayLine() { ring.update(repeating: 0) }

    /// Hands the levels measured since the last call to the strip's meter (`end`: the frame after them).
    func closeMeterBlock(end: Int64) {
        var block = AudioLevelBlock([], channels: 2, end: end)
        block.peak = [peak.0, peak.1]
        block.sumOfSquares = [squares.0, squares.1]
        block.frames = measured
        meter.add(block)
        peak = (0, 0)
        squares = (0, 0)
        measured = 0
    }
}
