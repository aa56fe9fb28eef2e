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
/// plugged in mid-show): its block joins the spans from the next one on. `remove` takes one out for
/// good (a source removed from the show): its slot gives silence from the next span on and is free,
/// and the next `add` takes the lowest free slot, so a set whose sources come and go does not grow.
///
/// Threads: `add` and `remove` may be called from any thread; they change the slots under a short lock
/// and count a generation. The clock thread looks at the generation once per wake-up and, when it
/// moved, takes the new slots: it ends the removed inputs there and begins the new ones, so every call
/// on an input still comes from the clock thread (a removed input's `end` runs there too, and must
/// return at once: a `TimedAudioInput`'s does nothing, its backend is the source that pushes into it).
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
    /// The slots in span order, changed by `add` and `remove` while the clock thread reads them once
    /// per wake-up (when their generation moved).
    private let list: Mutex<Slots>
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
        list = Mutex(Slots(inputs: inputs))
    }

    deinit { worker.requestStop() }

    /// Starts the clock: sample 0 is due at `origin` (default now), as with `TestToneSource.start`.
    public func start(origin: UInt64? = nil) {
        let origin = origin ?? audioClock.clock.now()
        worker.start(name: threadName) { [self] in run(origin: origin) }
    }

    /// Stops the clock and every input's backend (joins the thread).
    public func stop() { worker.stop() }

    /// Every slot's input, in the order of the spans' blocks (a free slot's is a `FreeSlot`).
    public var inputs: [any ClockedAudioInput] { list.withLock { $0.inputs } }

    /// How many blocks each span has: the inputs and the free slots.
    public var count: Int { list.withLock { $0.inputs.count } }

    /// The slot the next `add` takes: the lowest free one, else a new one at the end.
    public var nextSlot: Int { list.withLock { $0.free.min() ?? $0.inputs.count } }

    /// Slots no input holds now (removed, not taken again).
    public var freeSlots: Int { list.withLock { $0.free.count } }

    /// Adds an input while the set runs (or before it starts); answers its index in `inputs` and in
    /// each span's blocks, from the next span on (silence until it captures): the lowest free slot,
    /// else one more.
    @discardableResult
    public func add(_ input: any ClockedAudioInput) -> Int {
        list.withLock { slots in
            slots.generation &+= 1
            if let slot = slots.free.min() {
                slots.free.remove(slot)
                slots.inputs[slot] = input
                return slot
            }
            slots.inputs.append(input)
            return slots.inputs.count - 1
        }
    }

    /// Takes the input in `slot` out for good: from the next span on its block is silence and the slot
    /// is free for the next `add`. The clock thread ends the input at its next wake-up (once the clock
    /// has stopped, the input was ended with the others already). Answers the input removed (nil for a
    /// slot out of range or free).
    @discardableResult
    public func remove(at slot: Int) -> (any ClockedAudioInput)? {
        list.withLock { slots -> (any ClockedAudioInput)? in
            guard slots.inputs.indices.contains(slot), !slots.free.contains(slot) else { return nil }
            let removed = slots.inputs[slot]
            slots.inputs[slot] = FreeSlot()
            slots.free.insert(slot)
            slots.generation &+= 1
            if !slots.ended { slots.removed.append(removed) }
            return removed
        }
    }

    /// Each input's status, in `inputs` order.
    public var status: [AudioInputStatus] { inputs.map(\.status) }

    private func run(origin: UInt64) {
        var blocks: [AudioChunk] = []
        // The slots as this thread runs them, and the generation they are of.
        let initial = list.withLock { slots in
            defer { slots.removed = [] }
            return (inputs: slots.inputs, generation: slots.generation, removed: slots.removed)
        }
        var inputs = initial.inputs, generation = initial.generation
        // Removed before the clock started: never begun, ended as every input is once the clock stops.
        for input in initial.removed { input.end() }
        /// `add`'s and `remove`'s changes, at the next wake-up: removed inputs ended, new ones begun.
        func takeChanges(first: Int64) {
            guard let changed = list.withLock({ slots -> (all: [any ClockedAudioInput], removed: [any ClockedAudioInput])? in
                guard slots.generation != generation else { return nil }
                generation = slots.generation
                defer { slots.removed = [] }
                return (slots.inputs, slots.removed)
            }) else { return }
            for input in changed.removed { input.end() }
            for (slot, input) in changed.all.enumerated() where slot >= inputs.count || inputs[slot] !== input {
                input.begin(first: first, origin: origin)
            }
            inputs = changed.all
        }
        audioClock.run(origin: origin, stop: { worker.isStopRequested }, begin: { first in
            for input in inputs { input.begin(first: first, origin: origin) }
        }, fill: { span in
            takeChanges(first: span.firstSample)
            // The clock's chunk is the span; every input fills its own copy of it.
            blocks = inputs.map { input in
                var block = span
                input.fill(&block)
                return block
            }
        }, stalled: { silence in
            takeChanges(first: silence.firstSample)
            for input in inputs { input.stalled(silence) }
            blocks = inputs.map { _ in silence }
        }, deliver: { span in
            deliver(AudioInputBlocks(firstSample: span.firstSample, pts: span.pts, blocks: blocks))
        })
        // Every input, those added since the last wake-up too, and those removed since then; a removal
        // from now on finds the set ended and leaves its input to this pass.
        let (last, removed) = list.withLock { slots in
            slots.ended = true
            defer { slots.removed = [] }
            return (slots.inputs, slots.removed)
        }
        for input in removed + last { input.end() }
    }
}

/// The set's slots: each span's blocks in this order; free slots (their input removed) give silence
/// until `add` takes them again.
private struct Slots {
    var inputs: [any ClockedAudioInput]
    var free: Set<Int> = []
    /// Inputs removed since the clock thread last looked: it ends them.
    var removed: [any ClockedAudioInput] = []
    /// Moves at every `add` and `remove`.
    var generation: UInt64 = 0
    /// The clock has stopped and ended every input.
    var ended = false
}

/// A free slot's input: silence (the block arrives as silence), no source.
public final class FreeSlot: ClockedAudioInput {
    public init() {}
    public var description: String { "free" }
    public var status: AudioInputStatus { AudioInputStatus(state: "free") }
    public func begin(first: Int64, origin: UInt64) {}
    public func fill(_ block: inout AudioChunk) {}
    public func stalled(_ silence: AudioChunk) {}
    public func end() {}
}

/// One span of the program's audio timeline from every input of an `AudioInputSet`: `blocks[i]` is
/// input i's audio for samples `firstSample ..< firstSample + frameCount` (silence where it had none).
public struct AudioInputBlocks: Sendable {
    public var firstSample: Int64
    public var pts: MediaTime
    public var blocks: [AudioChunk]
    public var frameCount: Int { blocks.first?.frameCount ?? 0 }
}
