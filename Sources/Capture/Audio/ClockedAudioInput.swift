import StudioCore

/// One input of an `AudioInputSet`: what the set's clock thread (`cap.audio`) pulls a block from on
/// every span of the program's audio timeline. A captured input is a `TimedAudioInput` that its backend
/// (PipeWire's `PipeWireMicrophone`; next a network stream, a clip) pushes timestamped samples into; the
/// test tone and silence are `ToneInput`s, computed from the sample index.
///
/// Every call comes from the set's one clock thread, in this order: `begin` once (when the clock starts,
/// or when the input joins a running set), then `fill` or `stalled` once per span, then `end` once (the
/// clock stopped: the input lets go of its backend, joining its threads). None of them may wait on a
/// backend: a slow input must cost the others nothing. `description` and `status` are read from any thread.
public protocol ClockedAudioInput: AnyObject, Sendable, CustomStringConvertible {
    /// The clock's first sample for this input, and its origin (when sample 0 is due, on the clock).
    func begin(first: Int64, origin: UInt64)
    /// Fills one span (`block` arrives as silence, stamped, at the set's format) with the input's audio.
    func fill(_ block: inout AudioChunk)
    /// The process stood still: `silence` is the stalled time's span (no input plays through it).
    func stalled(_ silence: AudioChunk)
    /// The clock stopped: the backend stops too (its threads joined).
    func end()
    /// Its state and counters now.
    var status: AudioInputStatus { get }
}

/// One audio input's state and counters (a tone or silence is always "playing", with no source, no
/// buffer and no drift). The backend's own words (`streamState`, `defaultNode`) are details a backend
/// may fill in; the rest is the `TimedAudioInput`'s.
public struct AudioInputStatus: Sendable, Hashable {
    /// The source captured now (a PipeWire node.name), nil while there is none (and for a tone).
    public var node: String?
    /// Samples per channel delivered on the timeline since `begin`.
    public var framesDelivered: Int64 = 0
    /// Of those, samples that came from the source (the rest was silence).
    public var framesCaptured: Int64 = 0
    /// Last resort, counted apart from the resampling: samples per channel the source delivered that
    /// were thrown away, at a jump (the buffer beyond its target by more than
    /// `AudioCapture.jumpThreshold`: a burst, a backlog) or because the ring (1 s) was full.
    public var framesDiscarded: Int64 = 0
    /// Times the source was found and connected (PipeWire: linked).
    public var connections: Int = 0
    /// Backend detail: times a connection was tried (PipeWire: to the daemon, every `retryInterval`
    /// while there is none), successful or not.
    public var connectAttempts: Int = 0
    /// Index of the next sample on the program's audio timeline.
    public var nextSample: Int64 = 0
    /// Backend detail: the backend's stream state in its own words (PipeWire's name for it), "none"
    /// without a stream (and for a tone).
    public var streamState: String = "none"
    /// Jitter-buffer delay in samples (what the clock keeps queued before it plays captured audio).
    public var bufferTarget: Int = 0
    /// Backend detail: the source a default-following input would take (PipeWire: the node the daemon's
    /// `default.audio.source` metadata names), nil when there is none.
    public var defaultNode: String?
    /// The input's clock against the program's (CLOCK_MONOTONIC), measured: positive runs fast.
    public var estimatedPPM: Double = 0
    /// The input's clock ratio measured independently, from when its samples arrive (`ArrivalClock`,
    /// after 15 s; nil before): a diagnostic, not fed to the resampling (see docs/pipewire.md).
    public var arrivalPPM: Double?
    /// The resampling correction applied to the last block (the estimate plus what pulls the
    /// buffer back to its target), in ppm.
    public var compensationPPM: Double = 0
    /// Last resort, counted apart from the resampling: samples per channel of silence inserted
    /// because the buffer ran dry while the source was connected (a stall, a late source), until it
    /// plays again. Silence while the source is gone is not counted here.
    public var framesInserted: Int64 = 0
    /// Samples per channel dropped once after each start to bring the buffer to its target (a start
    /// lands anywhere within a quantum); not a last resort.
    public var framesAligned: Int64 = 0
    /// Times the buffer ran dry while playing (each one a run of `framesInserted`); each raises
    /// `bufferTarget` by a quantum (up to 125 ms), which comes off again after a calm stretch
    /// (`UnderrunHeadroom`).
    public var underruns: Int = 0
    /// The buffer's level in samples per channel: input frames queued once a block is taken, as an
    /// on-time source gives them, smoothed (see `ClockRatioEstimator`), held at `bufferTarget` by the
    /// resampling.
    public var bufferFill: Double = 0
    /// Seconds a sample waits now between its arrival and the clock taking it: the level plus the
    /// resampler's half filter (0 while not playing).
    public var bufferSeconds: Double = 0
    /// "playing" (captured audio in the blocks), "buffering" (connected, filling the jitter buffer),
    /// "lost" (no source: silence).
    public var state: String = "lost"
    /// The delay this input adds on the program timeline, fixed once the quantum is known: the
    /// buffer's target plus the resampler's half filter, in seconds.
    public var bufferDelay: Double = 0

    public init(nextSample: Int64 = 0, state: String = "lost") {
        self.nextSample = nextSample
        self.state = state
    }
}
