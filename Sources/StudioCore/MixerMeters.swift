/// What the mixer's meters read: per input (post-fader) and for the program (after the limiter), peak,
/// RMS and peak hold per channel in dBFS (`AudioLevels`), and the program's EBU R128 loudness.

/// The program's loudness after EBU R128 / ITU-R BS.1770 (K-weighted, LUFS; 0 LU = the target's
/// reference). nil where there is nothing to report: silence, or too little audio for the window.
public struct ProgramLoudness: Sendable, Equatable {
    /// A momentary or short-term loudness as reported: nil below `AudioLevels.floor` (-96), as the level
    /// meters read silence. After digital silence the K-weighting filter's tail decays towards zero
    /// without reaching it, and read as a number it is -2000 LUFS and less (seen in the console).
    public static func reading(_ lufs: Double) -> Double? { lufs.isFinite && lufs >= AudioLevels.floor ? lufs : nil }

    /// The last 400 ms (EBU R128 "M").
    public var momentaryLUFS: Double?
    /// The last 3 s ("S").
    public var shortTermLUFS: Double?
    /// Since the mixer started, gated (-70 LUFS absolute, -10 LU relative): the programme's loudness ("I").
    public var integratedLUFS: Double?
    /// Loudness range (LRA, LU): the spread of short-term loudness since the start (EBU Tech 3342).
    public var rangeLU: Double?
    /// The highest sample magnitude since the start, dBFS (over both channels).
    public var samplePeakDBFS: Double?
    /// The highest true (inter-sample, 4x oversampled) peak since the start, dBTP.
    public var truePeakDBTP: Double?

    public init(momentaryLUFS: Double? = nil, shortTermLUFS: Double? = nil, integratedLUFS: Double? = nil,
                rangeLU: Double? = nil, samplePeakDBFS: Double? = nil, truePeakDBTP: Double? = nil) {
        self.momentaryLUFS = momentaryLUFS
        self.shortTermLUFS = shortTermLUFS
        self.integratedLUFS = integratedLUFS
        self.rangeLU = rangeLU
        self.samplePeakDBFS = samplePeakDBFS
        self.truePeakDBTP = truePeakDBTP
    }
}

/// One reading of every meter of the mixer, taken on its audio thread.
public struct MixerMeters: Sendable, Equatable {
    /// Each input's levels after its fader, pan, mute and follow (before the master), by input name.
    public var inputs: [String: AudioLevels]
    /// The program's levels after the master gain and the limiter.
    public var program: AudioLevels
    public var loudness: ProgramLoudness
    /// The sample after the last one these readings include, on the program's audio timeline.
    public var end: Int64

    public init(inputs: [String: AudioLevels], program: AudioLevels, loudness: ProgramLoudness, end: Int64) {
        self.inputs = inputs
        self.program = program
        self.loudness = loudness
        self.end = end
    }

    /// Nothing measured yet.
    public static let silent = MixerMeters(inputs: [:], program: .silent(channels: AudioFormat.program.channels),
                                           loudness: ProgramLoudness(), end: 0)
}
