#if canImport(Glibc)
import Glibc
#endif

/// The true peak of interleaved audio (ITU-R BS.1770-4 Annex 2, EBU Tech 3341): each channel oversampled
/// four times by a polyphase FIR, the highest magnitude of the oversampled signal, per channel, since
/// the start.
///
/// The filter is libebur128's (1.2.6) for rates under 96 kHz: a 49-tap sinc for a cut at the original
/// Nyquist frequency, Hann-windowed, split into 4 phases of 12 taps (phase 0 is the input sample itself,
/// delayed 6 frames). libebur128 runs it in scalar double arithmetic, a tap and a phase at a time, and
/// that was a quarter of the program audio thread's CPU; here the 4 phases of one input sample are one
/// `SIMD4<Float>`: 12 vector multiply-adds per sample and channel. Readings agree with libebur128's to
/// float rounding (`TruePeakTests`).
///
/// Not thread-safe: fed and read on one thread (the mixer's audio thread, through `LoudnessMeter`).
struct TruePeakMeter {
    /// Oversampling factor.
    static let factor = 4
    /// Taps per phase (the 49-tap filter's first and last coefficients are 0).
    static let taps = 12
    /// Tap `t` of the 4 phases: phase p's output for input frame n is the sum over t of
    /// `coefficients[t][p] * x[n - t]`.
    static let coefficients: [SIMD4<Float>] = {
        let length = 49, factor = Double(Self.factor)
        func coefficient(_ j: Int) -> Double {
            guard j < length else { return 0 }
            let m = Double(j) - Double(length - 1) / 2
            let sinc = abs(m) > 1e-6 ? sin(m * .pi / factor) / (m * .pi / factor) : 1
            let value = sinc * 0.5 * (1 - cos(2 * .pi * Double(j) / Double(length - 1)))
            return abs(value) > 1e-6 ? value : 0
        }
        return (0..<taps).map { t in
            SIMD4<Float>((0..<Self.factor).map { p in Float(coefficient(Self.factor * t + p)) })
        }
    }()

    let channels: Int
    /// Per channel, the last `taps - 1` samples (oldest first) followed by room for the block at hand.
    private var lines: [[Float]]
    /// Per channel, the highest magnitude of the oversampled signal so far.
    private(set) var peaks: [Float]

    init(channels: Int) {
        self.channels = max(channels, 1)
        lines = Array(repeating: [Float](repeating: 0, count: Self.taps - 1), count: self.channels)
        peaks = Array(repeating: 0, count: self.channels)
    }

    /// Measures interleaved frames (`channels` samples each).
    mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        let frames = samples.count / channels
        guard frames > 0 else { return }
        let history = Self.taps - 1
        Self.coefficients.withUnsafeBufferPointer { coefficients in
            for channel in 0..<channels {
                if lines[channel].count < history + frames {
                    lines[channel].append(contentsOf: repeatElement(0, count: history + frames - lines[channel].count))
                }
                var high = SIMD4<Float>(repeating: peaks[channel])
                lines[channel].withUnsafeMutableBufferPointer { line in
                    // The block, deinterleaved, after the history.
                    var source = channel
                    for frame in 0..<frames {
                        line[history + frame] = samples[source]
                        source += channels
                    }
                    let base = line.baseAddress!
                    for frame in 0..<frames {
                        // x[n - t] = base[history + frame - t]
                        let newest = base + history + frame
                        var sum = coefficients[0] * newest.pointee
                        for t in 1..<Self.taps { sum += coefficients[t] * newest[-t] }
                        high = Self.lanewiseMax(high, Self.lanewiseMax(sum, -sum))
                    }
                    // The last `history` samples stay for the next block (ascending: a short block's
                    // source and destination overlap, the source always ahead).
                    for index in 0..<history { base[index] = base[frames + index] }
                }
                peaks[channel] = high.max()
            }
        }
    }

    /// The greater of each pair of lanes, inlined (the standard library's `pointwiseMax` stayed a call
    /// per sample in the release build's profile).
    @inline(__always)
    private static func lanewiseMax(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> {
        SIMD4(a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z, a.w > b.w ? a.w : b.w)
    }
}
