import Foundation
import Testing
import Control
import TestSupport

/// `studio log` of a huge session, without a server: printed as SQLite reads it, so its memory does not
/// grow with the session (issue 14, Performance).
@Suite struct HistoryLogStreamTests {
    /// Events added to one session: enough that the JSON (~30 MB) is over twice the allowance below.
    static let added = 100_000
    /// What a streamed log may use over the same command printing one event: SQLite's page cache (2 MB
    /// by default), the 64 KiB output buffer and the allocator's slack. Holding the log instead (rows,
    /// their JSON, the text) takes several times the output's size.
    static let allowanceKilobytes = 12 * 1024

    @Test func aHugeSessionsLogStreamsCompleteInOrderInBoundedMemory() throws {
        let studio = try StudioHarness()
        let history = try GeneratedHistory.make(at: studio.database, writer: GeneratedHistory.writerExecutable)
        let session = history.stopped
        let before = try #require(Int(try ReportCLITests.sqlite3(studio.database, "SELECT count(*) FROM events WHERE session_id = \(session)")))
        // Appended after the session's own events, each with its number and some padding (a drop report's size).
        _ = try ReportCLITests.sqlite3(studio.database, """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.added))
            INSERT INTO events (session_id, wall_time, program_ms, kind, camera, details)
            SELECT \(session), \(history.stoppedBase) + 60000 + i, 60000 + i, 'frames_dropped', 'cam' || (i % 3 + 1),
                   '{"stage":"video","reason":"encoder queue full","seq":"' || i || '","pad":"' || printf('%.100c', 'x') || '"}' FROM n;
            """)

        func log(_ words: [String]) throws -> (output: String, peakKilobytes: Int) {
            let child = try ChildProcess(executable: StudioHarness.binary, arguments: ["log", String(session), "--db", studio.database] + words,
                                         outputDirectory: studio.directory.appendingPathComponent("log-\(UUID().uuidString.prefix(6))"))
            let (exit, peak) = child.waitReadingPeakMemory(timeout: 180)
            guard let exit else {
                _ = child.stop()
                throw HarnessError("studio log \(words) did not finish in 180 s")
            }
            try #require(exit == .exited(0), "studio log \(words): \(exit) \(child.errorText())")
            try #require(peak > 0, "read the child's VmHWM")
            return (child.outputText(), peak)
        }

        let one = try log(["--json", "--limit", "1"])
        let whole = try log(["--json"])
        // Complete and in order: the session's own events, then the added ones by number.
        let reply = try JSONValue(parsing: whole.output)
        #expect(reply["session"]?["id"]?.intValue == Int(session))
        let events = reply["events"]?.arrayValue ?? []
        #expect(events.count == before + Self.added)
        let ids = events.compactMap { $0["id"]?.intValue }
        #expect(ids.count == events.count && zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "ids ascending")
        let numbers = events.suffix(Self.added).map { Int($0["details"]?["seq"]?.stringValue ?? "") }
        #expect(numbers == (1...Self.added).map { Optional($0) }, "the added events, each once, in order")
        // The bound means something: the output alone is over twice the allowance.
        #expect(whole.output.utf8.count > 2 * Self.allowanceKilobytes * 1024, "output \(whole.output.utf8.count) bytes")
        #expect(whole.peakKilobytes <= one.peakKilobytes + Self.allowanceKilobytes,
                "peak RSS \(whole.peakKilobytes) KiB for \(events.count) events vs \(one.peakKilobytes) KiB for one")

        // The table too: a line per event after the two header lines, the last one the last event.
        let text = try log([])
        let lines = text.output.split(separator: "\n")
        #expect(lines.count == 2 + before + Self.added)
        #expect(lines.last?.contains("seq=\(Self.added) ") == true, "\(lines.last ?? "")")
        #expect(text.peakKilobytes <= one.peakKilobytes + Self.allowanceKilobytes, "table: \(text.peakKilobytes) KiB")
    }
}
