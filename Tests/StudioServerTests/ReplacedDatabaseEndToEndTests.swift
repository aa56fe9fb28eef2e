import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real server, its database moved away mid-show (`mv studio.db old.db`): the next cut is stored in a
/// fresh file at `--db`, the old file keeps what it had, the log and `status` say so, and the next `serve`
/// starts on the new file.
@Suite(.serialized) struct ReplacedDatabaseEndToEndTests {
    @Test func databaseMovedAwayMidShowCarriesOnInAFreshFile() throws {
        let studio = try StudioHarness()
        let server = try studio.serve(["--cameras", "2"] + EndToEndTests.smallProgram)
        let cut1 = try studio.run(["switch", "cam2", "--socket", studio.socket])
        #expect(cut1.status == 0, "\(cut1)")

        let old = studio.directory.appendingPathComponent("old.db").path
        try #require(rename(studio.database, old) == 0, "rename: \(errno)")
        let cut2 = try studio.run(["switch", "cam1", "--socket", studio.socket])
        #expect(cut2.status == 0, "\(cut2)")
        #expect(waitUntil(seconds: 15, every: 0.1) { (try? studio.status())?["store"]?["replacements"]?.intValue == 1 },
                "\((try? studio.status())?["store"] ?? .null)")
        let status = try studio.run(["status", "--socket", studio.socket])
        #expect(status.output.contains("REPLACED 1 time(s)"), "\(status.output)")
        #expect(waitUntil(seconds: 5, every: 0.1) { server.errorText().contains("WARNING: the event database") }, "\(server.errorText())")
        #expect(server.errorText().contains(old), "the log says where the old file is: \(server.errorText())")
        #expect(studio.stopServer() == .exited(0))

        // The old file: whole, with the first cut; the new one: the second cut, after the marker.
        let oldLog = try JSONValue(parsing: try studio.run(["log", "--json", "--db", old]).output)
        let oldSwitches = EndToEndTests.events(oldLog, kind: "switch").compactMap { $0["camera"]?.stringValue }
        #expect(oldSwitches.last == "cam2" && oldSwitches.count <= 2, "the start's cut to cam1, then the first cut: \(oldSwitches)")
        let newLog = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        #expect(newLog["session"]?["end_reason"] == "stopped")
        let kinds = newLog["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } ?? []
        #expect(Array(kinds.prefix(2)) == ["session_started", "database_replaced"], "\(kinds)")
        #expect(EndToEndTests.events(newLog, kind: "switch").compactMap { $0["camera"]?.stringValue } == ["cam1"])
        #expect(EndToEndTests.events(newLog, kind: "database_replaced").first?["details"]?["old_file"]?.stringValue == old)
        let doctor = try studio.run(["doctor", "--db", studio.database])
        #expect(doctor.output.contains("whose database file was moved"), "\(doctor.output)")

        // The next start opens the new file.
        try studio.serve(["--cameras", "1"] + EndToEndTests.smallProgram)
        #expect(studio.stopServer() == .exited(0))
    }
}
