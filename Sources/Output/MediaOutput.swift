import Foundation
import Synchronization
import StudioCore
import StudioSystem

/// One destination (an RTMP URL or a recording file) on its own thread ("out.NAME"), fed through an
/// `OutputQueue` by `accept`, which never blocks.
///
/// Per connection (or file): the muxer starts once both stream descriptions are known; a keyframe is
/// requested from the encoder; video is dropped until a keyframe comes and audio older than it is
/// dropped, so the first packet written is always a video keyframe. Timestamps are program time,
/// continuous across reconnects (FLV: `MediaTime.milliseconds`). Network outputs reconnect with backoff
/// forever until stopped. A recording file that cannot be opened at all at start ends that output (an
/// `error` event) and the show goes on; once a file has been open, a write error (or a later failed open)
/// closes it (`recording_stopped`, an `error` event) and a new file is opened with the same backoff,
/// forever until stopped: `NAME-part1.mkv`, `NAME-part2.mkv`... (`recording_started` again), so a
/// transient disk problem costs only the media while it lasts.
///
/// Network operations have a per-operation deadline (`OutputPolicy.ioTimeoutSeconds`); file operations
/// have none (a slow disk write must not fail a recording), only `stop`'s deadline aborts them.
///
/// A new video/audio description mid-stream (encoder fallback, generation + 1): FLV sends a new
/// sequence header in-band on the same connection (AV_PKT_DATA_NEW_EXTRADATA on the first packet of the
/// new generation, video from its keyframe); Matroska recordings cannot change codec private data, so
/// the file is finished and a new one started (`NAME-gN.mkv`).
public final class MediaOutput: Sendable {
    public let destination: OutputDestination
    public let policy: OutputPolicy
    private let events: EventSink
    private let requestKeyframe: @Sendable () -> Void
    private let queue: OutputQueue
    private let interrupt = InterruptState()
    private let shared: Mutex<Shared>
    private let wake = ConditionLock()

    private struct Shared {
        var statistics: OutputStatistics
        var thread: NamedThread?
        var started = false
        var stopRequested = false
    }

    public init(destination: OutputDestination, events: EventSink, requestKeyframe: @escaping @Sendable () -> Void,
                policy: OutputPolicy = .init()) {
        self.destination = destination
        self.events = events
        self.requestKeyframe = requestKeyframe
        self.policy = policy
        queue = OutputQueue(limits: policy.queueLimits)
        shared = Mutex(Shared(statistics: OutputStatistics(name: destination.name, maskedURL: destination.maskedURL)))
    }

    /// Starts the output thread. A closed connection must surface as EPIPE, so SIGPIPE is ignored
    /// process-wide here.
    public func start() {
        Signals.ignoreSIGPIPE()
        shared.withLock { shared in
            guard !shared.started else { return }
            shared.started = true
            let worker = OutputWorker(output: self)
            shared.thread = NamedThread.start(name: "out.\(destination.name)") { worker.run() }
        }
    }

    /// Queues an item for this destination. Never blocks; over the queue's limits the drop policy
    /// applies. `.endOfStream` lets the output drain, write the trailer and stop.
    public func accept(_ item: MediaItem) {
        if case .endOfStream = item { queue.close() } else { queue.offer(item) }
    }

    /// Drains what it can within the timeout, writes the trailer, closes. Returns within about
    /// `timeoutSeconds` whatever the network does.
    public func stop(timeoutSeconds: Double) {
        let start = MonotonicClock.now()
        let budget = max(0.1, timeoutSeconds)
        // Leave a little of the budget for closing after the drain deadline.
        interrupt.hardDeadline.store(start + UInt64(budget * 0.8 * 1e9), ordering: .relaxed)
        interrupt.abortConnecting.store(true, ordering: .relaxed)
        let thread = shared.withLock { shared -> NamedThread? in
            shared.stopRequested = true
            return shared.thread
        }
        queue.close()
        wake.withLock { wake.broadcast() }
        if let thread {
            let elapsed = Double(MonotonicClock.now() - start) / 1e9
            thread.join(timeoutSeconds: max(0.05, budget - elapsed))
        }
        shared.withLock { shared in
            if shared.statistics.state != .failed { shared.statistics.state = .stopped }
        }
    }

    public var statistics: OutputStatistics {
        var statistics = shared.withLock { $0.statistics }
        statistics.droppedVideo = queue.droppedVideo
        statistics.droppedAudio = queue.droppedAudio
        return statistics
    }

    // MARK: - used by the worker

    fileprivate var outputQueue: OutputQueue { queue }
    fileprivate var interruptState: InterruptState { interrupt }
    fileprivate var sink: EventSink { events }
    fileprivate func askForKeyframe() { requestKeyframe() }
    fileprivate var stopRequested: Bool { shared.withLock { $0.stopRequested } }
    fileprivate func update(_ body: (inout OutputStatistics) -> Void) { shared.withLock { body(&$0.statistics) } }

    /// Sleeps up to `seconds`, waking early on stop. Returns false if stop was requested.
    fileprivate func pause(seconds: Double) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(max(0, seconds) * 1e9)
        return wake.withLock {
            while !stopRequested {
                if !wake.wait(untilMonotonic: deadline) { return !stopRequested }
            }
            return false
        }
    }
}

/// The output thread's state; lives on that thread only.
private final class OutputWorker: Sendable {
    let output: MediaOutput
    init(output: MediaOutput) { self.output = output }

    func run() {
        var loop = OutputLoop(output: output)
        loop.run()
    }
}

private struct OutputLoop {
    let output: MediaOutput
    let destination: OutputDestination
    let policy: OutputPolicy
    let queue: OutputQueue

    /// Latest descriptions seen in the queue.
    var video: StreamDescription?
    var audio: StreamDescription?
    var muxer: Muxer?
    /// Reconnect attempts since the last good connection.
    var failures = 0
    var everConnected = false
    /// Waiting for the first keyframe of this connection.
    var awaitingKeyframe = true
    var keyframeRequestedAt: UInt64 = 0
    var firstKeyframe: MediaTime?
    var heldAudio: [EncodedPacket] = []
    /// Program time of the last flush of a recording (see `flushRecordingIfDue`).
    var lastFlush: MediaTime?
    var early: [EncodedPacket] = []
    /// Extradata to send in-band with the next packet of each kind (FLV), after a format change.
    var pendingVideoExtradata: [UInt8]?
    var pendingAudioExtradata: [UInt8]?
    /// Video packets older than this generation are dropped (after a format change).
    var minimumVideoGeneration = 0
    var fileGeneration = 0
    /// Files opened after write failures within this generation: `NAME-partK`.
    var filePart = 0
    /// A file was opened at least once: later open failures are retried instead of ending the output.
    var everOpened = false
    /// Reopening a file after a write failure (counted as a reconnect once it records again).
    var reopening = false
    var bytesBefore: Int64 = 0
    var finished = false

    init(output: MediaOutput) {
        self.output = output
        destination = output.destination
        policy = output.policy
        queue = output.outputQueue
    }

    var hardDeadlinePassed: Bool {
        let hard = output.interruptState.hardDeadline.load(ordering: .relaxed)
        return hard != 0 && MonotonicClock.now() > hard
    }

    var details: [String: String] { ["output": destination.name, "url": destination.maskedURL] }

    func emit(_ kind: EventKind, programTime: MediaTime? = nil, _ extra: [String: String] = [:]) {
        output.sink.emit(StudioEvent(kind: kind, programTime: programTime, details: details.merging(extra) { $1 }))
    }

    mutating func run() {
        while !finished {
            if hardDeadlinePassed { break }
            if muxer == nil {
                guard let video, let audio else {
                    takeItem(timeout: 0.2)
                    continue
                }
                if output.stopRequested { break }  // never connect just to stop
                connect(video: video, audio: audio)
                continue
            }
            takeItem(timeout: 0.2)
        }
        closeMuxer(writeTrailer: true, reason: "stopped")
        output.update { if $0.state != .failed { $0.state = .stopped } }
    }

    // MARK: connecting

    mutating func connect(video: StreamDescription, audio: StreamDescription) {
        if failures > 0 {
            let delay = policy.backoff(attempt: failures)
            guard output.pause(seconds: delay) else { finished = true; return }
            output.update { $0.reconnectAttempts += 1 }
            emit(.outputReconnectAttempt, ["attempt": String(failures), "delay_ms": String(Int(delay * 1000))])
        }
        output.update { $0.state = everConnected ? .reconnecting : .connecting }
        let url = fileURL()
        // Files: no per-operation deadline (libavformat checks it before every buffer written, so one slow
        // disk write would fail the next one); stop still aborts through the hard deadline.
        let isNetwork = destination.isNetwork
        do {
            muxer = try Muxer(format: destination.containerFormat, url: url, isNetwork: isNetwork,
                              video: video, audio: audio, interrupt: output.interruptState,
                              connectTimeout: isNetwork ? policy.connectTimeoutSeconds : nil,
                              ioTimeout: isNetwork ? policy.ioTimeoutSeconds : nil)
            everOpened = true
        } catch {
            let text = destination.redact(error.description)
            output.update { $0.lastError = text }
            if !isNetwork && !everOpened {
                fail("open recording", text)
                return
            }
            if failures == 0 {
                if !isNetwork { emit(.error, ["during": "open recording", "error": text, "path": url]) }
                else if !everConnected { emit(.error, ["during": "connect", "error": text]) }
            }
            failures += 1
            return
        }
        awaitingKeyframe = true
        firstKeyframe = nil
        heldAudio.removeAll()
        pendingVideoExtradata = nil
        pendingAudioExtradata = nil
        minimumVideoGeneration = video.generation
        output.update { $0.currentFile = destination.isNetwork ? nil : url }
        keyframeRequestedAt = MonotonicClock.now()
        output.askForKeyframe()
        let waiting = early
        early.removeAll()
        for packet in waiting where muxer != nil {
            if packet.kind == .video { writeVideo(packet) } else { writeAudio(packet) }
        }
    }

    /// The file path for the current file generation and part: `NAME.mkv`, then `NAME-g1.mkv` after a
    /// format change, `NAME-part1.mkv` (`NAME-g1-part1.mkv`) after a write failure...
    func fileURL() -> String {
        guard !destination.isNetwork else { return destination.url }
        return Self.fileURL(destination.url, generation: fileGeneration, part: filePart)
    }

    static func fileURL(_ path: String, generation: Int, part: Int) -> String {
        guard generation > 0 || part > 0 else { return path }
        var suffix = generation > 0 ? "-g\(generation)" : ""
        if part > 0 { suffix += "-part\(part)" }
        let url = path as NSString
        let ext = url.pathExtension
        let base = url.deletingPathExtension
        return ext.isEmpty ? base + suffix : "\(base)\(suffix).\(ext)"
    }

    // MARK: streaming

    mutating func takeItem(timeout: Double) {
        switch queue.pop(timeoutSeconds: timeout) {
        case .timedOut:
            if muxer != nil, awaitingKeyframe {
                if output.stopRequested { finished = true; return }
                if MonotonicClock.now() - keyframeRequestedAt > UInt64(policy.keyframeRequestIntervalSeconds * 1e9) {
                    keyframeRequestedAt = MonotonicClock.now()
                    output.askForKeyframe()
                }
            }
        case .endOfStream:
            finished = true
        case .item(.endOfStream):
            finished = true
        case .item(.format(let description)):
            accept(description)
        case .item(.packet(let packet)):
            guard muxer != nil else {
                holdUntilConnected(packet)
                return
            }
            if packet.kind == .video { writeVideo(packet) } else { writeAudio(packet) }
        }
    }

    /// Packets that arrive before both descriptions are known (one encoder announced itself later than
    /// the other) wait here, bounded like the queue, and go out once the muxer is open.
    mutating func holdUntilConnected(_ packet: EncodedPacket) {
        early.append(packet)
        let limit = Int64(policy.queueLimits.maxAudioSeconds * 1e6)
        while let first = early.first, packet.dts.microseconds - first.dts.microseconds > limit {
            early.removeFirst()
            queue.countDrop(video: first.kind == .video ? 1 : 0, audio: first.kind == .audio ? 1 : 0)
        }
    }

    mutating func accept(_ description: StreamDescription) {
        let current = description.kind == .video ? muxer?.video : muxer?.audio
        if description.kind == .video { video = description } else { audio = description }
        guard muxer != nil, let current else { return }
        if description.kind == .video { minimumVideoGeneration = max(minimumVideoGeneration, description.generation) }
        guard current.extradata != description.extradata || current.width != description.width
                || current.height != description.height || current.sampleRate != description.sampleRate
                || current.channels != description.channels else { return }
        if destination.containerFormat == "flv" {
            // Same connection, new sequence header in-band.
            if description.kind == .video {
                pendingVideoExtradata = description.extradata
                awaitingKeyframe = true
                output.askForKeyframe()
            } else {
                pendingAudioExtradata = description.extradata
            }
        } else {
            // Matroska: finish this file, start the next one with the new description.
            closeMuxer(writeTrailer: true, reason: "format changed")
            fileGeneration += 1
            filePart = 0
        }
    }

    mutating func writeVideo(_ packet: EncodedPacket) {
        if awaitingKeyframe {
            guard packet.isKeyframe, packet.generation >= minimumVideoGeneration else {
                queue.countDrop(video: 1)
                return
            }
            let extradata = pendingVideoExtradata
            guard write(packet, extradata: extradata) else { return }
            pendingVideoExtradata = nil
            awaitingKeyframe = false
            if firstKeyframe == nil { connectionStarted(at: packet.pts) }
            // Audio that waited for this keyframe: older than it is dropped, the rest goes out.
            let held = heldAudio
            heldAudio.removeAll()
            for audioPacket in held { writeAudio(audioPacket) }
        } else {
            guard packet.generation >= minimumVideoGeneration else { queue.countDrop(video: 1); return }
            guard write(packet, extradata: nil) else { return }
        }
        flushRecordingIfDue(at: packet.pts, keyframe: packet.isKeyframe)
    }

    /// A recording is pushed to the file at each keyframe and at least every half second of program
    /// time; with Matroska clusters of at most one second (see `Muxer`), a killed server's file plays up
    /// to about 1.5 s before the kill.
    mutating func flushRecordingIfDue(at pts: MediaTime, keyframe: Bool) {
        guard !destination.isNetwork else { return }
        if keyframe || lastFlush.map({ pts.microseconds - $0.microseconds >= 500_000 }) ?? true {
            muxer?.flush()
            lastFlush = pts
        }
    }

    mutating func writeAudio(_ packet: EncodedPacket) {
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

    /// Writes one packet; on failure closes the muxer and schedules a reconnect (or fails a file).
    mutating func write(_ packet: EncodedPacket, extradata: [UInt8]?) -> Bool {
        guard let muxer else { return false }
        do {
            guard try muxer.write(packet, newExtradata: extradata) else {
                queue.countDrop(video: packet.kind == .video ? 1 : 0, audio: packet.kind == .audio ? 1 : 0)
                return false
            }
            let bytes = bytesBefore + muxer.bytesWritten
            output.update {
                $0.packetsSent += 1
                $0.bytesSent = bytes
                $0.lastProgramMilliseconds = packet.pts.milliseconds
            }
            return true
        } catch {
            let text = destination.redact(error.description)
            queue.countDrop(video: packet.kind == .video ? 1 : 0, audio: packet.kind == .audio ? 1 : 0)
            output.update { $0.lastError = text }
            if !destination.isNetwork {
                reopenAfterWriteFailure(at: packet.pts, text)
                return false
            }
            closeMuxer(writeTrailer: false, reason: "disconnected")
            if output.stopRequested {
                finished = true
                return false
            }
            emit(.outputDisconnected, programTime: packet.pts, ["error": text])
            output.update {
                $0.state = .reconnecting
                $0.connectedSince = nil
            }
            failures = 1
            return false
        }
    }

    mutating func connectionStarted(at pts: MediaTime) {
        firstKeyframe = pts
        let reconnect = everConnected
        everConnected = true
        failures = 0
        let now = Date()
        output.update {
            $0.state = .connected
            $0.connectedSince = now
            $0.firstProgramMillisecondsOfConnection = pts.milliseconds
            if (reconnect && destination.isNetwork) || reopening { $0.reconnectCount += 1 }
        }
        reopening = false
        let extra = ["first_program_ms": String(pts.milliseconds)]
        if destination.isNetwork {
            emit(reconnect ? .outputReconnected : .outputConnected, programTime: pts, extra)
        } else {
            emit(.recordingStarted, programTime: pts, extra.merging(["path": fileURL()]) { $1 })
        }
    }

    mutating func closeMuxer(writeTrailer: Bool, reason: String) {
        guard let muxer else { return }
        muxer.close(writeTrailer: writeTrailer)
        bytesBefore += muxer.bytesWritten  // as counted when the connection closed
        let total = bytesBefore
        output.update { $0.bytesSent = total }
        self.muxer = nil
        if !destination.isNetwork, firstKeyframe != nil {
            emit(.recordingStopped, ["path": fileURL(), "reason": reason])
        }
        firstKeyframe = nil
    }

    /// A recording write failed: finish this file as far as it goes and open the next part with backoff
    /// (the file that failed keeps what reached the disk). A file that never got its first keyframe is
    /// simply opened again under the same name.
    mutating func reopenAfterWriteFailure(at pts: MediaTime, _ text: String) {
        let path = fileURL()
        let recorded = firstKeyframe != nil
        closeMuxer(writeTrailer: false, reason: "write failed")
        // Reported even while stopping: the end of the recording is missing.
        emit(.error, programTime: pts, ["during": "write recording", "error": text, "path": path])
        if output.stopRequested {
            finished = true
            return
        }
        if recorded { filePart += 1 }
        reopening = true
        output.update {
            $0.state = .reconnecting
            $0.connectedSince = nil
        }
        failures = 1
    }

    mutating func fail(_ during: String, _ text: String) {
        var details = ["during": during, "error": text]
        if !destination.isNetwork { details["path"] = fileURL() }
        emit(.error, details)
        output.update {
            $0.state = .failed
            $0.connectedSince = nil
        }
        queue.close()
        queue.discardPackets()
        finished = true
    }
}
