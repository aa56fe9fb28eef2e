import Foundation
import Testing
import Control
import EventStore
import StudioCore
import TestSupport
import StudioServer
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `studio report` (text, JSON, the timeline SVG) and `studio prune`, run as the real binary against a
/// generated history (`GeneratedHistory`) with no server running, the database changed and counted with the
/// real sqlite3 CLI.
@Suite(.serialized) struct ReportCLITests {
    static func sqlite3(_ database: String, _ sql: String) throws -> String {
        let result = try HistoryCLITests.sqlite3([database, sql])
        guard result.status == 0 else { throw HarnessError("sqlite3 \(sql): \(result.error)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func report(_ studio: StudioHarness, _ words: [String]) throws -> JSONValue {
        let result = try studio.run(["report", "--json", "--db", studio.database] + words)
        try #require(result.status == 0, "report \(words): \(result)")
        return try JSONValue(parsing: result.output)
    }

    @Test func theReportSaysWhatHappened() throws {
        let (studio, history) = try HistoryCLITests.generated()
        let database = studio.database
        // An encoder fallback and a recording of 1234 bytes in the stopped session (as a server writes them).
        let file = studio.directory.appendingPathComponent("program.mkv")
        try Data(repeating: 7, count: 1234).write(to: file)
        _ = try Self.sqlite3(database, """
            INSERT INTO events (session_id, wall_time, program_ms, kind, camera, details) VALUES
              (\(history.stopped), \(history.stoppedBase + 33_000), 33000, 'encoder_fallback', NULL,
               '{"from":"h264_vaapi","to":"libx264","reason":"surface lost","generation":"1"}');
            INSERT INTO recordings (session_id, camera, path, started_at, ended_at, bytes) VALUES
              (\(history.stopped), NULL, '\(file.path)', \(history.stoppedBase), \(history.stoppedBase + 60_000), 1234);
            """)
        let report = try Self.report(studio, [String(history.stopped)])
        #expect(report["ended"] == "stopped" && report["session"]?["id"]?.intValue == Int(history.stopped))
        let program = try #require(report["program"])
        #expect(program["program_ms"]?.intValue == 60_000 && program["switches"]?.intValue == 5, "\(program)")
        #expect(program["cuts"]?.intValue == 2 && program["transitions"]?.intValue == 1, "\(program)")
        #expect(program["intervals"]?.arrayValue?.count == GeneratedHistory.stoppedIntervals.count)
        #expect(program["totals"]?[0]?["source"] == "cam1" && program["totals"]?[0]?["on_air_ms"]?.intValue == 25_000)
        let cameras = report["cameras"]?.arrayValue ?? []
        #expect(cameras.compactMap { $0["camera"]?.stringValue } == ["cam1", "cam2", "cam3"])
        let cam1 = try #require(cameras.first)
        // Lost at 25 s (back at 30 s) and at 40 s (back at 45 s): 10 s lost, placed in program time.
        #expect(cam1["losses"]?.intValue == 2 && cam1["returns"]?.intValue == 2 && cam1["lost_ms"]?.intValue == 10_000, "\(cam1)")
        #expect(cam1["outages"]?.arrayValue?.map { [$0["from_program_ms"]?.intValue, $0["to_program_ms"]?.intValue] } == [[25_000, 30_000], [40_000, 45_000]])
        #expect(cameras[1]["losses"]?.intValue == 0)
        #expect(report["encoder_fallbacks"]?[0]?["from"] == "h264_vaapi" && report["encoder_fallbacks"]?[0]?["program_ms"]?.intValue == 33_000)
        #expect(report["drops"]?.arrayValue?.map { [$0["stage"]?.stringValue, String($0["dropped"]?.intValue ?? -1)] } == [["video", "3"]])
        #expect(report["loudness"] == .object([:]), "no loudness columns in this schema")
        #expect(report["recordings"]?[0]?["bytes"]?.intValue == 1234 && report["recordings"]?[0]?["camera"] == "program")

        // The error session: an output outage (5 s to 9 s, two attempts) and cam4 lost off program.
        let failed = try Self.report(studio, [String(history.failed)])
        #expect(failed["ended"] == "error")
        let main = try #require(failed["outputs"]?[0])
        #expect(main["output"] == "main" && main["disconnects"]?.intValue == 1 && main["reconnects"]?.intValue == 1, "\(main)")
        #expect(main["attempts"]?.intValue == 2 && main["off_air_ms"]?.intValue == 4_000, "\(main)")
        #expect(main["outages"]?[0]?["from_program_ms"]?.intValue == 5_000 && main["outages"]?[0]?["to_program_ms"]?.intValue == 9_000)
        #expect(failed["cameras"]?.arrayValue?.first { $0["camera"] == "cam4" }?["lost_ms"]?.intValue == 1_000)

        // The open session reads as running.
        #expect(try Self.report(studio, [String(history.open)])["ended"] == "running")

        // The session row's loudness (migration 0005's columns, written when a session stops) is read by name.
        _ = try Self.sqlite3(database, "UPDATE sessions SET integrated_lufs = -23.5, peak_dbfs = -1.25 WHERE id = \(history.stopped)")
        let loud = try Self.report(studio, [String(history.stopped)])["loudness"]
        #expect(loud?["integrated_lufs"]?.doubleValue == -23.5 && loud?["peak_dbfs"]?.doubleValue == -1.25, "\(String(describing: loud))")

        let text = try studio.run(["report", String(history.stopped), "--db", database])
        #expect(text.status == 0, "\(text)")
        for line in ["session \(history.stopped) · started", "ended: stopped", "PROGRAM  00:00:00.000 to 00:01:00.000 (00:01:00.000) · 5 switches: 2 cuts, 1 transitions",
                     "cam1    00:00:25.000  41.7 %  3", "cam1    2       2        00:00:10.000", "video  3        1",
                     "h264_vaapi", "LOUDNESS  integrated_lufs -23.5 · peak_dbfs -1.2", "RECORDINGS  1 files, 1.2 kB", "OUTPUTS  none"] {
            #expect(text.output.contains(line), "\(line) in\n\(text.output)")
        }
    }

    /// The picture: well-formed XML, the program lane's rectangles where the intervals are (to the pixel at
    /// the picture's scale), each source in its own colour, the same every time.
    @Test func theTimelinePictureShowsTheLanes() throws {
        let (studio, history) = try HistoryCLITests.generated()
        let path = studio.directory.appendingPathComponent("timeline.svg").path
        let result = try studio.run(["report", String(history.stopped), "--svg", path, "--db", studio.database])
        try #require(result.status == 0, "\(result)")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let picture = try SVGElements(data)
        let root = try #require(picture.elements.first { $0.name == "svg" })
        let scale = try #require(Double(root.attributes["data-scale"] ?? ""))
        let left = try #require(Double(root.attributes["data-plot-left"] ?? ""))
        #expect(abs(scale - 1000.0 / 60_000) < 1e-12)
        let lane = picture.elements.filter { $0.name == "rect" && $0.attributes["data-lane"] == "program" }
        #expect(lane.map { $0.attributes["data-source"] ?? "" } == GeneratedHistory.stoppedIntervals.map(\.source))
        for (rect, interval) in zip(lane, GeneratedHistory.stoppedIntervals) {
            let x = try #require(Double(rect.attributes["x"] ?? "")), width = try #require(Double(rect.attributes["width"] ?? ""))
            #expect(abs(x - (left + Double(interval.from) * scale)) < 0.5, "\(interval): x \(x)")
            #expect(abs(width - Double(interval.to - interval.from) * scale) < 0.5, "\(interval): width \(width)")
        }
        // One colour per source, the same wherever the source comes back; the slate hatched.
        let fills = Dictionary(lane.map { ($0.attributes["data-source"] ?? "", [$0.attributes["fill"] ?? ""]) }, uniquingKeysWith: +)
        #expect(fills.values.allSatisfy { Set($0).count == 1 } && Set(fills.values.map { $0[0] }).count == fills.count, "\(fills)")
        #expect(fills["slate"] == ["url(#slate)"])
        // The lanes of the cameras (cam1 lost twice), the transition, the cut marks, the legend, the axis.
        let lost = picture.elements.filter { $0.attributes["data-lane"] == "camera" && $0.attributes["data-state"] == "lost" }
        #expect(lost.count == 2)
        #expect(picture.elements.filter { $0.attributes["data-mark"] == "transition" }.count == 1)
        #expect(picture.elements.filter { $0.attributes["data-mark"] == "cut" }.count == 2)
        #expect(Set(picture.elements.compactMap { $0.attributes["data-legend"] }) == ["cam1", "cam2", "cam3", "pip", "slate"])
        #expect(picture.texts.contains("00:00:30") && picture.texts.contains("00:01:00"), "\(picture.texts)")
        // The same picture again, byte for byte.
        let again = studio.directory.appendingPathComponent("again.svg").path
        #expect(try studio.run(["report", String(history.stopped), "--svg", again, "--db", studio.database]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == data)
    }

    /// The PNG (rsvg-convert, from scripts/setup.sh) shows the lanes: a few pixels, decoded by the ffmpeg CLI.
    @Test func thePNGShowsTheLanesInTheirColours() throws {
        let (studio, history) = try HistoryCLITests.generated()
        let path = studio.directory.appendingPathComponent("timeline.png").path
        let result = try studio.run(["report", String(history.stopped), "--png", path, "--db", studio.database])
        try #require(result.status == 0, "\(result)")
        /// The pixel at program time `ms` in lane `lane` (0: the program), as RGB.
        func pixel(ms: Int64, lane: Int) throws -> [Int] {
            let x = Int(140 + Double(ms) * 1000 / 60_000), y = 40 + lane * 30 + 11
            let out = studio.directory.appendingPathComponent("pixel-\(x)-\(y).rgb").path
            let ffmpeg = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: ["-v", "error", "-y", "-i", path, "-vf", "crop=1:1:\(x):\(y)",
                                                                                  "-f", "rawvideo", "-pix_fmt", "rgb24", out])
            try #require(ffmpeg.wait(timeout: 30) == .exited(0), "ffmpeg: \(ffmpeg.errorText())")
            return try Data(contentsOf: URL(fileURLWithPath: out)).map(Int.init)
        }
        func near(_ rgb: [Int], _ hex: String) -> Bool {
            let value = Int(hex.dropFirst(), radix: 16) ?? -1
            let expected = [(value >> 16) & 255, (value >> 8) & 255, value & 255]
            return rgb.count == 3 && zip(rgb, expected).allSatisfy { abs($0 - $1) <= 3 }
        }
        // The program: cam1 at 5 s, cam2 at 12 s, cam3 at 45 s, each in its colour.
        for (ms, source) in [(5_000, "cam1"), (12_000, "cam2"), (45_000, "cam3")] as [(Int64, String)] {
            let rgb = try pixel(ms: ms, lane: 0)
            #expect(near(rgb, TimelinePicture.colour(of: source)), "\(source) at \(ms) ms: \(rgb)")
        }
        // cam1's lane: live at 10 s, lost at 27.5 s (red).
        let live = try pixel(ms: 10_000, lane: 1), lost = try pixel(ms: 27_500, lane: 1)
        #expect(near(live, "#8fd18f") && near(lost, "#d62728"), "live \(live), lost \(lost)")
    }

    @Test func badInputIsRefusedAndNothingIsHalfWritten() throws {
        let (studio, history) = try HistoryCLITests.generated()
        let unknown = try studio.run(["report", "999", "--db", studio.database])
        #expect(unknown.status == 2 && unknown.error.contains("studio report: no session 999 in the database: it has sessions \(history.stopped) to \(history.open)"),
                "\(unknown)")
        #expect(try studio.run(["report", "abc", "--db", studio.database]).status == 2)
        // A picture that cannot be written: exit 1, no file, nothing left beside it.
        let directory = studio.directory.appendingPathComponent("no-such-directory")
        let unwritable = try studio.run(["report", String(history.stopped), "--svg", directory.appendingPathComponent("t.svg").path, "--db", studio.database])
        #expect(unwritable.status == 1 && unwritable.error.contains("cannot write"), "\(unwritable)")
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        // An existing picture is replaced whole or left as it was.
        let existing = studio.directory.appendingPathComponent("kept.svg")
        try Data("old".utf8).write(to: existing)
        let failed = try studio.run(["report", "999", "--svg", existing.path, "--db", studio.database])
        let kept = try String(contentsOf: existing, encoding: .utf8)
        #expect(failed.status == 2 && kept == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: studio.directory.path).allSatisfy { !$0.contains(".tmp") })

        for words in [["--older-than", "90x"], ["--older-than", "-5d"], ["--older-than", "0d"], ["--older-than", "d"], []] {
            let result = try studio.run(["prune", "--db", studio.database] + words)
            #expect(result.status == 2 && result.error.hasPrefix("studio prune: "), "\(words): \(result)")
        }
        let malformed = try studio.run(["prune", "--older-than", "90x", "--db", studio.database])
        #expect(malformed.error.contains("s, m, h, d or w"), "\(malformed)")
        let missing = try studio.run(["prune", "--older-than", "90d", "--db", studio.directory.appendingPathComponent("none.db").path])
        #expect(missing.status == 1 && missing.error.contains("no database at"), "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: studio.directory.appendingPathComponent("none.db").path), "not created")
    }

    /// Sessions that ended 100 and 120 days ago, with recordings inside their recording directory (one
    /// already gone) and one outside it, and the rest of the history, which stays.
    static func agedHistory() throws -> (StudioHarness, GeneratedHistory, recordings: URL, inside: URL, outside: URL) {
        let (studio, history) = try HistoryCLITests.generated()
        let recordings = studio.directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let inside = recordings.appendingPathComponent("program-1.mkv"), outside = studio.directory.appendingPathComponent("elsewhere.mkv")
        try Data(repeating: 1, count: 5000).write(to: inside)
        try Data(repeating: 2, count: 300).write(to: outside)
        let day: Int64 = 86_400_000
        _ = try Self.sqlite3(studio.database, """
            UPDATE sessions SET started_at = started_at - 100 * \(day), ended_at = ended_at - 100 * \(day),
                                config_snapshot = json_object('record', '\(recordings.path)') WHERE id = \(history.stopped);
            UPDATE sessions SET started_at = started_at - 120 * \(day), ended_at = ended_at - 120 * \(day),
                                config_snapshot = json_object('record', '\(recordings.path)') WHERE id = \(history.failed);
            INSERT INTO recordings (session_id, camera, path, started_at, ended_at, bytes) VALUES
              (\(history.stopped), NULL, '\(inside.path)', 0, 1, 5000),
              (\(history.stopped), 'cam1', '\(recordings.path)/gone.mkv', 0, 1, 10),
              (\(history.failed), NULL, '\(outside.path)', 0, 1, 300),
              (\(history.open), NULL, '\(recordings.path)/open.mkv', 0, NULL, NULL);
            """)
        return (studio, history, recordings, inside, outside)
    }

    static func counts(_ database: String) throws -> String {
        try sqlite3(database, "SELECT (SELECT count(*) FROM sessions) || ' ' || (SELECT count(*) FROM events) || ' ' || (SELECT count(*) FROM recordings)")
    }

    @Test func pruneRemovesExactlyWhatItSays() throws {
        let (studio, history, _, inside, outside) = try Self.agedHistory()
        let database = studio.database
        let before = try Self.counts(database)
        let oldEvents = Int(try Self.sqlite3(database, "SELECT count(*) FROM events WHERE session_id IN (\(history.stopped), \(history.failed))")) ?? -1

        let dry = try studio.run(["prune", "--older-than", "90d", "--recordings", "--dry-run", "--json", "--db", database])
        try #require(dry.status == 0, "\(dry)")
        let planned = try JSONValue(parsing: dry.output)
        #expect(planned["sessions"]?.arrayValue?.compactMap(\.intValue) == [Int(history.failed), Int(history.stopped)].sorted())
        #expect(planned["events"]?.intValue == oldEvents && planned["recordings"]?.intValue == 3 && planned["dry_run"] == true)
        #expect(try Self.counts(database) == before, "a dry run changes nothing")
        #expect(FileManager.default.fileExists(atPath: inside.path))

        let result = try studio.run(["prune", "--older-than", "90d", "--recordings", "--json", "--db", database])
        try #require(result.status == 0, "\(result)")
        let reply = try JSONValue(parsing: result.output)
        #expect(reply["sessions"] == planned["sessions"] && reply["events"]?.intValue == oldEvents)
        let outcomes = Dictionary(uniqueKeysWithValues: (reply["files"]?.arrayValue ?? []).map { ($0["path"]?.stringValue ?? "", $0["outcome"]?.stringValue ?? "") })
        #expect(outcomes[inside.path] == "deleted" && outcomes[outside.path] == "kept" && outcomes.values.filter { $0 == "missing" }.count == 1, "\(outcomes)")
        #expect(reply["files_deleted"]?.intValue == 1 && reply["bytes_deleted"]?.intValue == 5000)
        #expect(!FileManager.default.fileExists(atPath: inside.path) && FileManager.default.fileExists(atPath: outside.path))
        #expect(reply["vacuum"] == "vacuum", "\(reply)")

        // Counted by sqlite3: exactly those sessions, their events and rows; the open and the crashed ones stay.
        let parts = before.split(separator: " ").compactMap { Int($0) }
        #expect(try Self.counts(database) == "\(parts[0] - 2) \(parts[1] - oldEvents) \(parts[2] - 3)")
        #expect(try Self.sqlite3(database, "SELECT group_concat(id) FROM (SELECT id FROM sessions ORDER BY id)") == "\(history.crashed),\(history.open)")
        #expect(try Self.sqlite3(database, "PRAGMA integrity_check") == "ok")

        // Again: nothing left to remove, said in words.
        let again = try studio.run(["prune", "--older-than", "90d", "--db", database])
        #expect(again.status == 0 && again.output.hasPrefix("no session ended before"), "\(again)")
    }

    /// A failure in the middle of the transaction (a trigger refusing the sessions' delete, after the
    /// events' was done) leaves every row and every file.
    @Test func aPruneThatFailsMidwayLeavesEverything() throws {
        let (studio, _, _, inside, _) = try Self.agedHistory()
        let database = studio.database
        _ = try Self.sqlite3(database, "CREATE TRIGGER refuse_prune BEFORE DELETE ON sessions BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;")
        let before = try Self.counts(database)
        let result = try studio.run(["prune", "--older-than", "90d", "--recordings", "--db", database])
        #expect(result.status == 1 && result.error.contains("refused by the test") && result.error.contains("nothing was removed"), "\(result)")
        #expect(try Self.counts(database) == before)
        #expect(FileManager.default.fileExists(atPath: inside.path))

        // Another process holds the write lock: a clear error after the busy timeout, nothing removed.
        _ = try Self.sqlite3(database, "DROP TRIGGER refuse_prune")
        // With a busy timeout of its own: the last connection of the process before it may still be
        // checkpointing the WAL as it closes, and a BEGIN that meets that fails at once (CI, under load).
        let holder = try ChildProcess(executable: "/usr/bin/sqlite3",
                                      arguments: ["-cmd", ".timeout 10000", "-cmd", "BEGIN EXCLUSIVE;", "-cmd",
                                                  "INSERT INTO cameras (identity, name, backend, display_name, first_seen, last_seen) VALUES ('x', 'lockcam', 'v4l2', 'x', 0, 0);",
                                                  database, ".read '\(try HistoryCLITests.fifo(in: studio.directory))'"])
        defer { holder.terminate(signal: SIGKILL); _ = holder.wait(timeout: 5) }
        try #require(waitUntil(seconds: 20, every: 0.1) { (try? HistoryCLITests.sqlite3(["-cmd", ".timeout 0", database, "BEGIN IMMEDIATE; ROLLBACK;"]))?.status != 0 },
                     "the holder took no lock: \(holder.errorText())")
        let locked = try studio.run(["prune", "--older-than", "90d", "--db", database])
        #expect(locked.status == 1 && locked.error.contains("locked"), "\(locked)")
        holder.terminate(signal: SIGKILL)
        _ = holder.wait(timeout: 5)
        #expect(try Self.counts(database) == before)
    }
}

/// The elements of an SVG (every one, with its attributes) and its texts, read by Foundation's XMLParser,
/// which fails on anything that is not well-formed XML.
struct SVGElements {
    struct Element { var name: String; var attributes: [String: String] }
    var elements: [Element] = []
    var texts: [String] = []

    init(_ data: Data) throws {
        let delegate = Collector()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        guard parser.parse() else { throw HarnessError("not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")") }
        elements = delegate.elements
        texts = delegate.texts
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var elements: [Element] = []
        var texts: [String] = []
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            elements.append(Element(name: name, attributes: attributes))
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) {
            let text = string.trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { texts.append(text) }
        }
    }
}
