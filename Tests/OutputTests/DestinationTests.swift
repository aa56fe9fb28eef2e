import Foundation
import Testing
import StudioCore
import Encoding
import MediaSupport
import TestSupport
@testable import Output

private func kind(_ event: OutputEvent?) -> String? { event?.kind.rawValue }
/// The file's size as the events give it ("no file" when it is missing).
private func size(_ path: String) -> String {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber).map { "\($0.int64Value)" } ?? "no file"
}

@Suite(.serialized) struct DestinationTests {
    init() { FFmpegLogging.configure(verbose: false) }

    @Test func aNetworkURLIsANetworkDestinationAnythingElseARecording() {
        let interrupt = InterruptState()
        let policy = OutputPolicy()
        #expect(OutputDestination(name: "live", url: "rtmp://host/live/key").makeDestination(policy: policy, interrupt: interrupt) is NetworkDestination)
        #expect(OutputDestination(name: "live", url: "rtmp://host/live/key").containerFormat == "flv")
        let srt = OutputDestination(name: "contrib", url: "srt://127.0.0.1:9000?streamid=abcdef&passphrase=secretsecret")
        #expect(srt.makeDestination(policy: policy, interrupt: interrupt) is NetworkDestination && srt.containerFormat == "mpegts")
        #expect(srt.maskedURL == "srt://127.0.0.1:9000?streamid=****&passphrase=****")
        #expect(srt.redact("connect to srt://127.0.0.1:9000?streamid=abcdef&passphrase=secretsecret failed; passphrase secretsecret")
                == "connect to srt://127.0.0.1:9000?streamid=****&passphrase=**** failed; passphrase ****")
        let file = OutputDestination(name: "rec", url: "/tmp/x/program.mkv").makeDestination(policy: policy, interrupt: interrupt)
        #expect((file as? RecordingDestination)?.formatChange == .reopen)
        let flv = OutputDestination(name: "rec", url: "file:/tmp/x/program.flv").makeDestination(policy: policy, interrupt: interrupt)
        #expect((flv as? RecordingDestination)?.formatChange == .inBand, "FLV files take new sequence headers in-band")
    }

    @Test func recordingFilesAreNamedByGenerationAndPart() {
        #expect(RecordingDestination.path("/r/program.mkv", generation: 0, part: 0) == "/r/program.mkv")
        #expect(RecordingDestination.path("/r/program.mkv", generation: 1, part: 0) == "/r/program-g1.mkv")
        #expect(RecordingDestination.path("/r/program.mkv", generation: 0, part: 2) == "/r/program-part2.mkv")
        #expect(RecordingDestination.path("/r/program.mkv", generation: 2, part: 1) == "/r/program-g2-part1.mkv")
        #expect(RecordingDestination.path("/r/program", generation: 1, part: 0) == "/r/program-g1")
    }

    @Test func rtmpReconnectsForeverAndReportsOnlyWhatTheViewerNotices() {
        let rtmp = NetworkDestination(url: "rtmp://127.0.0.1:1/live/key", container: "flv", policy: OutputPolicy(), interrupt: InterruptState())
        #expect(rtmp.formatChange == .inBand && rtmp.currentFile == nil && rtmp.openFormats == nil)
        guard case .retry(let first) = rtmp.openFailed("refused", firstFailure: true, everStarted: false) else {
            Issue.record("a network destination never gives up"); return
        }
        #expect(kind(first) == "error" && first?.details == ["during": "connect", "error": "refused"])
        guard case .retry(nil) = rtmp.openFailed("refused", firstFailure: false, everStarted: false),
              case .retry(nil) = rtmp.openFailed("refused", firstFailure: true, everStarted: true) else {
            Issue.record("only a server never reached is reported, once"); return
        }
        let connected = rtmp.started(at: .milliseconds(1500), reconnect: false)
        #expect(kind(connected.event) == "output_connected" && !connected.isReconnection)
        #expect(connected.event.details["first_program_ms"] == "1500" && connected.event.programTime == .milliseconds(1500))
        let reconnected = rtmp.started(at: .milliseconds(9000), reconnect: true)
        #expect(kind(reconnected.event) == "output_reconnected" && reconnected.isReconnection)
        #expect(kind(rtmp.writeFailed("broken pipe", at: .milliseconds(3000), stopping: false)) == "output_disconnected")
        #expect(rtmp.writeFailed("broken pipe", at: .milliseconds(3000), stopping: true) == nil, "not reported while stopping")
        #expect(rtmp.close(.stopped) == nil && rtmp.bytesWritten == 0)
    }

    /// A network output reports each retry after its growing backoff; a recording retries quietly (the
    /// outage is reported when writing stops and when it resumes), at most `maxRetrySeconds` apart.
    @Test func networkRetriesAreReportedRecordingRetriesAreQuietAndCapped() {
        let policy = OutputPolicy(initialBackoffSeconds: 1, maxBackoffSeconds: 15)
        let rtmp = NetworkDestination(url: "rtmp://127.0.0.1:1/live/key", container: "flv", policy: policy, interrupt: InterruptState())
        let third = rtmp.retry(attempt: 3)
        #expect(third.delay == 4 && kind(third.event) == "output_reconnect_attempt")
        #expect(third.event?.details == ["attempt": "3", "delay_ms": "4000"])
        let recording = RecordingDestination(path: "/tmp/x.mkv", format: "matroska", policy: policy, interrupt: InterruptState())
        #expect(recording.retry(attempt: 1).delay == 1 && recording.retry(attempt: 1).event == nil)
        #expect(recording.retry(attempt: 5).delay == RecordingDestination.maxRetrySeconds && recording.retry(attempt: 5).event == nil)
    }

    /// The recording's whole life on real files: the first file failing to open ends the output; a write
    /// failure opens the next part (the same name if nothing was recorded yet), a format change the next
    /// generation; every file that recorded is reported stopped with its path, reason and size.
    @Test func recordingsOpenTheNextPartOrGenerationAndReportEachFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("program.mkv").path
        let video = try X264Encoder(settings: testSettings).streamDescription
        let audio = try AACEncoder().streamDescription
        let recording = RecordingDestination(path: path, format: "matroska", interrupt: InterruptState())

        guard case .giveUp(let refused) = recording.openFailed("no such directory", firstFailure: true, everStarted: false) else {
            Issue.record("a first file that cannot be opened ends the output"); return
        }
        #expect(kind(refused) == "error" && refused.details["path"] == path && refused.details["during"] == "open recording")

        try recording.open(video: video, audio: audio)
        #expect(recording.currentFile == path && recording.openFormats?.video == video)
        // Nothing recorded yet: closing after a write failure is silent and the same name is opened again.
        #expect(recording.close(.writeFailed) == nil && recording.openFormats == nil)
        try recording.open(video: video, audio: audio)
        #expect(recording.currentFile == path)
        let first = recording.started(at: .zero, reconnect: false)
        #expect(kind(first.event) == "recording_started" && first.event.details["path"] == path)
        #expect(first.isReconnection, "recording again after a write failure counts as a reconnection")

        let stopped = recording.close(.writeFailed)
        #expect(kind(stopped) == "recording_stopped" && stopped?.details == ["path": path, "reason": "write failed", "bytes": size(path)])
        let failure = recording.writeFailed("EPIPE", at: .milliseconds(1200), stopping: true)
        #expect(kind(failure) == "error" && failure?.details["path"] == path, "reported even while stopping, with the failed file")
        // The next part cannot be opened (a directory stands in its way), then it can.
        let part1 = directory.appendingPathComponent("program-part1.mkv").path
        try FileManager.default.createDirectory(atPath: part1, withIntermediateDirectories: false)
        #expect(throws: (any Error).self) { try recording.open(video: video, audio: audio) }
        guard case .retry(let reported) = recording.openFailed("EISDIR", firstFailure: true, everStarted: true),
              case .retry(nil) = recording.openFailed("EISDIR", firstFailure: false, everStarted: true) else {
            Issue.record("once a file was open, failed opens are retried"); return
        }
        #expect(reported?.details["path"] == part1, "the failed open names the file it tried")
        try FileManager.default.removeItem(atPath: part1)

        try recording.open(video: video, audio: audio)
        #expect(recording.currentFile == part1)
        #expect(recording.started(at: .seconds(2), reconnect: true).isReconnection)
        #expect(recording.close(.formatChanged)?.details == ["path": part1, "reason": "format changed", "bytes": size(part1)])

        try recording.open(video: video, audio: audio)
        let generation1 = directory.appendingPathComponent("program-g1.mkv").path
        #expect(recording.currentFile == generation1, "a new generation starts without a part")
        #expect(!recording.started(at: .seconds(3), reconnect: true).isReconnection, "a format change is not a reconnection")
        #expect(recording.close(.stopped)?.details == ["path": generation1, "reason": "stopped", "bytes": size(generation1)])
        #expect(recording.close(.stopped) == nil, "closing twice reports once")
        #expect(recording.bytesWritten > 0)
        for file in [path, part1, generation1] {
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
        }
    }

    /// A file is a recording only once media is on disk: its first keyframe is pushed into the file
    /// before the output reports it; a file closed before it got media is deleted and not reported.
    @Test func aFileIsARecordingOnceMediaIsOnDiskAndIsDeletedOtherwise() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("program.mkv").path
        let encoder = try X264Encoder(settings: testSettings)
        let audio = try AACEncoder().streamDescription
        let recording = RecordingDestination(path: path, format: "matroska", interrupt: InterruptState())

        try recording.open(video: encoder.streamDescription, audio: audio)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(recording.close(.stopped) == nil, "nothing recorded, nothing reported")
        #expect(!FileManager.default.fileExists(atPath: path), "a file without media is not left behind")

        try recording.open(video: encoder.streamDescription, audio: audio)
        let frame = SyntheticMedia.frame(width: testSettings.width, height: testSettings.height, yuv: SyntheticMedia.red, index: 0)
        var packets = try encoder.encode(frame, pts: .zero, forceKeyframe: true)
        packets += try encoder.flush()
        let keyframe = try #require(packets.first)
        #expect(keyframe.isKeyframe)
        #expect(try recording.write(keyframe, newExtradata: nil))
        let buffered = Int(size(path)) ?? 0
        #expect(try recording.wroteVideo(at: keyframe.pts, keyframe: true), "the keyframe is on disk")
        #expect((Int(size(path)) ?? 0) > buffered + keyframe.data.count, "pushed into the file: \(buffered) -> \(size(path)) bytes")
        #expect(kind(recording.started(at: keyframe.pts, reconnect: false).event) == "recording_started")
        let stopped = recording.close(.stopped)
        #expect(kind(stopped) == "recording_stopped" && stopped?.details["bytes"] == size(path))
        #expect(try MediaProbe.probe(URL(fileURLWithPath: path)).videoPackets.count == 1)
    }
}

/// A refused connection says what to check for its kind: the stream key for RTMP, the listener, the
/// passphrase and the stream id for SRT (a node's sender); any other error is left as it is.
@Suite struct RefusedStreamTests {
    @Test func aRefusedOpenIsExplainedForItsKind() {
        let refused = FFmpegError(call: "avio_open2", code: FFmpegError.inputOutput)
        let srt = NetworkDestination.explained(refused, kind: .srt).description
        #expect(srt.contains("SRT listener refused the call") && srt.contains("passphrase") && !srt.contains("stream key"), "\(srt)")
        let rtmp = NetworkDestination.explained(refused, kind: .rtmp).description
        #expect(rtmp.contains("check the stream key") && !rtmp.contains("SRT"), "\(rtmp)")
        let other = FFmpegError(call: "av_write_frame", code: FFmpegError.inputOutput)
        #expect(NetworkDestination.explained(other, kind: .srt) == other)
    }
}
