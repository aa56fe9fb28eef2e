import Synchronization
import StudioCore
import StudioSystem

/// Several audio inputs captured at once on one program clock: every span of the program's audio
/// timeline (`chunkDuration`, `standardChunkDuration`: 10 ms) gives one block per input, all for the
/// same samples, handed over together (`AudioInputBlocks`), so a mixer takes one block per input per span.
///
/// One thread (`cap.audio`) runs the program's `AudioClock` and only ever reads jitter buffers,
/// resamples and fills blocks: it never waits on PipeWire. A PipeWire input is a capture like
/// `PipeWireMicrophone`'s (its own connection, stream and links, its jitter buffer, and its own connect
/// thread `cap.audio.conn` that connects, reconnects and tears down, however long the daemon takes:
/// a lost input's retries cannot delay the others' blocks), read through an
/// `AdaptiveResampler` whose step a `ClockRatioEstimator` sets from the buffer's fill: an input whose
/// clock runs 100-300 ppm fast or slow is resampled to the program clock and never accumulates delay.
/// Discarding (a jump) and inserting silence (the buffer ran dry) are the last resort, counted apart.
/// An input whose node vanishes gives silence in its own block only and is picked up again when it
/// returns; a daemon that goes away: silence, retried every `retryInterval`. The test tone and
/// silence are inputs too (computed from the sample index: no drift). `add` takes one more input while
/// the set runs (a microphone plugged in mid-show): its block joins the spans from the next one on.
public final class AudioInputSet: Sendable {
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// The PipeWire Audio/Source with this node.name (nil: the daemon's default, as `PipeWireMicrophone`).
        case pipewire(node: String?)
        case tone(TestToneSource.Signal)
        case silence

        public var description: String {
            switch self {
            case .pipewire(let node): "pipewire:\(node ?? "default")"
            case .tone: "tone"
            case .silence: "silence"
            }
        }
    }

    /// One input's state and counters (see `PipeWireMicrophone.Status`; a tone or silence is always
    /// "playing", with no node, no buffer and no drift).
    public typealias Status = PipeWireMicrophone.Status

    public let format: AudioFormat
    /// The program clock's block, seconds: 10 ms. Every span costs the audio thread a wake-up and a pass
    /// over every input, the mixer and the meters. 20 ms blocks were measured three times and not taken:
    /// they need 10 ms more in every jitter buffer (`AudioCapture.target`) and add 10 ms of their own, so
    /// a microphone reaches the encoder (and a viewer) 20 ms later, for 0.2 % of one core once the
    /// per-block work had moved to C (docs/benchmarks.md, "the 20 ms block decided").
    public static let standardChunkDuration = 0.01
    /// Seconds of program audio in each span (the clock's block).
    public let chunkDuration: Double
    private let audioClock: AudioClock
    /// The inputs in `sources` order; `add` appends while the clock thread reads them once per wake-up.
    private let inputs: Mutex<[(source: Source, input: Input)]>
    private let makeInput: @Sendable (Int, Source) -> Input
    private let worker = WorkerThread()
    private let threadName: String
    private let deliver: @Sendable (AudioInputBlocks) -> Void
    private let toneStatus: Mutex<[Int: Status]>

    /// - Parameters:
    ///   - report: one line for the operator's log per input (prefixed with its index and source).
    ///   - deliver: called on the set's thread with each span's blocks (in `sources` order); must not block.
    public init(sources: [Source], format: AudioFormat = .program, remote: String? = nil, chunkDuration: Double = standardChunkDuration,
                retryInterval: Double = 2, threadName: String = "cap.audio", clock: any Clock = .monotonic,
                report: @escaping @Sendable (String) -> Void = { _ in }, deliver: @escaping @Sendable (AudioInputBlocks) -> Void) {
        self.format = format
        self.threadName = threadName
        self.deliver = deliver
        let duration = min(max(chunkDuration, 0.002), 0.1)
        self.chunkDuration = duration
        audioClock = AudioClock(format: format, interval: UInt64(duration * 1e9), clock: clock)
        let makeInput: @Sendable (Int, Source) -> Input = { index, source in
            switch source {
            case .pipewire(let node):
                .capture(PipeWireMicrophone.Core(
                    nodeName: node, format: format, remote: remote, audioClock: AudioClock(format: format, interval: UInt64(duration * 1e9), clock: clock),
                    retryInterval: max(0.1, retryInterval), threadName: threadName, report: { report("audio input \(index + 1) (\(source)): \($0)") },
                    deliver: { _ in }))
            case .tone(let signal): .tone(signal)
            case .silence: .tone(.silence)
            }
        }
        self.makeInput = makeInput
        inputs = Mutex(sources.enumerated().map { ($0.element, makeInput($0.offset, $0.element)) })
        toneStatus = Mutex([:])
    }

    deinit { worker.requestStop() }

    /// Starts the clock: sample 0 is due at `origin` (default now), as with `TestToneSource.start`.
    public func start(origin: UInt64? = nil) {
        let origin = origin ?? audioClock.clock.now()
        worker.start(name: threadName) { [self] in run(origin: origin) }
    }

    /// Stops the clock and every capture (joins the thread).
    public func stop() { worker.stop() }

    /// Every input's source, in the order of the spans' blocks.
    public var sources: [Source] { inputs.withLock { $0.map(\.source) } }

    /// Adds an input while the set runs (or before it starts); answers its index in `sources` and in
    /// each span's blocks, from the next span on (silence until it captures).
    @discardableResult
    public func add(_ source: Source) -> Int {
        inputs.withLock { inputs in
            inputs.append((source, makeInput(inputs.count, source)))
            return inputs.count - 1
        }
    }

    /// Each input's status, in `sources` order.
    public var status: [Status] {
        let tones = toneStatus.withLock { $0 }
        return inputs.withLock { $0.map(\.input) }.enumerated().map { index, input in
            switch input {
            case .capture(let core): core.status.withLock { $0 }
            case .tone: tones[index] ?? Status()
            }
        }
    }

    private enum Input: Sendable {
        case capture(PipeWireMicrophone.Core)
        case tone(TestToneSource.Signal)
    }

    private func run(origin: UInt64) {
        let rate = format.sampleRate, channels = max(1, format.channels)
        var blocks: [AudioChunk] = []
        // The inputs as this thread runs them: `add`'s new ones join at the next wake-up, begun there.
        var inputs = self.inputs.withLock { $0.map(\.input) }
        // Whether any input is a test tone (whose counts `countTones` keeps): a set of captures skips
        // that lock and its dictionary walk on every span.
        func anyTone() -> Bool { inputs.contains { if case .tone = $0 { true } else { false } } }
        var hasTones = anyTone()
        func takeAdded(first: Int64) {
            let all = self.inputs.withLock { $0.count > inputs.count ? $0.map(\.input) : nil }
            guard let all else { return }
            for index in inputs.count..<all.count {
                switch all[index] {
                case .capture(let core): core.begin(first: first, origin: origin)
                case .tone: toneStatus.withLock { $0[index] = Status(nextSample: first, state: "playing") }
                }
            }
            inputs = all
            hasTones = anyTone()
        }
        audioClock.run(origin: origin, stop: { worker.isStopRequested }, begin: { first in
            for input in inputs { if case .capture(let core) = input { core.begin(first: first, origin: origin) } }
            toneStatus.withLock { status in
                for (index, input) in inputs.enumerated() {
                    if case .tone = input { status[index] = Status(nextSample: first, state: "playing") }
                }
            }
        }, fill: { span in
            takeAdded(first: span.firstSample)
            // The clock's chunk is the span; every input fills its own copy of it.
            blocks = inputs.map { input in
                var block = span
                switch input {
                case .capture(let core):
                    core.fill(&block)
                case .tone(let signal) where signal != .silence:
                    let first = block.firstSample, count = block.frameCount
                    block.samples.withUnsafeMutableBufferPointer { buffer in
                        for frame in 0..<count {
                            let value = TestToneSource.sampleValue(at: first + Int64(frame), signal: signal, sampleRate: rate)
                            for channel in 0..<channels { buffer[frame * channels + channel] = value }
                        }
                    }
                case .tone:
                    break
                }
                return block
            }
            if hasTones { countTones(span, captured: true) }
        }, stalled: { silence in
            takeAdded(first: silence.firstSample)
            for input in inputs { if case .capture(let core) = input { core.stalled(silence) } }
            blocks = inputs.map { _ in silence }
            if hasTones { countTones(silence, captured: false) }
        }, deliver: { span in
            deliver(AudioInputBlocks(firstSample: span.firstSample, pts: span.pts, blocks: blocks))
        })
        // Every capture, those added since the last wake-up too.
        for input in self.inputs.withLock({ $0.map(\.input) }) { if case .capture(let core) = input { core.shutdown() } }
    }

    private func countTones(_ span: AudioChunk, captured: Bool) {
        toneStatus.withLock { status in
            for index in status.keys {
                status[index]!.framesDelivered += Int64(span.frameCount)
                if captured { status[index]!.framesCaptured += Int64(span.frameCount) }
                status[index]!.nextSample = span.firstSample + Int64(span.frameCount)
            }
        }
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
