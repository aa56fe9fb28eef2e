import Foundation
import Testing
import Control
import StudioCore
import EventStore
@testable import StudioServer
@testable import StudioViews
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `studio export`, run as the real binary on a generated history with recordings (session 1 of
/// `GeneratedHistory`: cuts, a mix, a loss without backup, a backup, a scene; 30 fps, the default): the EDL
/// read by a strict CMX3600 reader written here, the OTIO loaded by the real `opentimelineio`, the FCPXML
/// parsed as XML, the CSV summed; each against the switch events and the program's time, to the frame.
@Suite(.serialized) struct ExportTests {
    static let rate = 30

    static func generated() throws -> (StudioHarness, GeneratedHistory) {
        let studio = try StudioHarness()
        return (studio, try GeneratedHistory.make(at: studio.database, writer: GeneratedHistory.writerExecutable, recordings: true))
    }

    static func export(_ studio: StudioHarness, _ words: [String]) throws -> String {
        let result = try studio.run(["export"] + words + ["--db", studio.database])
        try #require(result.status == 0, "export \(words): \(result)")
        return result.output
    }

    /// Frame of a program time in ms at 30 fps, rounded to nearest.
    static func frame(_ milliseconds: Int) -> Int { (milliseconds * rate + 500) / 1000 }

    /// The switches of the session, as (camera or scene, frame).
    static func switches(_ studio: StudioHarness, _ session: Int64) throws -> [(source: String, frame: Int)] {
        let result = try studio.run(["log", String(session), "--kind", "switch", "--json", "--db", studio.database])
        return try (JSONValue(parsing: result.output)["events"]?.arrayValue ?? []).map { event in
            let source = event["camera"]?.stringValue ?? event["details"]?["scene"]?.stringValue ?? ""
            return (source.isEmpty ? event["details"]?["scene"]?.stringValue ?? "" : source, frame(try #require(event["program_ms"]?.intValue)))
        }
    }

    /// With --iso: each camera interval references its ISO, the scene and the slate the program recording;
    /// the mix is a CMX3600 dissolve of the outgoing and incoming reels. Every record time is where a switch
    /// happened (a dissolve ends on its switch), the events cover the program without a gap, and each
    /// source in/out is its program time.
    @Test func theEDLIsStrictCMX3600AndItsRecordTimesAreTheSwitches() throws {
        let (studio, history) = try Self.generated()
        let edl = try CMX3600(parsing: try Self.export(studio, [String(history.stopped), "--format", "edl", "--iso"]), base: Self.rate)
        #expect(edl.title == "studio session \(history.stopped)")
        let expected: [(reel: String, code: String, length: Int?, from: Int, to: Int)] = [
            ("CAM1", "C", nil, 0, 300), ("CAM2", "C", nil, 300, 571), ("CAM2", "C", nil, 571, 571), ("CAM1", "D", 30, 571, 750),
            ("PROGRAM", "C", nil, 750, 900), ("CAM1", "C", nil, 900, 1200), ("CAM3", "C", nil, 1200, 1500), ("PROGRAM", "C", nil, 1500, 1800),
        ]
        #expect(edl.lines.map { "\($0.reel) \($0.code) \($0.length ?? -1) \($0.recordIn)-\($0.recordOut)" }
                == expected.map { "\($0.reel) \($0.code) \($0.length ?? -1) \($0.from)-\($0.to)" })
        #expect(edl.lines.map(\.number) == [1, 2, 3, 3, 4, 5, 6, 7])
        #expect(edl.lines.allSatisfy { $0.sourceIn == $0.recordIn && $0.sourceOut == $0.recordOut }, "source times are program times")
        #expect(edl.lines.last?.recordOut == Self.frame(60_000), "the program's end")
        // Every switch is on the record timeline: a cut's record in, or a dissolve's last frame (the switcher
        // switches on the transition's last frame, and the dissolve is as long as the frames it showed).
        for (source, frame) in try Self.switches(studio, history.stopped) {
            let starts = edl.lines.contains { $0.code == "C" && $0.recordIn == frame && $0.recordOut > frame }
            let dissolves = edl.lines.contains { $0.code != "C" && $0.recordIn + ($0.length ?? 0) - 1 == frame }
            #expect(starts || dissolves, "the switch to \(source) at frame \(frame) is no edit of the EDL")
        }
        // The comments name each event's file; the scene and the slate say why they come from the program.
        let directory = (studio.database as NSString).deletingLastPathComponent + "/recordings/"
        #expect(edl.comments[1]?.contains("FROM CLIP NAME: session-\(history.stopped)-cam1.mkv") == true, "\(edl.comments)")
        #expect(edl.comments[1]?.contains("SOURCE FILE: \(directory)session-\(history.stopped)-cam1.mkv") == true)
        #expect(edl.comments[3]?.contains("FROM CLIP NAME: session-\(history.stopped)-cam2.mkv") == true
                && edl.comments[3]?.contains("TO CLIP NAME: session-\(history.stopped)-cam1.mkv") == true, "\(edl.comments)")
        #expect(edl.comments[4]?.contains { $0.contains("slate") && $0.contains("only in the program recording") } == true)
        #expect(edl.comments[7]?.contains { $0.contains("scene pip has no single ISO") } == true)

        // Without --iso: the program recording throughout, one event per interval, cut where each begins
        // (its transitions are in its pictures).
        let program = try CMX3600(parsing: try Self.export(studio, [String(history.stopped), "--format", "edl"]), base: Self.rate)
        #expect(program.lines.allSatisfy { $0.reel == "PROGRAM" && $0.code == "C" })
        #expect(program.lines.map(\.recordIn) == GeneratedHistory.stoppedIntervals.map { Self.frame(Int($0.from)) })
        #expect(program.lines.map(\.recordOut) == GeneratedHistory.stoppedIntervals.map { Self.frame(Int($0.to)) })
    }

    /// --time-of-day: record timecode from the local time of day program time 0 was on air; source
    /// timecode stays program time.
    @Test func theTimelineCanStartAtTheTimeOfDay() throws {
        let (studio, history) = try Self.generated()
        let edl = try CMX3600(parsing: try Self.export(studio, [String(history.stopped), "--format", "edl", "--time-of-day"]), base: Self.rate)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let zero = Date(timeIntervalSince1970: Double(history.stoppedBase) / 1000)
        let start = Self.frame(Int((zero.timeIntervalSince(calendar.startOfDay(for: zero)) * 1000).rounded()))
        #expect(edl.lines.first?.recordIn == start && edl.lines.first?.sourceIn == 0, "\(edl.lines.first.map { "\($0)" } ?? "")")
        #expect(edl.lines.allSatisfy { $0.recordIn - $0.sourceIn == start })
    }

    /// The OTIO file as the real `opentimelineio` reads it: the clips' ranges, media and transition.
    @Test(.enabled(if: OTIO.python != nil, "needs opentimelineio from PyPI in \(OTIO.venv) (scripts/setup.sh installs it); it could not be installed"))
    func theOTIOLoadsInOpenTimelineIO() throws {
        let (studio, history) = try Self.generated()
        let file = studio.directory.appendingPathComponent("show.otio").path
        let wrote = try studio.run(["export", String(history.stopped), "--format", "otio", "--iso", "--output", file, "--db", studio.database])
        try #require(wrote.status == 0, "\(wrote)")
        let report = try OTIO.read(file)
        let items = report["items"]?.arrayValue ?? []
        let described = items.map { item in
            item["type"] == "Clip"
                ? "\(item["name"]?.stringValue ?? "") \(item["start"]?.intValue ?? -1)+\(item["duration"]?.intValue ?? -1) \((item["url"]?.stringValue ?? "").split(separator: "/").last ?? "")"
                : "\(item["type"]?.stringValue ?? "") \(item["transition_type"]?.stringValue ?? "") \(item["in"]?.intValue ?? -1) \(item["out"]?.intValue ?? -1)"
        }
        let s = history.stopped
        #expect(described == [
            "cam1 0+300 session-\(s)-cam1.mkv", "cam2 300+271 session-\(s)-cam2.mkv", "Transition SMPTE_Dissolve 0 30",
            "cam1 571+179 session-\(s)-cam1.mkv", "slate 750+150 session-\(s)-program.mkv", "cam1 900+300 session-\(s)-cam1.mkv",
            "cam3 1200+300 session-\(s)-cam3.mkv", "pip 1500+300 session-\(s)-program.mkv",
        ])
        #expect(report["duration"]?.intValue == Self.frame(60_000) && report["rate"]?.doubleValue == 30)
        #expect(items.allSatisfy { $0["type"] != "Clip" || $0["rate"]?.doubleValue == 30 })
        // Each file's available range holds its clips; cam1's ISO declares from where its first clip starts.
        #expect(items.allSatisfy { item in
            guard item["type"] == "Clip", let start = item["start"]?.intValue, let duration = item["duration"]?.intValue,
                  let available = item["available_start"]?.intValue, let length = item["available_duration"]?.intValue else { return item["type"] != "Clip" }
            return available <= start && start + duration <= available + length
        })
        #expect(items.filter { $0["markers"]?.intValue == 1 }.compactMap { $0["name"]?.stringValue } == ["slate", "pip"])
    }

    /// The FCPXML is well-formed XML whose asset-clips lie end to end at their program times, exact
    /// rational multiples of the frame, with the dissolve between cam2 and cam1.
    @Test func theFCPXMLIsWellFormedWithTheClipTimes() throws {
        let (studio, history) = try Self.generated()
        let text = try Self.export(studio, [String(history.stopped), "--format", "fcpxml", "--iso"])
        let spine = try FCPXMLSpine(text)
        #expect(spine.version == "1.10" && spine.frameDuration == "1/30s")
        func frames(_ time: String) throws -> Int { try FCPXMLSpine.frames(time, rate: Self.rate) }
        let clips = try spine.items.filter { $0.element == "asset-clip" }.map { clip in
            (clip.name, try frames(clip.offset), try frames(clip.start), try frames(clip.duration), clip.asset)
        }
        #expect(clips.map { "\($0.0) \($0.1)+\($0.3)" } == ["cam1 0+300", "cam2 300+271", "cam1 571+179", "slate 750+150", "cam1 900+300",
                                                            "cam3 1200+300", "pip 1500+300"])
        #expect(clips.allSatisfy { $0.1 == $0.2 }, "each clip's start in its file is its program time")
        #expect(zip(clips, clips.dropFirst()).allSatisfy { $0.1 + $0.3 == $1.1 }, "end to end")
        #expect(clips.map(\.4) == ["session-\(history.stopped)-cam1.mkv", "session-\(history.stopped)-cam2.mkv", "session-\(history.stopped)-cam1.mkv",
                                   "session-\(history.stopped)-program.mkv", "session-\(history.stopped)-cam1.mkv", "session-\(history.stopped)-cam3.mkv",
                                   "session-\(history.stopped)-program.mkv"])
        let transitions = spine.items.filter { $0.element == "transition" }
        #expect(try transitions.map { "\($0.name) \(try frames($0.offset))+\(try frames($0.duration))" } == ["Cross Dissolve 571+30"])
        #expect(spine.items.map(\.element) == ["asset-clip", "asset-clip", "transition", "asset-clip", "asset-clip", "asset-clip", "asset-clip", "asset-clip"])
        #expect(try frames(spine.sequenceDuration) == 1800 && spine.markers == 2)
    }

    /// The CSV: one row per interval of `onair`, parsed as RFC 4180, summing to the program's time.
    @Test func theCSVSumsToTheProgramTime() throws {
        let (studio, history) = try Self.generated()
        let rows = try CSV.parse(try Self.export(studio, [String(history.stopped), "--format", "csv", "--iso"]))
        try #require(rows.first == ["seq", "source", "source_kind", "from", "to", "duration", "from_ms", "to_ms", "duration_ms", "ended_by", "via", "file"])
        let body = rows.dropFirst()
        #expect(body.map { GeneratedHistory.Interval($0[1], $0[2], Int64($0[6]) ?? -1, Int64($0[7]) ?? -1, $0[9].isEmpty ? nil : $0[9],
                                                      via: $0[10].isEmpty ? nil : $0[10]) } == GeneratedHistory.stoppedIntervals)
        #expect(body.compactMap { Int($0[8]) }.reduce(0, +) == 60_000)
        let durations = body.compactMap { Timecode.frames($0[5], rate: Rational(30)) }.map(\.frames)
        #expect(durations.count == body.count && durations.reduce(0, +) == 1800)
        #expect(body.allSatisfy { $0[11].hasSuffix(".mkv") && $0[11].hasPrefix("/") })
        // A session without recordings still has its cut list as CSV (no file), but no EDL.
        let bare = try CSV.parse(try Self.export(studio, [String(history.failed), "--format", "csv"]))
        #expect(bare.count == 3 && bare.dropFirst().allSatisfy { $0[11].isEmpty }, "\(bare)")
        let refused = try studio.run(["export", String(history.failed), "--format", "edl", "--db", studio.database])
        #expect(refused.status == 1 && refused.error.contains("session \(history.failed) has no program recording"), "\(refused)")
    }

    /// --output: a file written whole (nothing left beside it), a directory gets the default name, a path
    /// that cannot be written fails with exit 1 and leaves what was there; bad words exit 2 and say what exists.
    @Test func outputFilesAndBadInput() throws {
        let (studio, history) = try Self.generated()
        let directory = studio.directory.appendingPathComponent("cuts")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let intoDirectory = try studio.run(["export", String(history.stopped), "--format", "edl", "--iso", "--output", directory.path, "--db", studio.database])
        #expect(intoDirectory.status == 0, "\(intoDirectory)")
        let named = directory.appendingPathComponent("session-\(history.stopped)-iso.edl").path
        #expect(intoDirectory.output == "wrote \(named): session \(history.stopped), 7 intervals, edl\n")
        let printed = try Self.export(studio, [String(history.stopped), "--format", "edl", "--iso"])
        #expect(try String(contentsOfFile: named, encoding: .utf8) == printed)
        // Replaced whole; no temporary file stays.
        let again = try studio.run(["export", String(history.stopped), "--format", "edl", "--output", named, "--db", studio.database])
        let replaced = try String(contentsOfFile: named, encoding: .utf8)
        #expect(again.status == 0 && replaced.contains("PROGRAM") && !replaced.contains("CAM1"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["session-\(history.stopped)-iso.edl"])

        let blocked = directory.appendingPathComponent("session-\(history.stopped)-iso.edl/show.edl").path  // under a file
        let failed = try studio.run(["export", String(history.stopped), "--format", "csv", "--output", blocked, "--db", studio.database])
        #expect(failed.status == 1 && failed.error.contains("studio export: cannot write \(blocked): Not a directory"), "\(failed)")
        #expect(failed.output.isEmpty)

        let db = ["--db", studio.database]
        let cases: [([String], [String])] = [
            (["export", "1"] + db, ["studio export: --format is required: one of edl, fcpxml, otio, csv"]),
            (["export", "1", "--format", "aaf"] + db, ["studio export: --format aaf: no such format; the formats are edl, fcpxml, otio, csv"]),
            (["export", "99", "--format", "edl"] + db, ["studio export: no session 99 in the database: it has sessions 1 to \(history.open)"]),
            (["export", "x", "--format", "edl"] + db, ["studio export: x is not a session id"]),
        ]
        for (words, parts) in cases {
            let result = try studio.run(words)
            #expect(result.status == 2, "\(words): \(result)")
            for part in parts { #expect(result.error.contains(part), "\(words): \(result.error)") }
        }
    }

    /// At 29.97 fps (30000/1001): NDF timecode counted at 30, FCPXML times in multiples of 1001/30000 s,
    /// OTIO at rate 29.97002997; a clip of no frame (two boundaries within half a frame) is left out of the
    /// timelines, not of the CSV.
    @Test func aFractionalRateIsExactInEveryFormat() throws {
        let rate = Rational(30000, 1001)
        func frames(_ ms: Int64) -> FrameCount { FrameCount(milliseconds: ms, rate: rate) }
        let file = CutList.Media(path: "/r/session-5-cam1.mkv", url: "file:///r/session-5-cam1.mkv", camera: "cam1", reel: "CAM1",
                                 start: FrameCount(0), end: FrameCount(3599))
        let program = CutList.Media(path: "/r/session-5-program.mkv", url: "file:///r/session-5-program.mkv", camera: nil, reel: "PROGRAM",
                                    start: FrameCount(0), end: FrameCount(3599))
        // Frame 1800 is 60 060 ms; 60 070 ms is still frame 1800 (the next one is at 60 093).
        let boundaries: [Int64] = [0, 60_060, 60_070, 120_120]
        let clips = (0..<3).map { index in
            CutList.Clip(sequence: index + 1, source: index == 1 ? "slate" : "cam1", sourceKind: index == 1 ? "slate" : "camera",
                         media: index == 1 ? 1 : 0, from: frames(boundaries[index]), to: frames(boundaries[index + 1]),
                         intervalFrom: frames(boundaries[index]), fromMilliseconds: boundaries[index], toMilliseconds: boundaries[index + 1],
                         endedBy: ["loss", "returned", "session end"][index], via: nil, incoming: nil, note: nil)
        }
        let list = CutList(session: 5, title: "studio session 5", rate: rate, width: 1920, height: 1080, timelineStart: FrameCount(0),
                           programStart: FrameCount(0), programEnd: FrameCount(3600), media: [file, program], clips: clips, iso: true)
        let edl = try CMX3600(parsing: ExportFormat.edl.render(list), base: 30)
        #expect(edl.lines.map { "\($0.recordIn)-\($0.recordOut)" } == ["0-1800", "1800-3600"])
        #expect(ExportFormat.edl.render(list).contains("00:01:00:00 00:02:00:00 00:01:00:00 00:02:00:00"))
        let spine = try FCPXMLSpine(ExportFormat.fcpxml.render(list))
        #expect(spine.frameDuration == "1001/30000s")
        #expect(spine.items.map { "\($0.offset) \($0.duration)" } == ["0s 1801800/30000s", "1801800/30000s 1801800/30000s"])
        #expect(spine.sequenceDuration == "3603600/30000s")
        let otio = try JSONValue(parsing: ExportFormat.otio.render(list))
        let items = otio["tracks"]?["children"]?[0]?["children"]?.arrayValue ?? []
        #expect(items.count == 2 && items.allSatisfy { $0["source_range"]?["duration"]?["rate"]?.doubleValue == 30000.0 / 1001 })
        let rows = try CSV.parse(ExportFormat.csv.render(list))
        #expect(rows.count == 4 && rows[2][5] == "00:00:00:00" && rows[2][8] == "10", "\(rows)")
    }

    /// docs/export.md's table of formats is the declaration's.
    @Test func theDocumentedFormatsAreTheDeclaredOnes() throws {
        #expect(try DocumentTables.firstCells(of: "docs/export.md", section: "Formats") == ExportFormat.allCases.map(\.rawValue))
    }
}

/// A node's files on the switcher's timeline. From an older node (no time origin in its answer), by its row's
/// `started_at`: a node whose clock runs 3 s ahead (it measured -3000 ms against the switcher) has its file,
/// started 5 s after program time 0 by the switcher's clock (8 s by its own), placed at 5 s, not 8; a node
/// that never measured is placed by its own clock. With the origin (migration 9): to the frame, at origin +
/// first packet - program zero, the origin of a `node` time base read on the switcher's clock by the offset;
/// the clip's source on the file's own timecode (its `TIMECODE` tag: OTIO's available range starts there).
@Suite struct NodeMediaPlacementTests {
    @Test func aNodesFileIsPlacedOnTheSwitchersClockByTheOffsetItMeasured() throws {
        let scratch = try ScratchStudio("node-media")
        defer { scratch.remove() }
        let store = try EventStore(path: scratch.directory.appendingPathComponent("studio.db").path)
        defer { store.close() }
        let sessionID = try store.startSession(configSnapshot: "{}")
        let zero = Date(timeIntervalSince1970: 1_700_000_000)
        let zeroMicroseconds: Int64 = 1_700_000_000_000_000
        let onItsClock = zero.addingTimeInterval(8)
        // pc4's file: its origin 2.512 s after the switcher's program zero on the switcher's base, its first
        // packet 1.5 s into its program; pc5's the same, its origin on its own clock (3 s ahead).
        let origins: [String: RecordingOrigin] = [
            "pc4": RecordingOrigin(originMicroseconds: zeroMicroseconds + 2_512_345, timeBase: "switcher", firstProgramMilliseconds: 1500),
            "pc5": RecordingOrigin(originMicroseconds: zeroMicroseconds + 5_512_345, timeBase: "node", firstProgramMilliseconds: 1500),
        ]
        for (node, offset) in [("pc2", Int64(-3_000_000)), ("pc3", nil), ("pc4", nil), ("pc5", Int64(-3_000_000))] {
            let file = NodeRecordingRecord(nodeSession: 4, camera: "cam1", kind: "iso", path: "/rec/session-4-cam1.mkv", startedAt: onItsClock,
                                           endedAt: onItsClock.addingTimeInterval(10), origin: origins[node])
            store.noteNode(NodeSessionRecord(node: node, nodeSession: 4, state: .answered, askedAt: zero, recordings: [file],
                                             clockOffsetMicroseconds: offset))
        }
        let session = try #require(try store.session(id: sessionID))
        let media = try History.nodeMedia(session, store: store, zero: zeroMicroseconds, rate: Rational(30), programEnd: FrameCount(30 * 60))
        #expect(media.map(\.camera) == ["pc2/cam1", "pc3/cam1", "pc4/cam1", "pc5/cam1"])
        // 2.512 s = frame 75 (75.37), the first packet 45 frames later.
        #expect(media.map(\.start) == [FrameCount(5 * 30), FrameCount(8 * 30), FrameCount(120), FrameCount(120)], "\(media)")
        // Their source times on their timecode: the time of day of the first frame, as the tag says it (pc5's
        // on its own clock, 3 s ahead).
        let timecode = Timecode.frameOfDay(microseconds: zeroMicroseconds + 2_512_345 + 1_500_000, rate: Rational(30), timeZone: .current)
        #expect(media.map(\.sourceStart) == [FrameCount(0), FrameCount(0), timecode, timecode + FrameCount(90)], "\(media)")
        #expect(media.map(\.exact) == [false, false, true, true])
        #expect(media.map(\.duration) == [FrameCount(10 * 30), FrameCount(10 * 30), FrameCount(10 * 30), FrameCount(10 * 30)], "\(media)")

        // The OTIO track of pc4: a gap to frame 120, then the clip from the file's frame 45.
        var list = CutList(session: sessionID, title: "t", rate: Rational(30), width: 320, height: 180, timelineStart: FrameCount(0),
                           programStart: FrameCount(0), programEnd: FrameCount(1800), media: [], clips: [], iso: true)
        list.nodeMedia = media
        let otio = try JSONValue(parsing: ExportFormat.otio.render(list))
        let track = (otio["tracks"]?["children"]?.arrayValue ?? []).first { $0["name"] == "pc4/cam1" }
        let items = track?["children"]?.arrayValue ?? []
        #expect(items.first?["source_range"]?["duration"]?["value"]?.doubleValue == 120, "\(items)")
        #expect(items.last?["source_range"]?["start_time"]?["value"]?.doubleValue == Double(timecode.frames), "\(items)")
        #expect(items.last?["media_references"]?["DEFAULT_MEDIA"]?["available_range"]?["start_time"]?["value"]?.doubleValue == Double(timecode.frames))
        #expect(items.last?["metadata"]?["studio"]?["exact"] == .bool(true))
        let fallback = (otio["tracks"]?["children"]?.arrayValue ?? []).first { $0["name"] == "pc2/cam1" }
        #expect(fallback?["children"]?.arrayValue?.last?["metadata"]?["studio"]?["timing"]?.stringValue?.contains("older node") == true)
    }
}
