import CFFmpeg
import MediaSupport
import Foundation
import Synchronization
import StudioCore
import StudioSystem

// The receive thread of a network camera (`net.NAME`): connect, read, decode, time and queue for the
// playout; then back off and try again. In a file of its own so the camera's file stays readable; it
// reads the camera's state that NetworkPullCamera.swift declares (internal for this extension only).
extension NetworkPullCamera {
    // MARK: The receive thread

    /// Video packets refused in a row, with no picture between, after which the status says the video
    /// cannot be decoded (two seconds of 30 fps; a stream joined between keyframes refuses fewer).
    static let refusalsToReport = 60

    func receive() {
        guard let kind = pull.kind else { return }
        var timeline = PullTimeline(targetMilliseconds: pull.latency)
        var failures = 0
        var lastMessage = ""
        var pool: FramePool?
        var converter = FrameConverter()
        /// Connections made: with the timeline's re-bases, the epoch of the ISO copy's mapping.
        var connections = 0
        while !receiver.isStopRequested {
            if pull.waitsForPublisher {
                backoff.withLock {
                    while !receiver.isStopRequested, !isPublishing { _ = backoff.wait(untilMonotonic: clock.now() + 100_000_000) }
                }
                guard !receiver.isStopRequested else { break }
            }
            interrupt.answer()
            // Nil: the listener's caller that woke us was replaced or gone already: wait for the next.
            guard let source = nextSource(kind) else { continue }
            shared.withLock {
                $0.status.attempts += 1
                $0.nextTry = nil
            }
            interrupt.arm(seconds: Self.openTimeout)
            // The newest picture's packet for the ISO copy, held until the next one comes, so the last
            // of a connection is known as such (`CompressedVideoFrame.endsItsStream`).
            var heldPicture: CompressedVideoFrame?
            // A node's pictures' capture times (`CaptureTimeSEI`) by pts, from their packets to their decoded pictures.
            var stamps = CaptureStamps()
            do {
                let connection = try PullConnection(source: source, interrupt: interrupt, audioFormat: sound.format, decoding: decoding)
                var skipped = 0
                failures = 0
                lastMessage = ""
                timeline.reset()
                connections += 1
                playout.flush()
                converter = FrameConverter()
                sound.newStream()
                sound.connected(displayName)
                shared.withLock {
                    $0.status.connected = true
                    $0.status.lastError = nil
                    $0.status.streams = connection.streamSummary
                    $0.codec = (connection.copyableCodec, true)
                    $0.status.decoder = connection.decoderStatus
                    $0.status.captureTime = nil
                    $0.rateMark = (0, clock.now())
                    // Fresh timing: nothing of the previous connection is repeated.
                    $0.shownAt = 0
                    $0.gaps = (0, 0, clock.now())
                }
                let decoder = connection.decoderStatus
                log("\(id.name): connected to \(displayName): \(connection.streamSummary); \(decoder.map(\.summary) ?? "")"
                    + (decoder?.softwareReason.map { " (software: \($0))" } ?? ""))
                let frameSlack: UInt64 = 40_000_000
                while !receiver.isStopRequested {
                    interrupt.arm(seconds: Self.readTimeout)
                    connection.skipsNonReference = decodeDemand.demand != .full
                    try connection.readAndDecode { item in
                        let now = clock.now()
                        // Hung up (its caller's new connection took its place, or its publisher left): what
                        // libavformat still hands over (its last, cut-short packet) is no sign of life.
                        guard !interrupt.isHungUp else { return }
                        notePacket(at: now)
                        switch item {
                        case .video(let decoded, let media):
                            let due = timeline.due(media: media, arrival: now)
                            shared.withLock {
                                $0.status.picturesIn += 1
                                $0.statistics.framesDecodedFull += 1
                                $0.status.bufferMilliseconds = max(0, Int(timeline.depth / 1_000_000))
                                $0.status.driftPPM = timeline.driftPPM
                                $0.status.rebases = timeline.rebases
                            }
                            // Already late (a burst of old pictures at connect): decoded for its
                            // successors, never shown.
                            guard due + frameSlack >= now else {
                                shared.withLock { $0.status.picturesDropped += 1 }
                                return
                            }
                            let width = Int(decoded.pointee.width), height = Int(decoded.pointee.height)
                            let bytes = VideoFrame.byteCount(format: .i420, width: width, height: height)
                            if pool?.capacity != bytes { pool = FramePool(capacity: bytes, limit: playout.maximumPictures / 4) }
                            var frame = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, captureTime: now,
                                                            sequence: UInt64(shared.withLock { $0.status.picturesIn }))
                            frame.remoteCaptureTime = stamps.take(pts: media)
                            guard (try? converter.convert(decoded, into: frame)) != nil else { return }
                            noteFormat(width: width, height: height, rate: connection.frameRate)
                            playout.add(.picture(frame), due: due)
                        case .packet(let packet):
                            if let stamp = packet.captureTime {
                                noteCaptureTime(stamp)
                                stamps.note(pts: packet.pts, captureTime: stamp.captureTime)
                            }
                            // Its sound only beside pictures that are copied (else its ISO encodes, with no own track).
                            guard let codec = packet.codec, packet.pts != .min, !codec.isAudio || connection.copyableCodec != nil else { return }
                            guard let frame = compressedFrames.frame({
                                let offset = timeline.mapping(media: packet.pts, arrival: now)
                                return packet.compressedFrame(codec: codec, arrival: now, offset: offset, epoch: connections &+ timeline.rebases)
                            }) else {
                                heldPicture = nil
                                return
                            }
                            if codec.isAudio {
                                compressedFrames.offer(frame)
                            } else {
                                if let held = heldPicture { compressedFrames.offer(held) }
                                heldPicture = frame
                            }
                        case .audio(let samples, let media):
                            playout.add(.audio(samples), due: timeline.due(media: media, arrival: now))
                        }
                    }
                    let bytes = connection.bytesRead, now = clock.now(), refused = connection.videoRefused
                    if refused.inARow == Self.refusalsToReport {
                        log("warning: \(id.name): its video cannot be decoded (\(refused.reason)); a broken codec configuration or a damaged stream; waiting for a picture")
                    }
                    let skippedNow = connection.videoPacketsSkipped, decoderNow = connection.decoderStatus
                    defer { skipped = skippedNow }
                    shared.withLock {
                        $0.statistics.framesNotDecoded += UInt64(max(0, skippedNow - skipped))
                        $0.status.decoder = decoderNow
                        $0.status.packetsUndecodable = refused.total
                        $0.status.lastError = refused.inARow >= Self.refusalsToReport
                            ? "its video cannot be decoded (\(refused.inARow) packets in a row refused: \(refused.reason)): "
                                + "a broken codec configuration or a damaged stream"
                            : nil
                        if now - $0.rateMark.at >= 1_000_000_000 {
                            if case .srt(let caller) = source { $0.status.srt = caller.statistics }
                            let elapsed = Double(now - $0.rateMark.at) / 1e9
                            $0.status.bitRate = Int(Double(bytes &- $0.rateMark.bytes) * 8 / elapsed)
                            $0.rateMark = (bytes, now)
                        }
                    }
                }
            } catch {
                let replaced = shared.withLock { $0.callerIsNew }
                if pull.arrivesOnListener {
                    if !receiver.isStopRequested, !replaced { log("\(id.name): its SRT caller's stream is over (\(error.description)); waiting for it") }
                } else if !receiver.isStopRequested, isPublishing, error.description != lastMessage {
                    log("\(id.name): \(error.description); trying again")
                    lastMessage = error.description
                }
                shared.withLock { $0.status.lastError = error.description }
            }
            if var last = heldPicture {
                last.endsItsStream = true
                compressedFrames.offer(last)
            }
            sound.disconnected()
            shared.withLock {
                $0.status.connected = false
                if $0.state == .live { $0.state = .lost }
            }
            guard !receiver.isStopRequested else { break }
            // A phone that stopped publishing is waited for, not tried again; so is an SRT caller that
            // went away (a new one may be waiting already).
            if pull.arrivesOnListener {
                shared.withLock { shared in
                    if !shared.callerIsNew {
                        shared.caller?.close()
                        shared.caller = nil
                        shared.status.publishing = false
                    }
                }
                continue
            }
            if !isPublishing { continue }
            failures += 1
            let wait = min(Self.maximumBackoff, 0.5 * Double(1 << min(failures - 1, 10)))
            let next = clock.now() + UInt64(wait * 1e9)
            shared.withLock { $0.nextTry = next }
            backoff.withLock {
                while !receiver.isStopRequested, clock.now() < next, isPublishing {
                    _ = backoff.wait(untilMonotonic: min(next, clock.now() + 100_000_000))
                }
            }
        }
    }
}
