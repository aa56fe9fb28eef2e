import StudioCore
import StudioSystem

/// Which video feed a stage encodes: the program, or one camera's ISO feed. It names the stage's
/// thread and fills the details of the stage's events.
public struct VideoStageRole: Sendable, Equatable {
    /// The `kind` detail of `encoder_chosen` / `encoder_fallback` events: `video` or `iso`.
    public var kind: String
    /// The `stage` detail of every event of the stage.
    public var label: String
    public var threadName: String
    /// An ISO feed's camera: its events carry it.
    public var camera: CameraID?
    /// The `reason` of the stage's `frames_dropped` events.
    public var dropReason: String

    public static let program = VideoStageRole(kind: "video", label: "video", threadName: "encode.video", camera: nil,
                                               dropReason: "encoder queue full")

    /// Camera `camera`'s ISO feed: stage `iso.camN`, thread `encode.camN`.
    public static func iso(_ camera: CameraID) -> VideoStageRole {
        VideoStageRole(kind: "iso", label: "iso.\(camera.name)", threadName: "encode.\(camera.name)", camera: camera,
                       dropReason: "ISO encoder behind (software encoding cannot keep up; try a faster iso preset, smaller cameras or --no-iso)")
    }

    /// A capture node's sender of camera `camera` (`NodeSettings`): stage `send.camN`, thread `sendenc.camN`.
    public static func send(_ camera: CameraID) -> VideoStageRole {
        VideoStageRole(kind: "send", label: "send.\(camera.name)", threadName: "sendenc.\(camera.name)", camera: camera,
                       dropReason: "node sender's encoder behind (try node.video.size smaller, or fewer cameras per node)")
    }
}

/// Where a stage's encoders come from after the first.
private struct EncoderSource: Sendable {
    /// Opens an encoder for frames of `width`x`height`; `software`: the stage has fallen back (x264
    /// only from then on). Nil: the stage has one encoder of one size.
    var open: (@Sendable (_ width: Int, _ height: Int, _ software: Bool) throws -> EncoderSelection)? = nil
    /// Replaces an encoder that failed mid-show (used once), at its size.
    var fallback: (@Sendable (_ width: Int, _ height: Int) throws -> VideoEncoder)? = nil
}

/// Encodes one video feed on its own thread (`encode.video` for the program, `encode.camN` for an ISO
/// feed). Producers never block: `submit` refuses (and counts) a frame when the queue is full;
/// `frames_dropped` events are rate-limited (see `ThrottledCounter`: at most one per 5 s, plus a last
/// one at finish). An encoder too slow for the format (over 10 % of a 5 s window dropped, see
/// `OverloadWatch`) is reported once, `encoder_overloaded`, and shows in `statistics.overload`. Sends `.format` before the first packet, and a new `.format` (generation + 1) when
/// it switches to the fallback encoder after an encode error, or, for a stage made from settings, when
/// a frame of another size arrives (the old encoder is flushed, a new one opened at the new size).
public final class VideoEncodingStage: Sendable {
    fileprivate struct Input: Sendable {
        var frame: VideoFrame
        var pts: MediaTime
    }

    private let core: StageCore<Input>
    public let role: VideoStageRole

    /// A stage with one encoder, of one size.
    /// - Parameters:
    ///   - fallback: builds a replacement encoder when `encoder` throws mid-stream (used once). The failed
    ///     frame is re-encoded by the replacement as a keyframe, so timestamps stay continuous.
    ///   - choiceReason: why `encoder` is not the one asked for (`EncoderSelection.fallbackReason`); the
    ///     `encoder_chosen` event carries it as `fallback_reason`.
    ///   - deliver: receives `.format`, `.packet` and finally `.endOfStream`, on the stage thread. Must not block.
    public convenience init(encoder: VideoEncoder, queueCapacity: Int = 8, events: EventSink,
                            choiceReason: String? = nil,
                            fallback: (@Sendable () throws -> VideoEncoder)? = nil,
                            clock: any Clock = .monotonic,
                            deliver: @escaping @Sendable (MediaItem) -> Void) {
        var source = EncoderSource()
        if let fallback { source.fallback = { _, _ in try fallback() } }
        self.init(first: EncoderSelection(encoder: encoder, fallbackReason: choiceReason), source: source,
                  role: .program, queueCapacity: queueCapacity, events: events, clock: clock, deliver: deliver)
    }

    /// A stage whose encoders are made from `settings` (`makeEncoder(for:)`) at the size of the frames:
    /// `opened` (already made, for a server that must fail before it starts) or else one opened at the
    /// first frame's size; a frame of another size flushes it and opens the next (generation + 1, an
    /// `encoder_chosen` event). An encode error switches to x264 once (`makeSoftwareFallback`), which
    /// the stage keeps at later sizes. A size no encoder opens at is an error event, and the stage
    /// encodes nothing more.
    public convenience init(settings: VideoEncoderSettings, opened: EncoderSelection? = nil, role: VideoStageRole = .program,
                            queueCapacity: Int = 8, events: EventSink, clock: any Clock = .monotonic,
                            deliver: @escaping @Sendable (MediaItem) -> Void) {
        @Sendable func sized(_ width: Int, _ height: Int) -> VideoEncoderSettings {
            var sized = settings
            sized.width = width
            sized.height = height
            return sized
        }
        let source = EncoderSource(
            open: { width, height, software in
                software ? EncoderSelection(encoder: try makeSoftwareFallback(for: sized(width, height)))
                    : try makeEncoder(for: sized(width, height))
            },
            fallback: { width, height in try makeSoftwareFallback(for: sized(width, height)) })
        self.init(first: opened, source: source, role: role, queueCapacity: queueCapacity, events: events, clock: clock,
                  deliver: deliver)
    }

    private init(first: EncoderSelection?, source: EncoderSource, role: VideoStageRole, queueCapacity: Int, events: EventSink,
                 clock: any Clock, deliver: @escaping @Sendable (MediaItem) -> Void) {
        self.role = role
        core = StageCore(capacity: queueCapacity, encoderName: first?.encoder.name ?? "-", events: events, label: role.label,
                         camera: role.camera, dropReason: role.dropReason, clock: clock, watchesOverload: true)
        let handoff = Handoff(first)
        let core = self.core
        core.start(name: role.threadName) {
            VideoStageLoop(core: core, role: role, source: source, deliver: deliver).run(first: handoff.value)
        }
    }

    deinit { core.finish(deadline: StopBudget.deadline(on: core.clock)) }

    /// Queues a frame for encoding at program time `pts`. Returns false when the queue was full (the
    /// frame is dropped and counted) or the stage has finished.
    @discardableResult
    public func submit(_ frame: VideoFrame, pts: MediaTime) -> Bool { core.submit(Input(frame: frame, pts: pts)) }

    /// The next frame the encoder takes becomes an IDR. Thread-safe.
    public func requestKeyframe() { core.keyframeRequested.store(true, ordering: .releasing) }

    /// End of stream within the stop budget (see `StopBudget`): encodes what is queued until
    /// `deadline`, drops and counts the rest, flushes the encoder if there is time left, delivers
    /// `.endOfStream` and joins the thread (at most `StopBudget.graceSeconds` past `deadline`; false if
    /// it had to give up waiting).
    @discardableResult
    public func finish(deadline: UInt64? = nil) -> Bool { core.finish(deadline: deadline ?? StopBudget.deadline(on: core.clock)) }

    public var statistics: EncoderStatistics { core.statistics.withLock { $0 } }
    /// Frames its queue holds; a frame offered to a full queue is dropped and counted.
    public var queueCapacity: Int { core.queue.capacity }
}

/// The stage thread's state: the encoder in use, its generation, the fallback. Made and used on the
/// stage thread only.
private final class VideoStageLoop {
    typealias Input = VideoEncodingStage.Input
    private let core: StageCore<Input>
    private let role: VideoStageRole
    private let source: EncoderSource
    private let deliver: @Sendable (MediaItem) -> Void
    private var encoder: VideoEncoder?
    private var generation = 0
    /// The mid-show fallback happened (it happens once; later sizes open x264).
    private var fellBack = false
    /// In a run of encode errors (one error event per run without a fallback).
    private var failing = false
    /// No encoder opened at the frames' size: the stage encodes nothing more.
    private var unopenable = false

    init(core: StageCore<Input>, role: VideoStageRole, source: EncoderSource, deliver: @escaping @Sendable (MediaItem) -> Void) {
        self.core = core
        self.role = role
        self.source = source
        self.deliver = deliver
    }

    func run(first: EncoderSelection?) {
        if let first {
            encoder = first.encoder
            generation = first.encoder.streamDescription.generation
            announce(first.encoder, kind: .encoderChosen, reason: first.fallbackReason)
        }
        while case .item(let input) = core.queue.pop() {
            defer { core.reportDrops() }
            if core.isStopBudgetSpent {
                core.dropAtStop()
                continue
            }
            encode(input)
        }
        if let encoder, !core.isStopBudgetSpent { flush(encoder) }
        core.finishReports()
        deliver(.endOfStream)
    }

    private func encode(_ input: Input) {
        let frame = input.frame
        // A frame of another size (a camera that came back at another size): finish the old stream and
        // open a new encoder; the file output starts a new part on the new format.
        if let current = encoder, source.open != nil,
           frame.width != current.settings.width || frame.height != current.settings.height {
            flush(current)
            encoder = nil
            generation += 1
        }
        if encoder == nil {
            guard !unopenable, let open = source.open else { return }
            do {
                let selection = try open(frame.width, frame.height, fellBack)
                encoder = selection.encoder
                announce(selection.encoder, kind: .encoderChosen, reason: selection.fallbackReason)
            } catch {
                unopenable = true
                core.emitError(error, encoder: nil, pts: input.pts, context: "open encoder", counted: false)
                return
            }
        }
        guard let current = encoder else { return }
        let force = core.keyframeRequested.exchange(false, ordering: .acquiringAndReleasing)
        let started = MonotonicClock.now()
        do {
            send(try current.encode(frame, pts: input.pts, forceKeyframe: force), started: started, times: frame.times)
            failing = false
        } catch {
            // One error event per run of failures; every failure is counted.
            let canFallBack = !fellBack && source.fallback != nil
            if !failing || canFallBack {
                core.emitError(error, encoder: current.name, pts: input.pts, context: "encode")
            } else {
                core.statistics.withLock { $0.encodeErrors += 1 }
            }
            failing = true
            guard canFallBack, let makeReplacement = source.fallback else { return }
            fellBack = true
            fallBack(from: current, make: makeReplacement, input: input, error: error)
        }
    }

    /// The encoder (the GPU's, typically) failed mid-show: go on with a fresh x264 from this very frame
    /// (a keyframe, a new stream generation; timestamps continue).
    private func fallBack(from failed: VideoEncoder, make: (Int, Int) throws -> VideoEncoder, input: Input, error: Error) {
        do {
            let replacement = try make(failed.settings.width, failed.settings.height)
            encoder = replacement
            generation += 1
            announce(replacement, kind: .encoderFallback, reason: String(describing: error),
                     extra: ["from": failed.name, "to": replacement.name, "reason": String(describing: error)], at: input.pts)
            let retried = MonotonicClock.now()
            send(try replacement.encode(input.frame, pts: input.pts, forceKeyframe: true), started: retried)
            failing = false
        } catch {
            core.emitError(error, encoder: encoder?.name ?? failed.name, pts: input.pts, context: "fallback")
        }
    }

    /// Tells the outputs (a `.format` of this generation) and the log (an event) about an encoder.
    /// `at`: the pts of the first frame the encoder takes (a fallback's), when there is one.
    private func announce(_ encoder: VideoEncoder, kind: EventKind, reason: String?, extra: [String: String] = [:], at pts: MediaTime? = nil) {
        var description = encoder.streamDescription
        description.generation = generation
        var details = [
            "kind": role.kind, "stage": role.label, "encoder": encoder.name, "preset": encoder.settings.preset,
            "bitrate": String(encoder.settings.bitRate), "size": "\(description.width)x\(description.height)",
            "frame_rate": description.frameRate.description, "generation": String(generation),
        ]
        if kind == .encoderChosen, let reason { details["fallback_reason"] = reason }
        details.merge(extra) { $1 }
        core.events.emit(StudioEvent(kind: kind, camera: role.camera, programTime: pts, details: details))
        core.statistics.withLock {
            $0.encoderName = encoder.name
            $0.generation = generation
            $0.width = description.width
            $0.height = description.height
            // After a fallback, the reason stays with the x264 opened at later sizes.
            if reason != nil || !fellBack { $0.fallbackReason = reason }
        }
        deliver(.format(description))
    }

    /// `times`: the program frame's way so far, completed with the encode and carried on its packet.
    private func send(_ packets: [EncodedPacket], started: UInt64, frames: Int = 1, times: FrameTimes? = nil) {
        core.record(packets: packets.count, milliseconds: milliseconds(since: started), frames: frames)
        var times = times
        times?.encodeStart = started
        times?.encodeEnd = MonotonicClock.now()
        for var packet in packets {
            packet.generation = generation
            // zerolatency: one packet per frame, the frame's own (a delayed one's record would mislead).
            if packets.count == 1 { packet.times = times }
            deliver(.packet(packet))
        }
    }

    /// Drains an encoder's delayed packets (end of stream, or before a new size).
    private func flush(_ encoder: VideoEncoder) {
        let started = MonotonicClock.now()
        do {
            send(try encoder.flush(), started: started, frames: 0)
        } catch {
            core.emitError(error, encoder: encoder.name, pts: nil, context: "flush")
        }
    }
}
