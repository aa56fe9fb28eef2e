import Synchronization
import StudioCore
import StudioSystem

/// What an encoding stage has done so far.
public struct EncoderStatistics: Sendable, Equatable {
    /// Encoder currently in use (`libx264`, `aac`...).
    public var encoderName: String
    /// Frames (or audio chunks) accepted into the stage's queue.
    public var framesIn: Int = 0
    public var packetsOut: Int = 0
    /// Frames refused because the queue was full.
    public var framesDropped: Int = 0
    /// Encode calls that threw.
    public var encodeErrors: Int = 0
    /// Generation of the stream description now in use.
    public var generation: Int = 0
    /// Wall time of the last encode call.
    public var lastEncodeMilliseconds: Double = 0

    public init(encoderName: String) { self.encoderName = encoderName }
}

/// Carries a non-Sendable encoder to the stage thread.
///
/// `@unchecked Sendable`: the encoder is handed over once, at stage creation, and from then on only the
/// stage's own thread touches it.
private final class Handoff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Bookkeeping shared by both stages: the queue, statistics, drop reporting and the thread.
private final class StageCore<Input: Sendable>: Sendable {
    let queue: BoundedQueue<Input>
    let statistics: Mutex<EncoderStatistics>
    let events: EventSink
    let label: String
    /// The rate limit of `frames_dropped` events: under sustained overload a stage drops up to a frame
    /// per program tick. The first drop is reported at once; later drops are summed and reported at most
    /// once per 5 s (by the next drop or by the stage thread once the interval has passed), and whatever
    /// is left when the stage finishes is reported then.
    private let drops: Mutex<ThrottledCounter>
    /// Mirrors `drops.pending > 0`, so the stage thread checks for a due report without taking the lock.
    private let dropsPending = Atomic<Bool>(false)
    /// Set by `requestKeyframe`, taken by the stage thread.
    let keyframeRequested = Atomic<Bool>(false)
    private let thread = Mutex<NamedThread?>(nil)

    init(capacity: Int, encoderName: String, events: EventSink, label: String) {
        queue = BoundedQueue(capacity: max(1, capacity))
        drops = Mutex(ThrottledCounter())
        statistics = Mutex(EncoderStatistics(encoderName: encoderName))
        self.events = events
        self.label = label
    }

    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        thread.withLock { $0 = NamedThread.start(name: name, body) }
    }

    func submit(_ input: Input) -> Bool {
        if queue.offer(input) {
            statistics.withLock { $0.framesIn += 1 }
            return true
        }
        statistics.withLock { $0.framesDropped += 1 }
        // Refusals after finish are counted but not reported: the stage is gone.
        guard !queue.isClosed else { return false }
        let report = drops.withLock { drops -> ThrottledCounter.Report? in
            let report = drops.note(at: MonotonicClock.now())
            dropsPending.store(drops.pending > 0, ordering: .relaxed)
            return report
        }
        if let report { emitDrops(report) }
        return false
    }

    /// Called by the stage thread after each item: reports drops summed since the last report once the
    /// interval has passed; with `finishing`, reports whatever is left.
    func reportDrops(finishing: Bool = false) {
        guard finishing || dropsPending.load(ordering: .relaxed) else { return }
        let now = MonotonicClock.now()
        let report = drops.withLock { drops -> ThrottledCounter.Report? in
            let report = finishing ? drops.flush() : drops.due(at: now)
            dropsPending.store(drops.pending > 0, ordering: .relaxed)
            return report
        }
        if let report { emitDrops(report) }
    }

    private func emitDrops(_ report: ThrottledCounter.Report) {
        events.emit(StudioEvent(kind: .framesDropped, details: [
            "stage": label, "reason": "encoder queue full",
            "dropped": String(report.count), "dropped_total": String(report.total),
        ]))
    }

    func finish() {
        queue.close()
        let running = thread.withLock { $0 }
        running?.join()
    }

    func record(packets: Int, milliseconds: Double) {
        statistics.withLock {
            $0.packetsOut += packets
            $0.lastEncodeMilliseconds = milliseconds
        }
    }

    func emitError(_ error: Error, encoder: String, pts: MediaTime?, context: String) {
        statistics.withLock { $0.encodeErrors += 1 }
        events.emit(StudioEvent(kind: .error, programTime: pts, details: [
            "stage": label, "encoder": encoder, "during": context, "error": String(describing: error),
        ]))
    }
}

private func milliseconds(since start: UInt64) -> Double { Double(MonotonicClock.now() - start) / 1e6 }

/// Encodes program video on its own thread ("encode.video"). Producers never block: `submit` refuses
/// (and counts) a frame when the queue is full; `frames_dropped` events are rate-limited (see
/// `ThrottledCounter`: at most one per 5 s, plus a last one at finish). Sends `.format` before the first packet, and a new
/// `.format` (generation + 1) when it switches to the fallback encoder after an encode error.
public final class VideoEncodingStage: Sendable {
    private struct Input: Sendable {
        var frame: VideoFrame
        var pts: MediaTime
    }

    private let core: StageCore<Input>

    /// - Parameters:
    ///   - fallback: builds a replacement encoder when `encoder` throws mid-stream (used once). The failed
    ///     frame is re-encoded by the replacement as a keyframe, so timestamps stay continuous.
    ///   - choiceReason: why `encoder` is not the one asked for (`EncoderSelection.fallbackReason`); the
    ///     `encoder_chosen` event carries it as `fallback_reason`.
    ///   - deliver: receives `.format`, `.packet` and finally `.endOfStream`, on the stage thread. Must not block.
    public init(encoder: VideoEncoder, queueCapacity: Int = 8, events: EventSink,
                choiceReason: String? = nil,
                fallback: (@Sendable () throws -> VideoEncoder)? = nil,
                deliver: @escaping @Sendable (MediaItem) -> Void) {
        core = StageCore(capacity: queueCapacity, encoderName: encoder.name, events: events, label: "video")
        core.statistics.withLock { $0.generation = encoder.streamDescription.generation }
        let handoff = Handoff(encoder)
        let core = self.core
        core.start(name: "encode.video") {
            Self.run(encoder: handoff.value, choiceReason: choiceReason, fallback: fallback, core: core, deliver: deliver)
        }
    }

    deinit { core.finish() }

    /// Queues a frame for encoding at program time `pts`. Returns false when the queue was full (the
    /// frame is dropped and counted) or the stage has finished.
    @discardableResult
    public func submit(_ frame: VideoFrame, pts: MediaTime) -> Bool { core.submit(Input(frame: frame, pts: pts)) }

    /// The next frame the encoder takes becomes an IDR. Thread-safe.
    public func requestKeyframe() { core.keyframeRequested.store(true, ordering: .releasing) }

    /// End of stream: encodes what is queued, flushes the encoder, delivers `.endOfStream` and joins the thread.
    public func finish() { core.finish() }

    public var statistics: EncoderStatistics { core.statistics.withLock { $0 } }

    private static func run(encoder initial: VideoEncoder, choiceReason: String?, fallback initialFallback: (@Sendable () throws -> VideoEncoder)?,
                            core: StageCore<Input>,
                            deliver: @Sendable (MediaItem) -> Void) {
        var encoder = initial
        var fallback = initialFallback
        var generation = encoder.streamDescription.generation
        var failing = false

        func announce(_ encoder: VideoEncoder, kind: EventKind, extra: [String: String] = [:]) {
            var description = encoder.streamDescription
            description.generation = generation
            var details = [
                "kind": "video", "encoder": encoder.name, "preset": encoder.settings.preset,
                "bitrate": String(encoder.settings.bitRate), "size": "\(description.width)x\(description.height)",
                "frame_rate": description.frameRate.description, "generation": String(generation),
            ]
            details.merge(extra) { $1 }
            core.events.emit(StudioEvent(kind: kind, details: details))
            core.statistics.withLock {
                $0.encoderName = encoder.name
                $0.generation = generation
            }
            deliver(.format(description))
        }

        func send(_ packets: [EncodedPacket], started: UInt64) {
            core.record(packets: packets.count, milliseconds: milliseconds(since: started))
            for var packet in packets {
                packet.generation = generation
                deliver(.packet(packet))
            }
        }

        announce(encoder, kind: .encoderChosen, extra: choiceReason.map { ["fallback_reason": $0] } ?? [:])
        while case .item(let input) = core.queue.pop() {
            defer { core.reportDrops() }
            let force = core.keyframeRequested.exchange(false, ordering: .acquiringAndReleasing)
            let started = MonotonicClock.now()
            do {
                send(try encoder.encode(input.frame, pts: input.pts, forceKeyframe: force), started: started)
                failing = false
            } catch {
                // One error event per run of failures; every failure is counted.
                if !failing || fallback != nil {
                    core.emitError(error, encoder: encoder.name, pts: input.pts, context: "encode")
                } else {
                    core.statistics.withLock { $0.encodeErrors += 1 }
                }
                failing = true
                guard let makeReplacement = fallback else { continue }
                fallback = nil
                do {
                    let replacement = try makeReplacement()
                    let previous = encoder.name
                    encoder = replacement
                    generation += 1
                    announce(replacement, kind: .encoderFallback,
                             extra: ["from": previous, "to": replacement.name, "reason": String(describing: error)])
                    let retried = MonotonicClock.now()
                    send(try encoder.encode(input.frame, pts: input.pts, forceKeyframe: true), started: retried)
                    failing = false
                } catch {
                    core.emitError(error, encoder: encoder.name, pts: input.pts, context: "fallback")
                }
            }
        }
        let started = MonotonicClock.now()
        do {
            send(try encoder.flush(), started: started)
        } catch {
            core.emitError(error, encoder: encoder.name, pts: nil, context: "flush")
        }
        core.reportDrops(finishing: true)
        deliver(.endOfStream)
    }
}

/// Encodes program audio on its own thread ("encode.audio"), same shape as `VideoEncodingStage`.
public final class AudioEncodingStage: Sendable {
    private let core: StageCore<AudioChunk>

    public init(encoder: AACEncoder, queueCapacity: Int = 32, events: EventSink,
                deliver: @escaping @Sendable (MediaItem) -> Void) {
        core = StageCore(capacity: queueCapacity, encoderName: encoder.name, events: events, label: "audio")
        let handoff = Handoff(encoder)
        let core = self.core
        core.start(name: "encode.audio") {
            let encoder = handoff.value
            let description = encoder.streamDescription
            core.events.emit(StudioEvent(kind: .encoderChosen, details: [
                "kind": "audio", "encoder": encoder.name, "bitrate": String(description.bitRate),
                "sample_rate": String(description.sampleRate), "channels": String(description.channels),
                "generation": String(description.generation),
            ]))
            deliver(.format(description))
            func send(_ packets: [EncodedPacket], started: UInt64) {
                core.record(packets: packets.count, milliseconds: milliseconds(since: started))
                for packet in packets { deliver(.packet(packet)) }
            }
            var failing = false
            while case .item(let chunk) = core.queue.pop() {
                defer { core.reportDrops() }
                let started = MonotonicClock.now()
                do {
                    send(try encoder.encode(chunk), started: started)
                    failing = false
                } catch {
                    if !failing { core.emitError(error, encoder: encoder.name, pts: chunk.pts, context: "encode") }
                    else { core.statistics.withLock { $0.encodeErrors += 1 } }
                    failing = true
                }
            }
            let started = MonotonicClock.now()
            do {
                send(try encoder.flush(), started: started)
            } catch {
                core.emitError(error, encoder: encoder.name, pts: nil, context: "flush")
            }
            core.reportDrops(finishing: true)
            deliver(.endOfStream)
        }
    }

    deinit { core.finish() }

    @discardableResult
    public func submit(_ chunk: AudioChunk) -> Bool { core.submit(chunk) }
    public func finish() { core.finish() }
    public var statistics: EncoderStatistics { core.statistics.withLock { $0 } }
}
