import Foundation
import Testing
import StudioCore
import StudioSystem
import MediaSupport
import Output
import TestSupport

/// A recording on a real tmpfs that fills up and gets room again.
@Suite(.serialized) struct DiskFullTests {
    init() { FFmpegLogging.configure(verbose: false) }

    /// The disk fills mid-recording: writing stops with one `recording_stopped` (write failed, the
    /// error) and one `error`; the retries while it stays full are quiet and leave no file behind (each
    /// opens the next part, writes its header and a keyframe into libavformat's buffers, fails to push
    /// them to disk, and deletes it); once there is room, the next part is reported by one
    /// `recording_started` with the gap, and plays.
    @Test(.enabled(if: ScratchTmpfs.unavailableReason == nil, "needs root and permission to mount a tmpfs"))
    func aFullDiskStopsTheRecordingOnceAndResumesItInANewPart() throws {
        let disk = try ScratchTmpfs(kibibytes: 2048)
        defer { disk.unmount() }
        let path = disk.directory.appendingPathComponent("program.mkv")
        let part1 = disk.directory.appendingPathComponent("program-part1.mkv")
        let events = CollectingSink()
        let feed = try ProgramFeed(fanOut: OutputFanOut())
        let output = feed.startRecording(path, events: events)
        #expect(feed.run { events.events(.recordingStarted).count == 1 })
        // Over two seconds: complete one-second clusters are on disk before it fills.
        feed.run(seconds: 2.5)

        // The disk fills: writing fails, then the output keeps trying new parts while it stays full.
        let filler = try disk.fill()
        #expect(feed.run { output.statistics.lastError?.contains("No space left") == true }, "\(output.statistics.lastError ?? "")")
        let attemptsWhenFull = output.statistics.reconnectAttempts
        #expect(feed.run { output.statistics.reconnectAttempts >= attemptsWhenFull + 4 }, "the output retried while the disk was full")
        #expect(events.events(.recordingStarted).count == 1, "nothing started while the disk is full")

        // Room again: the next part records.
        try FileManager.default.removeItem(at: filler)
        #expect(feed.run { events.events(.recordingStarted).count == 2 })
        feed.run(seconds: 1.5)
        feed.finish()
        output.stop(timeoutSeconds: 3)

        let statistics = output.statistics
        #expect(statistics.state == .stopped && statistics.reconnectCount == 1)
        #expect(statistics.reconnectAttempts >= attemptsWhenFull + 4)
        // One stop and one start around the whole outage, one error; the retries said nothing.
        #expect(events.outputKinds == ["recording_started", "recording_stopped", "recording_started", "recording_stopped"])
        let started = events.events(.recordingStarted), stopped = events.events(.recordingStopped)
        #expect(started.map { $0.details["path"] } == [path.path, part1.path])
        #expect(stopped.map { $0.details["path"] } == [path.path, part1.path])
        #expect(stopped.map { $0.details["reason"] } == ["write failed", "stopped"])
        #expect(stopped.first?.details["error"]?.contains("No space left") == true, "\(stopped.first?.details ?? [:])")
        let errors = events.events(.error)
        #expect(errors.count == 1, "one error for the outage, none per retry: \(errors.map(\.details))")
        #expect(errors.first?.details["error"]?.contains("No space left") == true)
        // The resumed part says how much program time is missing: from the last frame of the full file
        // to its own first keyframe, which is after the outage's retries (at least 4 x 0.2 s).
        let resumed = try #require(started.last?.details)
        #expect(resumed["previous_path"] == path.path)
        let gap = try #require(resumed["gap_ms"].flatMap { Int64($0) })
        let lastBefore = try #require(stopped.first?.details["last_program_ms"].flatMap { Int64($0) })
        let firstAfter = try #require(resumed["first_program_ms"].flatMap { Int64($0) })
        #expect(gap == firstAfter - lastBefore && gap >= 800, "gap \(gap) ms")

        // On disk: the two files that hold media, nothing else (no empty or header-only retries).
        let files = try FileManager.default.contentsOfDirectory(atPath: disk.directory.path).sorted()
        #expect(files == ["program-part1.mkv", "program.mkv"])
        let stoppedSizes = stopped.compactMap { $0.details["bytes"].flatMap { Int64($0) } }
        for (file, size) in zip([path, part1], stoppedSizes) {
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.size] as? NSNumber)?.int64Value == size, "\(file.lastPathComponent): the size reported at close")
        }
        let before = try MediaProbe.probe(path)
        #expect(before.videoPackets.count >= 20, "the full file keeps what reached the disk")
        // Cut back to its last whole cluster: it decodes to its end with no error, no half cluster.
        let cut = try MediaProbe.decodeCheck(path)
        #expect(cut.clean && cut.videoFrames == before.videoPackets.count, "the cut file: \(cut.errors)")
        let after = try MediaProbe.probe(part1)
        #expect(after.videoPackets.count >= 30)
        #expect(after.videoPackets.first?.isKeyframe == true)
        #expect(after.videoPackets.first.flatMap { $0.ptsMilliseconds }.map { Int64($0.rounded()) } == firstAfter)
        let decoded = try MediaProbe.decodeCheck(part1)
        #expect(decoded.clean, "\(decoded.errors)")
    }
}
