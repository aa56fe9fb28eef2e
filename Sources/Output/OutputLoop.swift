import Foundation
import StudioCore
import StudioSystem

/// The output thread's loop; lives on that thread only. It takes items from the output's queue and writes
/// them to its `Destination`, which decides everything that differs between a server and a file.
///
/// Per connection (or file): the destination is opened once both stream descriptions are known; a
/// keyframe is requested from the encoder; video is dropped until a keyframe comes and audio older than
/// it is dropped, so the first packet written is always a video keyframe. The connection or file is
/// reported started once the destination says it holds media (`Destination.wroteVideo`: a network
/// connection at its first keyframe, a recording once that keyframe is on disk). Timestamps are program time,
/// continuous across reconnects (FLV: `MediaTime.milliseconds`). After a failure the destination is
/// opened again with backoff (`Destination.retry`), growing until a connection or file starts again,
/// forever until stopped, unless the destination gives up.
///
/// A new video/audio description mid-stream (encoder fallback, generation + 1) either rides in-band
/// (AV_PKT_DATA_NEW_EXTRADATA on the first packet of the new generation, video from its keyframe) or
/// reopens the destination, as `Destination.formatChange` says.
struct OutputLoop {
    let output: MediaOutput
    let policy: OutputPolicy
    let queue: OutputQueue
    let destination: any Destination
    /// Name and masked URL, in every event.
    let details: [String: String]

    /// Latest descriptions seen in the queue.
    var video: StreamDescription?
    var audio: StreamDescription?
    /// A recording's second audio track (`StreamDescription.track` 1: the source's own sound), once announced.
    var sourceAudio: StreamDescription?
    /// Open attempts since the last good connection.
    var failures = 0
    /// Some connection or file got its first keyframe.
    var everConnected = false
    /// Waiting for the first keyframe of this connection.
    var awaitingKeyframe = true
    var keyframeRequestedAt: UInt64 = 0
    var firstKeyframe: MediaTime?
    /// The backoff after the last failure was waited (the next attempt is due).
    var pausedForRetry = false
    /// This connection or file was reported started (it holds media).
    var reportedStarted = false
    var heldAudio: [EncodedPacket] = []
    var early: [EncodedPacket] = []
    /// Extradata to send in-band with the next packet of each kind, after a format change.
    var pendingVideoExtradata: [UInt8]?
    var pendingAudioExtradata: [UInt8]?
    /// Video packets older than this generation are dropped (after a format change).
    var minimumVideoGeneration = 0
    var finished = false
    /// Congestion drops: warned about as `frames_dropped`, the first at once, then at most every 5 s.
    var congestion = ThrottledCounter()
    var congestionSeen = 0
    /// The bit rate's window: since when (CLOCK_MONOTONIC ns) and the byte count then.
    var rateWindow: (start: UInt64, bytes: Int64)?
    /// The program frames' stage durations over the last packets written (`FrameTimes`), summarised into
    /// the statistics with the bit rate, once a second.
    var budget = LatencyBudget()
    /// The program clock's origin (CLOCK_MONOTONIC ns of program time 0), learnt from a video packet's
    /// `FrameTimes` (due - pts): an audio packet's program time on the clock, for its `audio_to_wire`.
    var programOrigin: UInt64?

    init(output: MediaOutput) {
        self.output = output
        policy = output.policy
        queue = output.queue
        destination = output.destination.makeDestination(policy: policy, interrupt: output.interrupt, fileTags: output.fileTags)
        details = ["output": output.destination.name, "url": output.destination.maskedURL]
    }

    var isOpen: Bool { destination.openFormats != nil }

    var hardDeadlinePassed: Bool {
        let hard = output.interrupt.hardDeadline.load(ordering: .relaxed)
        return hard != 0 && MonotonicClock.now() > hard
    }

    func emit(_ kind: EventKind, programTime: MediaTime? = nil, _ extra: [String: String] = [:]) {
        output.events.emit(StudioEvent(kind: kind, programTime: programTime, details: details.merging(extra) { $1 }))
    }

    func emit(_ event: OutputEvent?) {
        if let event { emit(event.kind, programTime: event.programTime, event.details) }
    }

    func redact(_ error: any Error) -> String { output.destination.redact(String(describing: error)) }

    mutating func run() {
        while !finished {
            reportCongestion()
            if hardDeadlinePassed { break }
            if !isOpen {
                guard let video, let audio else {
                    takeItem(timeout: 0.2)
                    continue
                }
                if output.stopRequested { break }  // never connect just to stop
                if destination.opensAtFirstKeyframe {
                    // After a failure, the backoff first (packets queue meanwhile, as for any destination).
                    guard pauseBeforeRetry() else { break }
                    if firstHeldKeyframe(of: video) == nil {
                        // Its header needs the first keyframe's time: held packets wait (bounded) until one comes.
                        requestKeyframeIfDue()
                        takeItem(timeout: 0.2)
                        continue
                    }
                }
                connect(video: video, audio: audio)
                continue
            }
            takeItem(timeout: 0.2)
        }
        close(.stopped)
        reportCongestion(finishing: true)
        output.update { if $0.state != .failed { $0.state = .stopped } }
    }

    /// Counts the queue's congestion drops since the last look and warns when a report is due.
    mutating func reportCongestion(finishing: Bool = false) {
        let total = queue.droppedForSpace
        let report = congestion.note(total - congestionSeen, at: output.clock.now())
        congestionSeen = total
        guard let report = report ?? (finishing ? congestion.flush() : nil) else { return }
        emit(.framesDropped, [
            "stage": "out.\(output.destination.name)", "reason": "output queue over its limits (the destination is not keeping up)",
            "dropped": String(report.count), "dropped_total": String(report.total),
        ])
    }

    // MARK: streaming

    mutating func takeItem(timeout: Double) {
        switch queue.pop(timeoutSeconds: timeout) {
        case .timedOut:
            if isOpen, awaitingKeyframe {
                if output.stopRequested { finished = true; return }
                requestKeyframeIfDue()
            }
        case .endOfStream:
            finished = true
        case .item(.endOfStream):
            finished = true
        case .item(.format(let description)):
            accept(description)
        case .item(.packet(let packet)):
            guard isOpen else {
                holdUntilConnected(packet)
                return
            }
            if packet.kind == .video { writeVideo(packet) } else { writeAudio(packet) }
        }
    }

    /// Packets that arrive before both descriptions are known (one encoder announced itself later than
    /// the other) wait here, bounded like the queue, and go out once the destination is open.
    mutating func holdUntilConnected(_ packet: EncodedPacket) {
        early.append(packet)
        let limit = Int64(policy.queueLimits.maxAudioSeconds * 1e6)
        while let first = early.first, packet.dts.microseconds - first.dts.microseconds > limit {
            early.removeFirst()
            queue.countDrop(video: first.kind == .video ? 1 : 0, audio: first.kind == .audio ? 1 : 0)
        }
    }

    mutating func accept(_ description: StreamDescription) {
        if description.kind == .audio, description.track != 0 {
            // The source's own sound: a file opened without it or with another is finished, and the next
            // one carries it (the track's parameters are in the file's header).
            sourceAudio = description
            if let open = destination.openFormats, destination.formatChange == .reopen, open.sourceAudio.map({ !Self.sameFormat($0, description) }) ?? true {
                close(.formatChanged)
            }
            return
        }
        let current = description.kind == .video ? destination.openFormats?.video : destination.openFormats?.audio
        if description.kind == .video { video = description } else { audio = description }
        guard let current else { return }
        if description.kind == .video { minimumVideoGeneration = max(minimumVideoGeneration, description.generation) }
        guard !Self.sameFormat(current, description) else { return }
        switch destination.formatChange {
        case .inBand:
            if description.kind == .video {
                pendingVideoExtradata = description.extradata
                awaitingKeyframe = true
                output.requestKeyframe()
            } else {
                pendingAudioExtradata = description.extradata
            }
        case .reopen:
            close(.formatChanged)
        }
    }

    /// Whether a stream described as `b` fits what was opened as `a` (its generation aside).
    static func sameFormat(_ a: StreamDescription, _ b: StreamDescription) -> Bool {
        a.codec == b.codec && a.extradata == b.extradata && a.width == b.width && a.height == b.height && a.sampleRate == b.sampleRate
            && a.channels == b.channels
    }

    /// Asks the encoder for a keyframe again while none came since the last request (that one may have
    /// been taken by a frame that never got here): whether packets flow or not.
    mutating func requestKeyframeIfDue() {
        let now = output.clock.now()
        guard now - keyframeRequestedAt > UInt64(policy.keyframeRequestIntervalSeconds * 1e9) else { return }
        keyframeRequestedAt = now
        output.requestKeyframe()
    }

    mutating func writeVideo(_ packet: EncodedPacket) {
        if awaitingKeyframe {
            guard packet.isKeyframe, packet.generation >= minimumVideoGeneration else {
                queue.countDrop(video: 1)
                requestKeyframeIfDue()
                return
            }
            let extradata = pendingVideoExtradata
            guard write(packet, extradata: extradata) else { return }
            pendingVideoExtradata = nil
            awaitingKeyframe = false
            if firstKeyframe == nil { firstKeyframe = packet.pts }
            // Audio that waited for this keyframe: older than it is dropped, the rest goes out.
            let held = heldAudio
            heldAudio.removeAll()
            for audioPacket in held { writeAudio(audioPacket) }
            guard isOpen else { return }
        } else {
            guard packet.generation >= minimumVideoGeneration else { queue.countDrop(video: 1); return }
            guard write(packet, extradata: nil) else { return }
        }
        do {
            let holdsMedia = try destination.wroteVideo(at: packet.pts, keyframe: packet.isKeyframe)
            if holdsMedia, !reportedStarted, let firstKeyframe { connectionStarted(at: firstKeyframe) }
        } catch {
            writeFailed(error, at: packet.pts)
        }
    }

    mutating func writeAudio(_ packet: EncodedPacket) {
        // A source's own sound for a file opened without its track (it came later: the next file has it).
        guard packet.track == 0 || destination.openFormats?.sourceAudio != nil || !isOpen else {
            queue.countDrop(audio: 1)
            return
        }
        if firstKeyframe == nil {
            // Hold audio until the connection's first keyframe (bounded by the audio queue limit).
            heldAudio.append(packet)
            let limit = Int64(policy.queueLimits.maxAudioSeconds * 1e6)
            while let first = heldAudio.first, packet.dts.microseconds - first.dts.microseconds > limit {
                heldAudio.removeFirst()
                queue.countDrop(audio: 1)
            }
            return
        }
        guard let firstKeyframe, packet.pts >= firstKeyframe else {
            queue.countDrop(audio: 1)
            return
        }
        let extradata = pendingAudioExtradata
        if write(packet, extradata: extradata) { pendingAudioExtradata = nil }
    }

    /// The bit rate over the window that just closed, once a second; nil between (and for the first
    /// packet of a connection, which opens the window).
    mutating func measureRate(bytes: Int64, now: UInt64) -> Int? {
        guard let window = rateWindow, bytes >= window.bytes else {
            rateWindow = (now, bytes)
            return nil
        }
        let elapsed = now &- window.start
        guard elapsed >= 1_000_000_000 else { return nil }
        rateWindow = (now, bytes)
        return Int(Double(bytes - window.bytes) * 8e9 / Double(elapsed))
    }

    /// Writes one packet; on failure closes the destination and schedules the next open, or finishes
    /// when stopping.
    mutating func write(_ packet: EncodedPacket, extradata: [UInt8]?) -> Bool {
        guard isOpen else { return false }
        do {
            let writeStart = MonotonicClock.now()
            guard try destination.write(packet, newExtradata: extradata) else {
                queue.countDrop(video: packet.kind == .video ? 1 : 0, audio: packet.kind == .audio ? 1 : 0)
                return false
            }
            let bytes = destination.bytesWritten
            let written = MonotonicClock.now()
            if let times = packet.times {
                budget.record(times, writeStart: writeStart, written: written)
                // An ISO's passthrough packets know no tick (no due time): they say nothing of the clock.
                if times.due != 0 { programOrigin = times.due &- UInt64(max(0, packet.pts.microseconds)) * 1000 }
            } else if packet.kind == .audio, let origin = programOrigin {
                budget.recordAudio(due: origin &+ UInt64(max(0, packet.pts.microseconds)) * 1000, written: written)
            }
            let rate = measureRate(bytes: bytes, now: written)
            let latency = rate == nil ? nil : budget.summary()
            output.update {
                $0.packetsSent += 1
                $0.bytesSent = bytes
                $0.lastProgramMilliseconds = packet.pts.milliseconds
                if let rate { $0.bitsPerSecond = rate }
                if let latency { $0.latency = latency }
            }
            return true
        } catch {
            queue.countDrop(video: packet.kind == .video ? 1 : 0, audio: packet.kind == .audio ? 1 : 0)
            writeFailed(error, at: packet.pts)
            return false
        }
    }

    /// A write (or a push to the file) failed: closes the destination and schedules the next open, or
    /// finishes when stopping. The backoff keeps growing while no connection or file starts.
    mutating func writeFailed(_ error: any Error, at pts: MediaTime) {
        let text = redact(error)
        output.update { $0.lastError = text }
        close(.writeFailed, error: text)
        let stopping = output.stopRequested
        emit(destination.writeFailed(text, at: pts, stopping: stopping))
        if stopping {
            finished = true
            return
        }
        output.update {
            $0.state = .reconnecting
            $0.connectedSince = nil
        }
        failures += 1
    }
}
