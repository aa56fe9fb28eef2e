import CEBUR128
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// The program's EBU R128 loudness (ITU-R BS.1770-4 / EBU Tech 3341 and 3342): momentary, short-term,
/// integrated, loudness range and sample peak measured by libebur128, true peak by `TruePeakMeter`
/// (libebur128's filter, in SIMD).
///
/// Owns one `ebur128_state` (the only owner: freed in `deinit`). Not thread-safe: fed and read on one
/// thread (the mixer's audio thread), which hands readings to others as `ProgramLoudness` values.
public final class LoudnessMeter {
    public let format: AudioFormat
    private var state: UnsafeMutablePointer<ebur128_state>?
    private var truePeak: TruePeakMeter

    /// nil when libebur128 cannot make a state for `format` (out of memory, or a format it refuses).
    public init?(format: AudioFormat = .program) {
        guard let state = ebur128_init(UInt32(format.channels), UInt(format.sampleRate), cebur_program_modes) else { return nil }
        self.format = format
        self.state = state
        truePeak = TruePeakMeter(channels: format.channels)
    }

    deinit { ebur128_destroy(&state) }

    /// Measures interleaved frames (`format.channels` samples each).
    public func add(_ samples: UnsafeBufferPointer<Float>) {
        let frames = samples.count / format.channels
        guard frames > 0, let base = samples.baseAddress else { return }
        _ = ebur128_add_frames_float(state, base, frames)
        truePeak.add(UnsafeBufferPointer(start: base, count: frames * format.channels))
    }

    public func add(_ samples: [Float]) { samples.withUnsafeBufferPointer { add($0) } }

    /// The readings now. Cheap (histogram mode): the audio thread can read it a few times a second.
    public var loudness: ProgramLoudness {
        let samplePeak = highest(ebur128_sample_peak)
        return ProgramLoudness(momentaryLUFS: read(ebur128_loudness_momentary), shortTermLUFS: read(ebur128_loudness_shortterm),
                               integratedLUFS: read(ebur128_loudness_global), rangeLU: read(ebur128_loudness_range),
                               samplePeakDBFS: decibels(samplePeak),
                               truePeakDBTP: decibels(max(samplePeak, Double(truePeak.peaks.max() ?? 0))))
    }

    /// A loudness from libebur128, nil for -inf (silence, or below the gate) or a failed call.
    private func read(_ call: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>?) -> Int32) -> Double? {
        var value = 0.0
        guard call(state, &value) == cebur_success, value.isFinite else { return nil }
        return value
    }

    /// The highest of the channels' peaks (linear in libebur128).
    private func highest(_ call: (UnsafeMutablePointer<ebur128_state>?, UInt32, UnsafeMutablePointer<Double>?) -> Int32) -> Double {
        var highest = 0.0
        for channel in 0..<format.channels {
            var value = 0.0
            if call(state, UInt32(channel), &value) == cebur_success { highest = max(highest, value) }
        }
        return highest
    }

    /// A linear peak in dB, nil before any sound. The true peak is at least the sample peak (as
    /// libebur128 reports it): the filter holds the last 6 samples back.
    private func decibels(_ peak: Double) -> Double? { peak > 0 ? 20 * log10(peak) : nil }
}
