import Synchronization
import StudioCore
import StudioSystem

/// Several audio inputs captured at once on one program clock: every span of the program's audio
/// timeline (`chunkDuration`, `standardChunkDuration`: 10 ms) gives one block per input, all for the
/// same samples, handed over together (`AudioInputBlocks`), so a mixer takes one block per input per span.
///
/// One thread (`cap.audio`) runs the program's `AudioClock` and only ever pulls from its inputs
/// (`ClockedAudioInput`): it never waits on a backend. A captured input is a `TimedAudioInput` that its
/// backend pushes timestamped samples into (a PipeWire microphone, `PipeWireMicrophone.input`: its own
/// connection, stream and links, and its own connect thread `cap.audio.conn` that connects, reconnects
/// and tears down, however long the daemon takes: a lost input's retries cannot delay the others'
/// blocks), read through an `AdaptiveResampler` whose step a `ClockRatioEstimator` sets from the
/// buffer's fill: an input whose clock runs 100-300 ppm fast or slow is resampled to the program clock
/// and never accumulates delay. Discarding (a jump) and inserting silence (the buffer ran dry) are the
/// last resort, counted apart. An input whose source vanishes gives silence in its own block only and
/// is picked up again when it returns. The test tone and silence are inputs too (`ToneInput`: computed
/// from the sample index, no drift). `add` takes one more input while the set runs (a microphone
/// plugged in mid-show): its block joins the spans from the next one on.
///
/// Every input must be made for the set's `format`, `chunkDuration` and clock.
public final class AudioInputSet: Sendable {
    public let format: AudioFormat
    /// The program clock's block, seconds: 10 ms. Every span costs the audio thread a wake-up and a pass
    /// over every input, the mixer and the meters. 20 ms blocks were measured three times and not taken:
    /// they need 10 ms more in every jitter buffer (`AudioCapture.target`) and add 10 ms of their own, so
    /// a microphone reaches the encoder (and a viewer) 20 ms later, for 0.2 % of one core once the
    /// per-block work had moved to C (docs/benchmarks.md, "the 20 ms block decided").
    public static let standardChunkDuration = 0.01
    /// A block between 2 and 100 ms.
    public static func clampedChunkDuration(_ duration: Double) -> Double { min(max(duration, 0.002), 0.1) }
    /// Seconds of program audio in each span (the clock's block).
    public let chunkDuration: Double
    private let audioClock: AudioClock
    /// The inputs in span order; `add` appends while the clock thread reads them once per wake-up.
    private let list: Mutex<[any ClockedAudioInput]>
    private let worker = WorkerThread()
    private let threadName: String
    private let deliver: @Sendable (AudioInputBlocks) -> Void

    /// - Parameters:
    ///   - inputs: the inputs, in the order of each span's blocks.
    ///   - deliver: called on the set's thread with each span's blocks (in `inputs` order); must not block.
    public init(inputs: [any ClockedAudioInput], format: AudioFormat = .program, chunkDuration: Double = standardChunkDuration,
                threadName: String = "cap.audio", clock: any Clock = .monotonic, deliver: @escaping @Sendable (AudioInputBlocks) -> Void) {
        self.format = format
        self.threadName = threadName
        self.deliver = deliver
        let duration = Self.clampedChunkDuration(chunkDuration)
        self.chunkDuration = duration
        audioClock = AudioClock(format: format, interval: UInt64(duration * 1e9), clock: clock)
        list = Mutex(inputs)
    }

    deinit { worker.requestStop() }

    /// Starts the clock: sample 0 is due at `origin` (default now), as with `TestToneSource.start`.
    public func start(origin: UInt64? = nil) {
        let origin = origin ?? audioClock.clock.now()
        worker.start(name: threadName) { [self] in run(origin: origin) }
    }

    /// Stops the clock and every input's backend (joins the thread).
    public func stop() { worker.stop() }

    /// Every input, in the order of the spans' blocks.
    public var inputs: [any ClockedAudioInput] { list.withLock { $0 } }

    /// How many inputs there are (the index the next `add` answers).
    public var count: Int { list.withLock { $0.count } }

    /// Adds an input while the set runs (or before it starts); answers its index in `inputs` and in
    /// each span's blocks, from the next span on (silence until it captures).
    @discardableResult
    public func add(_ input: any ClockedAudioInput) -> Int {
        list.withLock { list in
            list.append(input)
            return list.count - 1
        }
    }

    /// Each input's status, in `inputs` order.
    public var status: [AudioInputStatus] { inputs.map(\.status) }

    private func run(origin: UInt64) {
        var blocks: [AudioChunk] = []
        // The inputs as this thread runs them: `add`'s new ones join at the next wake-up, begun there.
        var inputs = list.withLock { $0 }
        func takeAdded(first: Int64) {
            guard let all = list.withLock({ $0.count > inputs.count ? $0 : nil }) else { return }
            for input in all[inputs.count...] { input.begin(first: first, origin: origin) }
            inputs = all
        }
        audioClock.run(origin: origin, stop: { worker.isStopRequested }, begin: { first in
            for input in inputs { input.begin(first: first, origin: origin) }
        }, fill: { span in
            takeAdded(first: span.firstSample)
            // The clock's chunk is the span; every input fills its own copy of it.
            blocks = inputs.map { input in
                var block = span
                input.fill(&block)
                return block
            }
        }, stalled: { silence in
            takeAdded(first: silence.firstSample)
            for input in inputs { input.stalled(silence) }
            blocks = inputs.map { _ in silence }
        }, deliver: { span in
            deliver(AudioInputBlocks(firstSample: span.firstSample, pts: span.pts, blocks: blocks))
        })
        // Every input, those added since the last wake-up too.
        for input in list.withLock({ $0 }) { input.end() }
    }
}

/// One span of the program's audio timeline from every input of an `AudioInputSet`: `blocks[i]` is
/// input i's audio for samples `firstSample ..< firstSample + frameCount` (silence where it had none).
public struct AudioInputBlocks: Sendable {
    public var firstSample: Int64
    public var pts: MediaTime
    public var blocks: [AudioChunk]
    public var frameCount: Int { blocks.first?.frameCount ?? 0 }
}
