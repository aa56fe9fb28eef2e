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
    /// Frames (or chunks) the encoder took without an error.
    public var framesEncoded: Int = 0
    /// Of `framesDropped`: frames still queued when the stage's stop budget ran out (see `StopBudget`).
    public var framesDroppedAtStop: Int = 0
    /// Size of the video stream now in use (0 before the encoder is open; 0 for audio).
    public var width: Int = 0
    public var height: Int = 0
    /// Why the encoder in use is not the one asked for (`auto` without a GPU, or a mid-show fallback).
    public var fallbackReason: String?
    /// A video stage whose encoder cannot keep up (see `OverloadWatch`): what the last overloaded window
    /// measured; nil while it keeps up.
    public var overload: OverloadWatch.Overload?

    public init(encoderName: String) { self.encoderName = encoderName }
}

/// Carries a non-Sendable encoder to the stage thread.
///
/// `@unchecked Sendable`: the encoder is handed over once, at stage creation, and from then on only the
/// stage's own thread touches it.
final class Handoff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// How long an encoding stage may take to stop. `finish` encodes what is queued only until its deadline;
/// past it the rest of the queue is dropped and counted (`framesDroppedAtStop`, one `frames_dropped`
/// event with reason `stop budget spent`), the encoder is not flushed, and end-of-stream is still
/// delivered so the outputs close their files. `finish` waits for the stage thread at most `grace`
/// beyond the deadline (one encode call already running when the deadline passed).
public enum StopBudget {
    /// The server's encoders step: every stage (program video, audio, each ISO) shares one deadline.
    public static let encodersSeconds: Double = 3
    public static let graceSeconds: Double = 1

    /// The deadline `seconds` from now on `clock` (the stages' own: monotonic unless a test injects one).
    public static func deadline(in seconds: Double = encodersSeconds, on clock: any Clock = .monotonic) -> UInt64 {
        clock.now() + UInt64(max(0, seconds) * 1e9)
    }
}

/// Bookkeeping shared by both stages: the queue, statistics, drop reporting, the stop budget and the thread.
final class StageCore<Input: Sendable>: Sendable {
    let queue: BoundedQueue<Input>
    let statistics: Mutex<EncoderStatistics>
    let events: EventSink
    let label: String
    /// The camera of an ISO stage: its events carry it.
    let camera: CameraID?
    /// The `reason` of this stage's `frames_dropped` events.
    let dropReason: String
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
    /// Monotonic time past which the stage thread drops what is queued instead of encoding it
    /// (`UInt64.max` until `finish`).
    private let stopDeadline = Atomic<UInt64>(.max)
    /// The clock of the drop reports and the overload watch (tests pass a `ManualClock`).
    let clock: any Clock
    /// Only video stages watch for overload (audio: a stall's burst of silence is no overload).
    private let watchesOverload: Bool
    private let overload = Mutex(OverloadWatch())

    init(capacity: Int, encoderName: String, events: EventSink, label: String, camera: CameraID? = nil,
         dropReason: String = "encoder queue full", clock: any Clock = .monotonic, watchesOverload: Bool = false) {
        queue = BoundedQueue(capacity: max(1, capacity))
        self.clock = clock
        self.watchesOverload = watchesOverload
        drops = Mutex(ThrottledCounter())
        statistics = Mutex(EncoderStatistics(encoderName: encoderName))
        self.events = events
        self.label = label
        self.camera = camera
        self.dropReason = dropReason
    }

    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        thread.withLock { $0 = NamedThread.start(name: name, body) }
    }

    /// `wake`: see `BoundedQueue.offer`.
    func submit(_ input: Input, wake: Bool = true) -> Bool {
        if queue.offer(input, wake: wake) {
            statistics.withLock { $0.framesIn += 1 }
            watchOverload(dropped: false)
            return true
        }
        statistics.withLock { $0.framesDropped += 1 }
        // Refusals after finish are counted but not reported: the stage is gone.
        guard !queue.isClosed else { return false }
        watchOverload(dropped: true)
        let report = drops.withLock { drops -> ThrottledCounter.Report? in
            let report = drops.note(at: clock.now())
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
        let now = clock.now()
        let report = drops.withLock { drops -> ThrottledCounter.Report? in
            let report = finishing ? drops.flush() : drops.due(at: now)
            dropsPending.store(drops.pending > 0, ordering: .relaxed)
            return report
        }
        if let report { emitDrops(report) }
    }

    /// Feeds the overload watch one offered frame; reports the start of an overload once (an
    /// `encoder_overloaded` event) and keeps the current one in the statistics for `status`.
    private func watchOverload(dropped: Bool) {
        guard watchesOverload else { return }
        let now = clock.now()
        let (encoded, name, width, height) = statistics.withLock { ($0.framesEncoded, $0.encoderName, $0.width, $0.height) }
        let (change, current) = overload.withLock { watch in (watch.note(at: now, dropped: dropped, encoded: encoded), watch.current) }
        guard let change else {
            // A window that confirmed the overload refreshes what `status` shows.
            if let current { statistics.withLock { if $0.overload != nil { $0.overload = current } } }
            return
        }
        statistics.withLock { $0.overload = current }
        guard case .began(let measured) = change else { return }
        func oneDecimal(_ value: Double) -> String { String((value * 10).rounded() / 10) }
        events.emit(StudioEvent(kind: .encoderOverloaded, camera: camera, details: [
            "by": "dropped frames", "stage": label, "encoder": name, "size": "\(width)x\(height)",
            "measured_fps": oneDecimal(measured.measuredFPS), "offered_fps": oneDecimal(measured.offeredFPS),
            "dropped_percent": String(measured.droppedPercent), "window_s": oneDecimal(measured.windowSeconds),
        ]))
    }

    private func emitDrops(_ report: ThrottledCounter.Report) {
        events.emit(StudioEvent(kind: .framesDropped, camera: camera, details: [
            "stage": label, "reason": dropReason,
            "dropped": String(report.count), "dropped_total": String(report.total),
        ]))
    }

    /// Past the stop deadline: the stage thread drops instead of encoding, and does not flush.
    var isStopBudgetSpent: Bool { clock.now() >= stopDeadline.load(ordering: .acquiring) }

    /// Counts an item dropped because the stop budget is spent (reported by `finishReports`).
    func dropAtStop() {
        statistics.withLock {
            $0.framesDropped += 1
            $0.framesDroppedAtStop += 1
        }
    }

    /// The stage thread's last reports: drops not yet reported, and what the stop budget cut.
    func finishReports() {
        reportDrops(finishing: true)
        let cut = statistics.withLock { $0.framesDroppedAtStop }
        guard cut > 0 else { return }
        let total = statistics.withLock { $0.framesDropped }
        events.emit(StudioEvent(kind: .framesDropped, camera: camera, details: [
            "stage": label, "reason": "stop budget spent",
            "dropped": String(cut), "dropped_total": String(total),
        ]))
    }

    /// Closes the queue and waits for the stage thread (at most `StopBudget.graceSeconds` past
    /// `deadline`); the thread encodes what is queued until `deadline`, then drops the rest. Returns
    /// false if the thread was still inside an encode call at the end of the grace (it then delivers
    /// end-of-stream when that call returns).
    @discardableResult
    func finish(deadline: UInt64) -> Bool {
        stopDeadline.store(min(deadline, stopDeadline.load(ordering: .acquiring)), ordering: .releasing)
        queue.close()
        guard let running = thread.withLock({ $0 }) else { return true }
        let limit = deadline &+ UInt64(StopBudget.graceSeconds * 1e9)
        let now = clock.now()
        return running.join(timeoutSeconds: limit > now ? Double(limit - now) / 1e9 : 0)
    }

    /// `frames`: 1 for an encode call, 0 for a flush.
    func record(packets: Int, milliseconds: Double, frames: Int) {
        statistics.withLock {
            $0.framesEncoded += frames
            $0.packetsOut += packets
            $0.lastEncodeMilliseconds = milliseconds
        }
    }

    /// An error event; `counted` errors (encode, flush) add to `encodeErrors`.
    func emitError(_ error: Error, encoder: String?, pts: MediaTime?, context: String, counted: Bool = true) {
        if counted { statistics.withLock { $0.encodeErrors += 1 } }
        var details = ["stage": label, "during": context, "error": String(describing: error)]
        details["encoder"] = encoder
        events.emit(StudioEvent(kind: .error, camera: camera, programTime: pts, details: details))
    }
}

func milliseconds(since start: UInt64) -> Double { Double(MonotonicClock.now() - start) / 1e6 }

/// Encodes program audio on its own thread ("encode.audio"), same shape as `VideoEncodingStage`.
/// The stage thread also meters the program audio on its way into the encoder (`levels`): one pass
/// over each chunk's samples, then a short lock to file the result; a reader copies under the same lock.
/// The thread is woken only by a chunk that completes an AAC frame (`FrameCompletion`): the chunks
/// before it wait in the queue, as they would in the encoder's buffer, and go in with it.
public final class AudioEncodingStage: Sendable {
    private let core: StageCore<AudioChunk>
    private let meter: SharedMeter
    private let completion: Mutex<FrameCompletion>

    public init(encoder: AACEncoder, queueCapacity: Int = 32, events: EventSink,
                deliver: @escaping @Sendable (MediaItem) -> Void) {
        core = StageCore(capacity: queueCapacity, encoderName: encoder.name, events: events, label: "audio")
        meter = SharedMeter(AudioLevelMeter(sampleRate: encoder.streamDescription.sampleRate, channels: encoder.streamDescription.channels))
        completion = Mutex(FrameCompletion(frameSize: encoder.frameSize, sampleRate: encoder.format.sampleRate))
        let handoff = Handoff(encoder)
        let core = self.core, meter = self.meter
        core.start(name: "encode.audio") {
            let encoder = handoff.value
            let description = encoder.streamDescription
            core.events.emit(StudioEvent(kind: .encoderChosen, details: [
                "kind": "audio", "encoder": encoder.name, "bitrate": String(description.bitRate),
                "sample_rate": String(description.sampleRate), "channels": String(description.channels),
                "generation": String(description.generation),
            ]))
            deliver(.format(description))
            func send(_ packets: [EncodedPacket], started: UInt64, frames: Int = 1) {
                core.record(packets: packets.count, milliseconds: milliseconds(since: started), frames: frames)
                for packet in packets { deliver(.packet(packet)) }
            }
            var failing = false
            while case .item(let chunk) = core.queue.pop() {
                defer { core.reportDrops() }
                if core.isStopBudgetSpent {
                    core.dropAtStop()
                    continue
                }
                let block = AudioLevelBlock(chunk)
                meter.state.withLock { $0.add(block) }
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
            if !core.isStopBudgetSpent {
                let started = MonotonicClock.now()
                do {
                    send(try encoder.flush(), started: started, frames: 0)
                } catch {
                    core.emitError(error, encoder: encoder.name, pts: nil, context: "flush")
                }
            }
            core.finishReports()
            deliver(.endOfStream)
        }
    }

    deinit { core.finish(deadline: StopBudget.deadline()) }

    @discardableResult
    public func submit(_ chunk: AudioChunk) -> Bool {
        core.submit(chunk, wake: completion.withLock { $0.completesFrame(chunk) })
    }

    /// End of stream within the stop budget (see `StopBudget`): encodes what is queued until `deadline`,
    /// drops and counts the rest, flushes the encoder if there is time left, delivers `.endOfStream` and
    /// joins the thread (at most `StopBudget.graceSeconds` past `deadline`; false if it had to give up).
    @discardableResult
    public func finish(deadline: UInt64? = nil) -> Bool { core.finish(deadline: deadline ?? StopBudget.deadline(on: core.clock)) }
    public var statistics: EncoderStatistics { core.statistics.withLock { $0 } }
    /// Chunks its queue holds; a chunk offered to a full queue is dropped and counted.
    public var queueCapacity: Int { core.queue.capacity }
    /// The program audio's levels (see `AudioLevelMeter`): at the floor before the first chunk.
    public var levels: AudioLevels {
        let copy = meter.state.withLock { $0 }
        return copy.levels
    }

    /// The meter, shared by the stage thread (which adds blocks) and readers (which copy it).
    private final class SharedMeter: Sendable {
        let state: Mutex<AudioLevelMeter>
        init(_ meter: AudioLevelMeter) { state = Mutex(meter) }
    }
}
