import Foundation
import Testing
import Control
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `report`, the timeline picture over HTTP and `prune` against a running demo server: the server answers
/// them (its store thread does prune's writes), never removing its own open session.
@Suite(.serialized) struct ReportEndToEndTests {
    @Test func theServerReportsDrawsAndPrunes() throws {
        let studio = try StudioHarness()
        let port = try HTTPAPIEndToEndTests.serve(studio)
        #expect(studio.waitForProgramFrames(3))
        #expect(try studio.run(["switch", "cam2", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(10))
        #expect(try studio.run(["switch", "cam3", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(10))
        let session = try #require(try studio.status()["session"]?.intValue)

        let report = try studio.json(["report"])
        #expect(report["session"]?["id"]?.intValue == session && report["ended"] == "running", "\(report)")
        #expect((report["program"]?["switches"]?.intValue ?? 0) >= 3 && report["program"]?["intervals"]?.arrayValue?.last?["source"] == "cam3")
        #expect(report["cameras"]?.arrayValue?.compactMap { $0["camera"]?.stringValue } == ["cam1", "cam2", "cam3"])
        let http = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/\(session)/report")
        let httpReport = try JSONValue(parsing: http.body)
        #expect(http.status == 200 && HTTPAPIEndToEndTests.shape(httpReport) == HTTPAPIEndToEndTests.shape(report))

        // The picture, as SVG, with the program lane ending on cam3.
        let svg = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/\(session)/timeline.svg")
        #expect(svg.status == 200 && svg.headers["content-type"]?.hasPrefix("image/svg+xml") == true, "\(svg.status) \(svg.headers)")
        let picture = try SVGElements(Data(svg.body))
        let lane = picture.elements.filter { $0.attributes["data-lane"] == "program" }.compactMap { $0.attributes["data-source"] }
        #expect(lane.last == "cam3" && lane.contains("cam2"), "\(lane)")
        let unknown = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/9999/timeline.svg")
        #expect(unknown.status == 404 && String(decoding: unknown.body, as: UTF8.self).contains("no session 9999"), "\(unknown)")

        // An old session, ended 100 days ago, written beside the running one (WAL: the server keeps writing).
        let day: Int64 = 86_400_000, now = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try ReportCLITests.sqlite3(studio.database, """
            INSERT INTO sessions (started_at, ended_at, end_reason, config_snapshot, hostname, pid)
              VALUES (\(now - 101 * day), \(now - 100 * day), 'stopped', '{}', 'old', 1);
            INSERT INTO events (session_id, wall_time, program_ms, kind, camera, details)
              VALUES (last_insert_rowid(), \(now - 100 * day), 0, 'switch', 'cam1', '{}');
            """)
        let old = try #require(Int(try ReportCLITests.sqlite3(studio.database, "SELECT max(id) FROM sessions WHERE hostname = 'old'")))
        let pruned = try studio.json(["prune", "--older-than", "90d"])
        #expect(pruned["sessions"]?.arrayValue?.compactMap(\.intValue) == [old] && pruned["events"]?.intValue == 1, "\(pruned)")
        // Everything ended longer ago than a second: still never the running session.
        let all = try studio.json(["prune", "--older-than", "1s"])
        #expect(all["sessions"]?.arrayValue?.contains(.number(Double(session))) == false, "\(all)")
        #expect(try ReportCLITests.sqlite3(studio.database, "SELECT count(*) FROM sessions WHERE id = \(session) AND ended_at IS NULL") == "1")
        #expect(try studio.run(["switch", "cam1", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(5), "the show goes on")
        #expect(studio.stopServer() == .exited(0))
        #expect(try ReportCLITests.sqlite3(studio.database, "SELECT count(*) FROM events WHERE session_id = \(session) AND kind = 'switch'") == "4")
    }
}
