import Foundation
import Testing
import Control
import TestSupport

/// `log` through a running server, a page at a time (`after_id`, `page_size`, `next_after_id`): over the
/// control socket, over HTTP and through `studio log`, every event exactly once and in order, each reply
/// bounded; bad paging values refused (issue 14).
@Suite struct HistoryPagingTests {
    /// Events added to a past session: two default pages and part of a third.
    static let added = 2_500
    static let defaultPage = 1000, maxPage = 10_000

    /// A demo server over a generated history whose stopped session has `added` more events; that session's
    /// ids in order, as sqlite3 reads them.
    static func serveHistory(_ studio: StudioHarness) throws -> (session: Int64, ids: [Int], port: Int) {
        let history = try GeneratedHistory.make(at: studio.database, writer: GeneratedHistory.writerExecutable)
        _ = try ReportCLITests.sqlite3(studio.database, """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.added))
            INSERT INTO events (session_id, wall_time, program_ms, kind, camera, details)
            SELECT \(history.stopped), \(history.stoppedBase) + 60000 + i, 60000 + i, 'frames_dropped', 'cam' || (i % 3 + 1),
                   '{"stage":"video","reason":"encoder queue full","seq":"' || i || '"}' FROM n;
            """)
        let ids = try ReportCLITests.sqlite3(studio.database, "SELECT id FROM events WHERE session_id = \(history.stopped) ORDER BY id")
            .split(separator: "\n").compactMap { Int($0) }
        let port = try HTTPAPIEndToEndTests.serve(studio)
        return (history.stopped, ids, port)
    }

    @Test func theControlSocketAndHTTPPageThroughEveryEventOnceInOrder() throws {
        let studio = try StudioHarness()
        let (session, ids, port) = try Self.serveHistory(studio)
        try #require(ids.count > 2 * Self.defaultPage, "\(ids.count) events: more than two pages")

        // The control socket, pages of 700: each at most 700, the last one says it is the last.
        let client = try ControlClient(socketPath: studio.socket)
        var seen: [Int] = [], after: Int? = nil, pages = 0
        repeat {
            var arguments: [String: JSONValue] = ["session": .int(Int(session)), "page_size": 700]
            if let after { arguments["after_id"] = .int(after) }
            let page = try client.request("log", arguments: arguments)
            let events = try #require(page["events"]?.arrayValue)
            #expect(events.count <= 700 && (events.count == 700 || page["next_after_id"] == .null), "page \(pages): \(events.count) events")
            seen += events.compactMap { $0["id"]?.intValue }
            after = page["next_after_id"]?.intValue
            #expect(after == nil || after == seen.last, "next_after_id is the page's last id")
            pages += 1
        } while after != nil && pages < 100
        #expect(seen == ids, "every event once, in order: \(seen.count) of \(ids.count)")
        #expect(pages == (ids.count + 699) / 700)

        // HTTP, the default page size: bounded by it, the same events.
        seen = []; after = nil; pages = 0
        repeat {
            let path = "/api/v1/sessions/\(session)/events" + (after.map { "?after_id=\($0)" } ?? "")
            let response = try HTTPTestClient.fetch(port: port, "GET", path)
            try #require(response.status == 200, "\(response)")
            let page = try HTTPAPIEndToEndTests.json(response)
            let events = try #require(page["events"]?.arrayValue)
            #expect(events.count <= Self.defaultPage, "page \(pages): \(events.count) events")
            #expect(page["session"]?["id"]?.intValue == Int(session))
            seen += events.compactMap { $0["id"]?.intValue }
            after = page["next_after_id"]?.intValue
            pages += 1
        } while after != nil && pages < 100
        #expect(seen == ids, "every event once, in order: \(seen.count) of \(ids.count)")
        #expect(pages == (ids.count + Self.defaultPage - 1) / Self.defaultPage)

        // Paging within a filter: the latest 1,500 of the session, in pages of 1,000 (the web console's question).
        let latest = try HTTPAPIEndToEndTests.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/\(session)/events?limit=1500"))
        let first = latest["events"]?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []
        let next = try #require(latest["next_after_id"]?.intValue)
        let rest = try HTTPAPIEndToEndTests.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/\(session)/events?limit=1500&after_id=\(next)"))
        #expect(rest["next_after_id"] == .null)
        #expect(first + (rest["events"]?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []) == Array(ids.suffix(1500)))
    }

    @Test func studioLogPagesThroughTheServerAndPrintsWhatTheDatabaseHolds() throws {
        let studio = try StudioHarness()
        let (session, ids, _) = try Self.serveHistory(studio)

        // Through the server (pages) and from the database (rows): the same JSON, the same table.
        let served = try studio.run(["log", String(session), "--json", "--socket", studio.socket])
        let read = try studio.run(["log", String(session), "--json", "--db", studio.database])
        try #require(served.status == 0 && read.status == 0, "\(served.error) / \(read.error)")
        let reply = try JSONValue(parsing: served.output)
        #expect(reply["events"]?.arrayValue?.compactMap { $0["id"]?.intValue } == ids)
        #expect(reply["session"]?["id"]?.intValue == Int(session))
        #expect(served.output == read.output, "the server's pages print what the database holds")
        let table = try studio.run(["log", String(session), "--socket", studio.socket])
        #expect(table.status == 0 && table.output.split(separator: "\n").count == 2 + ids.count, "\(table.error)")
        #expect(table.output.split(separator: "\n").last?.contains("seq=\(Self.added)") == true)

        // --after-id: the rest of the log, the same through the server and from the database.
        let middle = ids[ids.count / 2]
        let afterServed = try studio.run(["log", String(session), "--json", "--after-id", String(middle), "--socket", studio.socket])
        let afterRead = try studio.run(["log", String(session), "--json", "--after-id", String(middle), "--db", studio.database])
        #expect(try JSONValue(parsing: afterServed.output)["events"]?.arrayValue?.compactMap { $0["id"]?.intValue }
                == Array(ids.drop { $0 <= middle }))
        #expect(afterServed.output == afterRead.output)
    }

    @Test func badPagingValuesAreRefusedSayingWhatIsAccepted() throws {
        let studio = try StudioHarness()
        let (session, _, port) = try Self.serveHistory(studio)
        func refused(_ query: String, _ words: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            let response = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/\(session)/events?\(query)")
            let error = (try? HTTPAPIEndToEndTests.json(response))?["error"]
            #expect(response.status == 400 && error?["code"] == "invalid_argument", "\(query): \(response)", sourceLocation: sourceLocation)
            return error?["message"]?.stringValue ?? ""
        }
        #expect(try refused("page_size=0", []).contains("1 to \(Self.maxPage)"))
        #expect(try refused("page_size=\(Self.maxPage + 1)", []).contains("1 to \(Self.maxPage)"))
        #expect(try refused("after_id=-5", []).contains("after_id"))
        #expect(try refused("after_id=abc", []).contains("after_id"))
        let largest = try HTTPAPIEndToEndTests.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/\(session)/events?page_size=\(Self.maxPage)"))
        #expect(largest["events"]?.arrayValue?.count ?? 0 > Self.defaultPage, "the largest page is allowed")

        // The CLI: a usage error (exit 2) naming the flag, through the server and without one.
        for target in [["--socket", studio.socket], ["--db", studio.database]] {
            for value in ["-3", "0", "x"] {
                let result = try studio.run(["log", String(session), "--after-id", value] + target)
                #expect(result.status == 2 && result.error.contains("--after-id") && result.output.isEmpty, "\(value) \(target): \(result)")
            }
        }
        // A page size the server refuses is the CLI's usage error too (a client asking directly).
        let client = try ControlClient(socketPath: studio.socket)
        #expect(throws: ControlError.self) { try client.request("log", arguments: ["session": .int(Int(session)), "page_size": -1]) }
    }
}
