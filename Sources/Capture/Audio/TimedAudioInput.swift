import Synchronization
import StudioCore
import StudioSystem

/// An audio input on its own clock, put on the program's: any backend (PipeWire's `PipeWireMicrophone`
/// today; a network stream, a clip or a capture node next) pushes timestamped interleaved F32 chunks at
/// `format` into it, and an `AudioInputSet`'s clock thread pulls one block per span out of it.
///
/// The samples wait in a jitter buffer (a ring of 1 s) and are read through an `AdaptiveResampler` whose
/// step a `ClockRatioEstimator` (inside `JitterBufferLoop`) sets from the buffer's fill: a source some
/// hundred ppm fast or slow keeps a fixed delay; discarding (a jump, a full ring) and inserting silence
/// (the buffer ran dry) are the last resort, counted apart (`AudioInputStatus`). Whatever the source has
/// not supplied (none connected, a late chunk, the whole process stalled: see `AudioClock`) is silence.
///
/// The backend's side (`push`, `newStream`, `connected`, `disconnected`, `updateStatus`) copies and
/// never blocks on the clock's side beyond a short lock, so it may run on a C callback thread
/// (PipeWire's data thread). `capturedAt` is on `clock` (CLOCK_MONOTONIC nanoseconds by default): when
/// the chunk's last sample came in. Chunks are expected at a steady quantum (PipeWire's); see
/// `ClockRatioEstimator.update` for what the level is measured from.
///
/// `@unchecked Sendable`: what the backend and the clock's thread share crosses in `buffer` (the
/// samples, and `streamGeneration`: a new stream), `connectedFlag` (atomic) and `counters` (the status),
/// each under its own lock. `loop`, `resampler`, `origin`, `streamSeen`, `arrivalRatio`,
/// `sinceArrivalCheck` and `silentSinceUnderrun` belong to the clock's thread alone (`begin`, `fill`,
/// `stalled`: one `AudioInputSet`'s thread, or a standalone input's own clock thread).
public final class TimedAudioInput: ClockedAudioInput, @unchecked Sendable {
    /// The input's name in the set's log lines and `AudioInputSet.inputs` (`pipewire:NODE`, say).
    public let description: String
    public let format: AudioFormat
    /// The clock `capturedAt` and the set's clock are read on.
    public let clock: any Clock
    /// Frames in the clock's block (the jitter buffer's target allows for it).
    let blockFrames: Int

    struct Buffer: Sendable {
        var ring: AudioRing
        /// Largest chunk the source delivered, in frames.
        var largestQuantum = 0
        var discarded: Int64 = 0
        /// When the samples arrive (the source's clock against CLOCK_MONOTONIC).
        var arrivals = ArrivalClock()
        /// Added to the target after underruns, and taken off again after a calm stretch (see `fill`).
        var headroom: UnderrunHeadroom
        /// Frames dropped to align the buffer with its target after each start (not a last resort).
        var aligned: Int64 = 0
        /// Bumps at each `newStream`: the clock thread then starts its clock estimate over (a new
        /// stream, maybe a new source).
        var streamGeneration: UInt64 = 0
        /// When the last samples came in (on `clock`; 0 before any), and how many frames.
        var lastArrival: UInt64 = 0
        var lastQuantum = 0
    }

    let counters = Mutex(AudioInputStatus())
    let buffer: Mutex<Buffer>
    /// Whether a source is connected (the backend's `connected`/`disconnected`), read by the clock's thread.
    let connectedFlag = Atomic<Bool>(false)

    // The clock thread's: what it decides per block (whether captured audio plays, the last resort, the
    // clock estimate), the resampler, and whether the silence now follows an underrun.
    var loop = JitterBufferLoop()
    var resampler: AdaptiveResampler
    /// The `Buffer.streamGeneration` the clock's loop was started for.
    var streamSeen: UInt64 = 0
    var sinceArrivalCheck = 0
    /// When the clock's sample 0 is due (on `clock`), from `begin`.
    var origin: UInt64 = 0
    /// The source's clock ratio from its arrivals (`ArrivalClock`), a diagnostic.
    var arrivalRatio: Double?
    var silentSinceUnderrun = false

    /// - Parameters:
    ///   - chunkDuration: the set's block, seconds (`AudioInputSet.chunkDuration`).
    ///   - clock: the set's clock (tests pass a `ManualClock`); `capturedAt` is read on it.
    public init(_ description: String, format: AudioFormat = .program, chunkDuration: Double = AudioInputSet.standardChunkDuration,
                clock: any Clock = .monotonic) {
        self.description = description
        self.format = format
        self.clock = clock
        blockFrames = Int(AudioInputSet.clampedChunkDuration(chunkDuration) * Double(format.sampleRate))
        buffer = Mutex(Buffer(ring: AudioRing(frames: format.sampleRate, channels: max(1, format.channels)),
                              headroom: UnderrunHeadroom(rate: format.sampleRate)))
        resampler = AdaptiveResampler(channels: format.channels)
    }

    public var status: AudioInputStatus { counters.withLock { $0 } }

    /// Whether a source is connected now (between `connected` and `disconnected`).
    public var isConnected: Bool { connectedFlag.load(ordering: .sequentiallyConsistent) }

    // MARK: The backend's side (any thread, a C callback's included: copy only)

    /// `samples` (interleaved at `format`) came in, the last of them at `capturedAt` (on `clock`). What
    /// the ring (1 s) has no room for is discarded and counted.
    public func push(_ samples: UnsafeBufferPointer<Float>, capturedAt: UInt64) {
        let frames = samples.count / max(1, format.channels)
        guard frames > 0 else { return }
        let arrival = Double(capturedAt) / 1e9, rate = Double(format.sampleRate)
        buffer.withLock {
            $0.lastArrival = capturedAt
            $0.lastQuantum = frames
            $0.arrivals.arrived(frames: frames, at: arrival, rate: rate)
            let dropped = $0.ring.write(samples)
            $0.discarded += Int64(dropped)
            $0.largestQuantum = max($0.largestQuantum, frames)
        }
    }

    /// The same from an array.
    public func push(_ samples: [Float], capturedAt: UInt64) {
        samples.withUnsafeBufferPointer { push($0, capturedAt: capturedAt) }
    }

    /// The backend starts a new stream (maybe from another source): the jitter buffer empties, the
    /// largest quantum and the underrun headroom start over, and so does the clock estimate (at the
    /// clock thread's next block). Not connected until `connected`.
    public func newStream() {
        connectedFlag.store(false, ordering: .sequentiallyConsistent)
        buffer.withLock {
            $0.streamGeneration &+= 1
            $0.ring.removeAll()
            $0.largestQuantum = 0
            $0.headroom = UnderrunHeadroom(rate: format.sampleRate)
            $0.arrivals = ArrivalClock()
        }
    }

    /// The source `name` is connected: its samples count as captured, a dry buffer as inserted silence.
    public func connected(_ name: String) {
        connectedFlag.store(true, ordering: .sequentiallyConsistent)
        counters.withLock {
            $0.node = name
            $0.connections += 1
        }
    }

    /// The source went away (or the backend let go of it): silence until it is connected again.
    public func disconnected() {
        connectedFlag.store(false, ordering: .sequentiallyConsistent)
        counters.withLock {
            $0.node = nil
            $0.streamState = "none"
        }
    }

    /// The backend's details in the status (`streamState`, `defaultNode`, `connectAttempts`).
    public func updateStatus(_ change: (inout AudioInputStatus) -> Void) { counters.withLock { change(&$0) } }

    /// Nothing to let go of: the backend owns its threads (see `PipeWireMicrophone`).
    public func end() {}
}
