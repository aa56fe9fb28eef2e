import CEBUR128
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// The program's EBU R128 loudness (ITU-R BS.1770-4 / EBU Tech 3341 and 3342): momentary, short-term,
/// integrated, loudness range and sample peak measured by libebur128, true peak by `TruePeakMeter`
/// (libebur128's filter, in SIMD).
///
/// The momentary (400 ms) and short-term (3 s) loudness are energies over the last window of K-weighted
/// audio; libebur128 sums the whole window on every reading, and with a reading every 100 ms the
/// short-term's 144,000 frames a reading cost twice all the rest of libebur128. Read 100 ms apart, as
/// the mixer reads them, the windows are means of the last 4 and 30 energies of consecutive 100 ms
/// windows (`WindowEnergies`), each summed once; any other reading (the first 3 s, or a reading that
/// does not follow the last by exactly 100 ms of audio) asks libebur128.
///
/// Owns one `ebur128_state` (the only owner: freed in `deinit`). Not thread-safe: fed and read on one
/// thread (the mixer's audio thread), which hands readings to others as `ProgramLoudness` values.
public final class LoudnessMeter {
    public let format: AudioFormat
    private var state: UnsafeMutablePointer<ebur128_state>?
    private var truePeak: TruePeakMeter
    /// Frames in 100 ms, when a whole number (libebur128's window of 100 ms is then exactly that).
    private let windowFrames: Int?
    private var windows = WindowEnergies()
    /// Frames added since the last reading, and that reading (given again while nothing was added).
    private var addedSinceReading = 0
    private var lastReading: ProgramLoudness?

    /// nil when libebur128 cannot make a state for `format` (out of memory, or a format it refuses).
    public init?(format: AudioFormat = .program) {
        guard let state = ebur128_init(UInt32(format.channels), UInt(format.sampleRate), cebur_program_modes) else { return nil }
        self.format = format
        self.state = state
        truePeak = TruePeakMeter(channels: format.channels)
        windowFrames = format.sampleRate % 10 == 0 ? format.sampleRate / 10 : nil
    }

    deinit { ebur128_destroy(&state) }

    /// Measures interleaved frames (`format.channels` samples each).
    public func add(_ samples: UnsafeBufferPointer<Float>) {
        let frames = samples.count / format.channels
        guard frames > 0, let base = samples.baseAddress else { return }
        _ = ebur128_add_frames_float(state, base, frames)
        truePeak.add(UnsafeBufferPointer(start: base, count: frames * format.channels))
        addedSinceReading += frames
    }

    public func add(_ samples: [Float]) { samples.withUnsafeBufferPointer { add($0) } }

    /// The readings now. Cheap (histogram mode, and the windows above): the audio thread reads it every
    /// 100 ms.
    public var loudness: ProgramLoudness {
        if addedSinceReading == 0, let lastReading { return lastReading }
        if let windowFrames {
            // The 100 ms just added follow the newest window only if exactly that much audio came since.
            if addedSinceReading != windowFrames { windows.restart() }
            var window = 0.0
            if ebur128_loudness_window(state, 100, &window) == cebur_success {
                windows.add(window.isFinite ? Self.energy(loudness: window) : 0)
            } else {
                windows.restart()
            }
        }
        addedSinceReading = 0
        /// Over the newest `count` windows, else (too few consecutive) libebur128's own sum.
        func windowed(_ count: Int, else call: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>?) -> Int32) -> Double? {
            guard let energy = windows.mean(newest: count) else { return read(call) }
            return Self.loudness(energy: energy)
        }
        let samplePeak = highest(ebur128_sample_peak)
        let reading = ProgramLoudness(
            momentaryLUFS: windowed(4, else: ebur128_loudness_momentary),
            shortTermLUFS: windowed(WindowEnergies.capacity, else: ebur128_loudness_shortterm),
            integratedLUFS: read(ebur128_loudness_global), rangeLU: read(ebur128_loudness_range),
            samplePeakDBFS: decibels(samplePeak), truePeakDBTP: decibels(max(samplePeak, Double(truePeak.peaks.max() ?? 0))))
        lastReading = reading
        return reading
    }

    /// libebur128's loudness of a mean energy (nil for none: silence), and back.
    static func loudness(energy: Double) -> Double? { energy > 0 ? 10 * (log(energy) / log(10.0)) - 0.691 : nil }
    static func energy(loudness: Double) -> Double { pow(10, (loudness + 0.691) / 10) }

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

/// The energies (mean square, channel-weighted, K-weighted) of the last `capacity` consecutive 100 ms
/// windows of audio, newest last: the short-term loudness's 3 s are 30 of them, the momentary's 400 ms
/// the newest 4.
struct WindowEnergies {
    static let capacity = 30
    private var ring = [Double](repeating: 0, count: capacity)
    private var next = 0
    /// Consecutive windows held (up to `capacity`).
    private(set) var count = 0

    /// The next window, the one right after the newest.
    mutating func add(_ energy: Double) {
        ring[next] = energy
        next = (next + 1) % Self.capacity
        count = min(count + 1, Self.capacity)
    }

    /// The next window does not follow the newest: the run starts over.
    mutating func restart() { count = 0 }

    /// The mean energy of the newest `windows` (nil while fewer are held).
    func mean(newest windows: Int) -> Double? {
        guard windows > 0, windows <= count else { return nil }
        var sum = 0.0
        for back in 1...windows { sum += ring[(next - back + Self.capacity) % Self.capacity] }
        return sum / Double(windows)
    }
}
