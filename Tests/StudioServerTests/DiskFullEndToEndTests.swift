import Foundation
import Testing
import Control
import EventStore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The recording directory on a real tmpfs that fills mid-show and gets room again, end to end.
extension EndToEndTests {
    static func outputEvents(_ log: JSONValue, kind: String, output: String) -> [JSONValue] {
        events(log, kind: kind).filter { $0["details"]?["output"]?.stringValue == output }
    }

    /// Every file that holds media is a `recordings` row (with its size at close) and is listed; no empty
    /// or header-only file is left; for each recording output one `recording_stopped` when the disk filled
    /// and one `recording_started` with the gap when it had room again, nothing per retry.
    @Test(.enabled(if: ScratchTmpfs.unavailableReason == nil, "needs root and permission to mount a tmpfs"))
    func recordingsAfterAFullDiskAreListedAndNoEmptyFileIsLeft() throws {
        let disk = try ScratchTmpfs(kibibytes: 8192)
        defer { disk.unmount() }
        let directory = disk.directory
        let studio = try StudioHarness()
        try studio.serve(["--record", directory.path, "--cameras", "1", "--camera-size", "320x180"] + Self.smallProgram)
        #expect(Self.waitForIsoFrames(studio, moreThan: 60))
        let free = try studio.status()["disk"]?["free_bytes"]?.intValue ?? 0
        #expect(free > 0 && free <= 8192 * 1024, "status shows the recording directory's free space: \(free)")

        // The disk fills: both files (the program and cam1's ISO) stop, once each.
        let filler = try disk.fill()
        func live(_ kind: String) -> Int { Self.events((try? studio.json(["log"])) ?? .null, kind: kind).count }
        #expect(waitUntil(seconds: 15, every: 0.1) { live("recording_stopped") == 2 }, "both recordings stopped: \(live("recording_stopped"))")
        #expect((try studio.status()["disk"]?["free_bytes"]?.intValue ?? -1) < 64 * 1024, "status shows the disk full")
        // Three seconds of program while it stays full: the outputs retry, quietly.
        #expect(studio.waitForProgramFrames(90))
        #expect(live("recording_started") == 2 && live("recording_stopped") == 2)

        // Room again: both record into their next part.
        try FileManager.default.removeItem(at: filler)
        #expect(waitUntil(seconds: 15, every: 0.1) { live("recording_started") == 4 }, "both recordings resumed: \(live("recording_started"))")
        #expect(studio.waitForProgramFrames(45))
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        #expect(Self.events(log, kind: "output_reconnect_attempt").isEmpty, "retries are counted, not logged")
        let writeErrors = Self.events(log, kind: "error").filter { $0["details"]?["during"]?.stringValue == "write recording" }
        #expect(writeErrors.count == 2, "one error per recording for the whole outage: \(writeErrors)")
        for (output, name) in [("recording", "program"), ("iso-cam1", "cam1")] {
            let started = Self.outputEvents(log, kind: "recording_started", output: output)
            let stopped = Self.outputEvents(log, kind: "recording_stopped", output: output)
            let first = directory.appendingPathComponent("session-1-\(name).mkv").path
            let part1 = directory.appendingPathComponent("session-1-\(name)-part1.mkv").path
            #expect(started.compactMap { $0["details"]?["path"]?.stringValue } == [first, part1], "\(output)")
            #expect(stopped.compactMap { $0["details"]?["path"]?.stringValue } == [first, part1], "\(output)")
            #expect(stopped.compactMap { $0["details"]?["reason"]?.stringValue } == ["write failed", "stopped"], "\(output)")
            #expect(stopped.first?["details"]?["error"]?.stringValue?.contains("No space left") == true, "\(output): \(stopped)")
            let resumed = started.last?["details"]
            #expect(resumed?["previous_path"]?.stringValue == first)
            #expect((resumed?["gap_ms"]?.stringValue).flatMap { Int($0) }.map { $0 >= 3000 } == true,
                    "\(output): the gap covers the outage: \(resumed ?? .null)")
        }

        // The directory and the rows name the same files; each holds media and plays.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == ["session-1-cam1-part1.mkv", "session-1-cam1.mkv", "session-1-program-part1.mkv", "session-1-program.mkv"])
        let store = try EventStore.openReadOnly(path: studio.database)
        defer { store.close() }
        let rows = try store.recordings(sessionID: 1)
        #expect(rows.map { ($0.path as NSString).lastPathComponent }.sorted() == files)
        #expect(rows.map { $0.camera?.name ?? "program" }.sorted() == ["cam1", "cam1", "program", "program"])
        for row in rows {
            let size = (try FileManager.default.attributesOfItem(atPath: row.path)[.size] as? NSNumber)?.int64Value
            #expect(row.endedAt != nil && row.bytes == size, "\(row.path): ended with its size (\(size ?? -1))")
            let probe = try MediaProbe.probe(URL(fileURLWithPath: row.path))
            #expect(probe.videoPackets.count >= 10 && probe.videoPackets.first?.isKeyframe == true, "\(row.path)")
        }
        for name in ["program", "cam1"] {
            let check = try MediaProbe.decodeCheck(directory.appendingPathComponent("session-1-\(name)-part1.mkv"))
            #expect(check.clean && check.videoFrames >= 30, "\(name)-part1: \(check.errors)")
            // The part the full disk cut ends at its last whole cluster: it decodes with no error.
            let cut = try MediaProbe.decodeCheck(directory.appendingPathComponent("session-1-\(name).mkv"))
            #expect(cut.clean && cut.videoFrames >= 10, "\(name), cut by the full disk: \(cut.errors)")
        }
        let listed = try JSONValue(parsing: try studio.run(["recordings", "--json", "--db", studio.database]).output)
        #expect(listed["recordings"]?.arrayValue?.compactMap { $0["path"]?.stringValue }.map { ($0 as NSString).lastPathComponent }.sorted() == files)
        #expect(listed["recordings"]?.arrayValue?.allSatisfy { ($0["bytes"]?.intValue ?? 0) > 0 } == true)
    }
}
