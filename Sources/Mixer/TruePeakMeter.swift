import CEBUR128
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
/// 4-lane vector: 12 vector multiply-adds per sample and channel (`cebur_true_peak_channel`, C with
/// clang's vector extensions, so a debug build runs it at C speed too). Readings agree with
/// libebur128's to float rounding (`TruePeakTests`).
///
/// Not thread-safe: fed and read on one thread (the mixer's audio thread, through `LoudnessMeter`).
struct TruePeakMeter {
    /// Oversampling factor.
    static let factor = 4
    /// Taps per phase (the 49-tap filter's first and last coefficients are 0).
    static let taps = 12
    /// Tap t's 4 phases at `4t ..< 4t + 4`: phase p's output for input frame n is the sum over t of
    /// `coefficients[4t + p] * x[n - t]`.
    static let coefficients: [Float] = {
        let length = 49, factor = Double(Self.factor)
        func coefficient(_ j: Int) -> Double {
            guard j < length else { return 0 }
            let m = Double(j) - Double(length - 1) / 2
            let sinc = abs(m) > 1e-6 ? sin(m * .pi / factor) / (m * .pi / factor) : 1
            let value = sinc * 0.5 * (1 - cos(2 * .pi * Double(j) / Double(length - 1)))
            return abs(value) > 1e-6 ? value : 0
        }
        return (0..<(taps * Self.factor)).map { Float(coefficient($0)) }
    }()

    let channels: Int
    /// Per channel, its last `taps - 1` samples (oldest first), channel after channel.
    private var history: [Float]
    /// Per channel, the highest magnitude of the oversampled signal so far.
    private(set) var peaks: [Float]

    init(channels: Int) {
        self.channels = max(channels, 1)
        history = [Float](repeating: 0, count: (Self.taps - 1) * self.channels)
        peaks = Array(repeating: 0, count: self.channels)
    }

    /// Measures interleaved frames (`channels` samples each).
    mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        let frames = samples.count / channels
        guard frames > 0, let base = samples.baseAddress else { return }
        let kept = Self.taps - 1, channels = self.channels
        Self.coefficients.withUnsafeBufferPointer { coefficients in
            history.withUnsafeMutableBufferPointer { history in
                for channel in 0..<channels {
                    peaks[channel] = cebur_true_peak_channel(base + channel, frames, channels, history.baseAddress! + channel * kept,
                                                             coefficients.baseAddress!, peaks[channel])
                }
            }
        }
    }
}
