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
