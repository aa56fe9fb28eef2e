import Foundation
import StudioCore

/// The output loop's connection (or file) lifecycle: open with backoff after a failure, started once it
/// holds media, closed, or given up. Beside the loop's streaming in OutputLoop.swift, on the same thread.
extension OutputLoop {
    /// After a failed attempt, waits the destination's backoff once before the next (false: stopped meanwhile).
    mutating func pauseBeforeRetry() -> Bool {
        guard failures > 0, !pausedForRetry else { return true }
        let retry = destination.retry(attempt: failures)
        output.update { $0.nextAttemptAt = output.clock.now() + UInt64(max(0, retry.delay) * 1e9) }
        guard output.pause(seconds: retry.delay) else {
            finished = true
            return false
        }
        output.update {
            $0.reconnectAttempts += 1
            $0.nextAttemptAt = nil
        }
        emit(retry.event)
        pausedForRetry = true
        return true
    }

    mutating func connect(video: StreamDescription, audio: StreamDescription) {
        guard pauseBeforeRetry() else { return }
        pausedForRetry = false
        output.update { $0.state = everConnected ? .reconnecting : .connecting }
        do {
            try destination.open(video: video, audio: audio, sourceAudio: sourceAudio, firstVideo: firstHeldKeyframe(of: video))
        } catch {
            let text = redact(error)
            output.update { $0.lastError = text }
            switch destination.openFailed(text, firstFailure: failures == 0, everStarted: everConnected) {
            case .giveUp(let event):
                fail(event)
            case .retry(let event):
                emit(event)
                failures += 1
            }
            return
        }
        awaitingKeyframe = true
        firstKeyframe = nil
        reportedStarted = false
        heldAudio.removeAll()
        pendingVideoExtradata = nil
        pendingAudioExtradata = nil
        minimumVideoGeneration = video.generation
        let file = destination.currentFile
        output.update { $0.currentFile = file }
        keyframeRequestedAt = output.clock.now()
        output.requestKeyframe()
        let waiting = early
        early.removeAll()
        for packet in waiting where isOpen {
            if packet.kind == .video { writeVideo(packet) } else { writeAudio(packet) }
        }
    }

    /// The program time of the first held video keyframe of `video`'s generation or later: the first
    /// packet a file opened now gets.
    func firstHeldKeyframe(of video: StreamDescription) -> MediaTime? {
        early.first { $0.kind == .video && $0.isKeyframe && $0.generation >= video.generation }?.pts
    }

    mutating func connectionStarted(at pts: MediaTime) {
        reportedStarted = true
        let started = destination.started(at: pts, reconnect: everConnected)
        everConnected = true
        failures = 0
        let now = Date()
        output.update {
            $0.state = .connected
            $0.connectedSince = now
            $0.firstProgramMillisecondsOfConnection = pts.milliseconds
            if started.isReconnection { $0.reconnectCount += 1 }
            // The error that ended the last connection is history now (the event log keeps it).
            $0.lastError = nil
        }
        emit(started.event)
    }

    mutating func close(_ reason: CloseReason, error: String? = nil) {
        guard isOpen else { return }
        let event = destination.close(reason, error: error)
        let total = destination.bytesWritten  // as counted when the connection closed
        rateWindow = nil
        output.update {
            $0.bytesSent = total
            $0.bitsPerSecond = 0
        }
        emit(event)
        firstKeyframe = nil
        reportedStarted = false
    }

    /// The destination gave up: the output fails and drops what is queued.
    mutating func fail(_ event: OutputEvent) {
        emit(event)
        output.update {
            $0.state = .failed
            $0.connectedSince = nil
        }
        queue.close()
        queue.discardPackets()
        finished = true
    }
}
