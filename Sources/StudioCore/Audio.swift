/// A run of program audio: interleaved 32-bit float samples at the program's `AudioFormat`.
/// `pts` is the program time of the first sample, computed from the sample count since the program
/// started, on the same clock as video.
public struct AudioChunk: Sendable {
    public var format: AudioFormat
    public var samples: [Float]
    public var pts: MediaTime
    /// Index of the first sample on the program's audio timeline.
    public var firstSample: Int64

    public init(format: AudioFormat, samples: [Float], pts: MediaTime, firstSample: Int64) {
        self.format = format
        self.samples = samples
        self.pts = pts
        self.firstSample = firstSample
    }
    public var frameCount: Int { samples.count / max(format.channels, 1) }
}
