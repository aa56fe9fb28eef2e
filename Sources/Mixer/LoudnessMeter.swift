import CEBUR128
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// The program's EBU R128 loudness (ITU-R BS.1770-4 / EBU Tech 3341 and 3342): momentary, short-term,
/// integrated, loudness range and sample peak from libebur128's K-weighting, true peak by
/// `TruePeakMeter` (libebur128's filter, in SIMD).
///
/// Every loudness reading is made of the energies of consecutive 100 ms windows of K-weighted audio,
/// each summed once, when its last frame is added (libebur128's `ebur128_loudness_window`): the
/// momentary (400 ms) and short-term (3 s) loudness are the means of the newest 4 and 30 windows
/// (`WindowEnergies`, silence before the first: as libebur128's zeroed buffer); the integrated loudness
/// gates 400 ms blocks, one per window, and the loudness range 3 s blocks, one a second, in histograms
/// (`LoudnessHistogram`). All of them are libebur128's own readings at that window's end (checked by
/// `LoudnessWindowTests`), but libebur128 sums each block anew: with its integrated and range modes
/// on, and the short-term read every 100 ms, the sums of the same samples over and over were a fifth of
/// the audio thread. A reading between two windows' ends gives the loudness as of the last one (at most
/// 100 ms old; the peaks are as of now).
///
/// Owns one `ebur128_state` (the only owner: freed in `deinit`). Not thread-safe: fed and read on one
/// thread (the mixer's audio thread), which hands readings to others as `ProgramLoudness` values.
public final class LoudnessMeter {
    public let format: AudioFormat
    private var state: UnsafeMutablePointer<ebur128_state>?
    private var truePeak: TruePeakMeter
    /// Frames in 100 ms (libebur128's window: the rate a whole number of tens).
    private let windowFrames: Int
    private var windows = WindowEnergies()
    /// Frames added since the newest window ended.
    private var sinceWindow = 0
    /// The 400 ms blocks (integrated loudness) and the 3 s blocks (loudness range).
    private var blocks = LoudnessHistogram(), shortTermBlocks = LoudnessHistogram()
    /// The loudness as of the newest window (nil: worked out again at the next reading).
    private var levels: (momentary: Double?, shortTerm: Double?, integrated: Double?, range: Double)?

    /// nil when libebur128 cannot make a state for `format` (out of memory, or a format it refuses), or
    /// when 100 ms is not a whole number of frames at its rate.
    public init?(format: AudioFormat = .program) {
        guard format.sampleRate % 10 == 0,
              let state = ebur128_init(UInt32(format.channels), UInt(format.sampleRate), cebur_window_modes) else { return nil }
        self.format = format
        self.state = state
        truePeak = TruePeakMeter(channels: format.channels)
        windowFrames = format.sampleRate / 10
    }

    deinit { ebur128_destroy(&state) }

    /// Measures interleaved frames (`format.channels` samples each).
    public func add(_ samples: UnsafeBufferPointer<Float>) {
        let channels = format.channels
        var frames = samples.count / channels
        guard frames > 0, var base = samples.baseAddress else { return }
        truePeak.add(UnsafeBufferPointer(start: base, count: frames * channels))
        while frames > 0 {
            // Up to the end of the current window, then that window's energy.
            let part = min(frames, windowFrames - sinceWindow)
            _ = ebur128_add_frames_float(state, base, part)
            base += part * channels
            frames -= part
            sinceWindow += part
            if sinceWindow == windowFrames { closeWindow() }
        }
    }

    public func add(_ samples: [Float]) { samples.withUnsafeBufferPointer { add($0) } }

    /// The newest 100 ms window is complete: its energy, and the blocks that end with it.
    private func closeWindow() {
        sinceWindow = 0
        var window = 0.0
        let energy = ebur128_loudness_window(state, 100, &window) == cebur_success && window.isFinite
            ? LoudnessHistogram.energy(loudness: window) : 0
        windows.add(energy)
        // libebur128's blocks: 400 ms at the end of every window from the 4th; 3 s at the end of the
        // 30th and every 10th after it.
        if windows.closed >= 4 { blocks.add(energy: windows.mean(newest: 4)) }
        if windows.closed >= WindowEnergies.capacity && (windows.closed - WindowEnergies.capacity) % 10 == 0 {
            shortTermBlocks.add(energy: windows.mean(newest: WindowEnergies.capacity))
        }
        levels = nil
    }

    /// The readings now (see the type's doc). Cheap: the audio thread reads it every 100 ms.
    public var loudness: ProgramLoudness {
        let levels = self.levels ?? {
            // No energy reads -inf, which `reading` turns into none, as it does the silence floor.
            func loudness(_ energy: Double) -> Double? {
                windows.closed > 0 ? ProgramLoudness.reading(LoudnessHistogram.loudness(energy: energy)) : nil
            }
            return (loudness(windows.mean(newest: 4)), loudness(windows.mean(newest: WindowEnergies.capacity)),
                    blocks.integrated, shortTermBlocks.range)
        }()
        self.levels = levels
        let samplePeak = highest(ebur128_sample_peak)
        return ProgramLoudness(momentaryLUFS: levels.momentary, shortTermLUFS: levels.shortTerm, integratedLUFS: levels.integrated,
                               rangeLU: levels.range, samplePeakDBFS: decibels(samplePeak),
                               truePeakDBTP: decibels(max(samplePeak, Double(truePeak.peaks.max() ?? 0))))
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
/// the newest 4. Before `capacity` windows have closed the older ones are silence (libebur128's buffer
/// starts zeroed, and its readings count the time before the start as silence).
struct WindowEnergies {
    static let capacity = 30
    private var ring = [Double](repeating: 0, count: capacity)
    private var next = 0
    /// Windows closed since the start.
    private(set) var closed = 0

    /// The next window, the one right after the newest.
    mutating func add(_ energy: Double) {
        ring[next] = energy
        next = (next + 1) % Self.capacity
        closed += 1
    }

    /// The mean energy of the newest `windows` (1...capacity).
    func mean(newest windows: Int) -> Double {
        precondition((1...Self.capacity).contains(windows), "1 to \(Self.capacity) windows")
        var sum = 0.0
        for back in 1...windows { sum += ring[(next - back + Self.capacity) % Self.capacity] }
        return sum / Double(windows)
    }
}
