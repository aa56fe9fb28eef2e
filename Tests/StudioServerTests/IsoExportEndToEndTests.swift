import Foundation
import Testing
import Control
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `studio export --iso` of a session a real server recorded (two test-pattern cameras, ISO files, two cuts):
/// the EDL, FCPXML and OTIO reference the ISO files that exist, and each file's start on the program timeline,
/// as the file itself says (its first video pts, read by ffprobe / libavformat), is what the cut lists declare,
/// to the frame (issue 14). Each ISO file's source times are on its own timecode (its `TIMECODE` tag, read by
/// ffprobe: the time of day of its first frame; OTIO's and FCPXML's convention for a file's start): a file's
/// source time is its program time plus its shift (its timecode less its first frame's program time). In the
/// serialized end-to-end suite (it runs the real server).
extension EndToEndTests {
    @Test func exportIsoOfARecordedSessionPointsAtItsFilesToTheFrame() throws {
        let studio = try StudioHarness()
        let directory = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--record", directory.path] + Self.isoArguments)
        #expect(Self.waitForIsoFrames(studio, moreThan: 15), "the ISO feeds encode")
        let session = try #require(try studio.status()["session"]?.intValue)
        func programMs() -> Int { (try? studio.status())?["program"]?["program_ms"]?.intValue ?? -1 }
        // Two cuts, each followed by a second of program (a deadline, not a sleep).
        var cuts: [(camera: String, ms: Int)] = []
        for camera in ["cam2", "cam1"] {
            let reply = try studio.json(["switch", camera])
            let at = try #require(reply["program_ms"]?.intValue, "\(reply)")
            cuts.append((camera, at))
            #expect(waitUntil(seconds: 30, every: 0.1) { programMs() > at + 1000 }, "the program runs on after the cut to \(camera)")
        }
        #expect(studio.stopServer() == .exited(0))

        let rate = 30
        func frame(_ milliseconds: Double) -> Int { Int((milliseconds * Double(rate) / 1000).rounded()) }
        // The ISO files, and where each starts on the program timeline by its own first video pts.
        let recordings = try JSONValue(parsing: try studio.run(["recordings", String(session), "--json", "--db", studio.database]).output)
        let isos = (recordings["recordings"]?.arrayValue ?? []).filter { $0["kind"] == "iso" }
        let paths = Dictionary(uniqueKeysWithValues: isos.compactMap { iso in
            iso["camera"]?.stringValue.flatMap { camera in iso["path"]?.stringValue.map { (camera, $0) } }
        })
        try #require(Set(paths.keys) == ["cam1", "cam2"], "\(recordings)")
        var firstFrame: [String: Int] = [:], lastFrame: [String: Int] = [:], shift: [String: Int] = [:]
        for (camera, path) in paths {
            let pts = try MediaProbe.videoFrames(URL(fileURLWithPath: path)).compactMap(\.ptsMilliseconds).sorted()
            try #require(pts.count > 30, "\(path): \(pts.count) frames")
            firstFrame[camera] = frame(pts.first!)
            lastFrame[camera] = frame(pts.last!)
            shift[camera] = try IsoTimecode.shift(ofFile: path, firstMilliseconds: pts.first!, rate: rate)
        }

        func export(_ format: String) throws -> String {
            let file = studio.directory.appendingPathComponent("show.\(format)").path
            let result = try studio.run(["export", String(session), "--format", format, "--iso", "--output", file, "--db", studio.database])
            try #require(result.status == 0, "export \(format): \(result)")
            return try String(contentsOfFile: file, encoding: .utf8)
        }

        // EDL: the cuts at their program times; each ISO event's source is its file, which exists and holds the
        // frames the event takes (source times are program times).
        let edl = try CMX3600(parsing: try export("edl"), base: rate)
        let isoLines = edl.lines.filter { $0.reel.hasPrefix("CAM") }
        #expect(isoLines.map(\.reel) == ["CAM1", "CAM2", "CAM1"], "\(edl.lines)")
        #expect(Array(isoLines.dropFirst().map(\.recordIn)) == cuts.map { frame(Double($0.ms)) }, "the cuts, to the frame")
        for line in isoLines {
            let camera = line.reel.lowercased()
            let path = try #require(paths[camera])
            #expect(edl.comments[line.number]?.contains("SOURCE FILE: \(path)") == true, "\(edl.comments[line.number] ?? [])")
            #expect(FileManager.default.fileExists(atPath: path))
            let moved = try #require(shift[camera])
            #expect(line.sourceIn == line.recordIn + moved && line.sourceOut == line.recordOut + moved, "\(line), \(camera)'s timecode \(moved) frames on")
            // The file has the event's frames: its first frame at or before the source in (the first event may start
            // at program 0, a frame or two before an ISO's first frame), its last at or after the source out's frame.
            // The session's last event ends with the program's last frame (not at the session's end, a wall-clock
            // time a few frames later), which the ISO feeds, stopped after the switcher, hold too.
            #expect(line.sourceIn - moved >= (firstFrame[camera] ?? .max) - 2, "\(line) against \(camera)'s first frame \(firstFrame[camera] ?? -1)")
            #expect(line.sourceOut - moved - 1 <= (lastFrame[camera] ?? -1) + 1,
                    "\(line) against \(camera)'s last frame \(lastFrame[camera] ?? -1)")
        }

        // The last event ends where the program recording does: its last frame is the timeline's last.
        let programLast = try MediaProbe.videoFrames(directory.appendingPathComponent("session-\(session)-program.mkv"))
            .compactMap(\.ptsMilliseconds).max() ?? -1
        #expect(edl.lines.last?.recordOut == frame(programLast) + 1, "the last event \(edl.lines.last.map { "\($0)" } ?? "") ends after the program's last frame, \(frame(programLast))")
        for camera in ["cam1", "cam2"] {
            #expect((lastFrame[camera] ?? -1) >= frame(programLast), "\(camera)'s ISO holds the program's last frame \(frame(programLast)): its last is \(lastFrame[camera] ?? -1)")
        }

        // FCPXML: each asset is an ISO file that exists, starting where the file's first pts is on the program
        // timeline (widened to a clip that starts before it, as docs/export.md says), to the frame.
        #if canImport(FoundationXML)
        let document = try XMLDocument(data: Data(try export("fcpxml").utf8), options: [])
        let root = try #require(document.rootElement())
        var assetStart: [String: Int] = [:]
        for case let asset as XMLElement in try root.nodes(forXPath: "resources/asset") {
            let source = (try asset.nodes(forXPath: "media-rep").first as? XMLElement)?.attribute(forName: "src")?.stringValue ?? ""
            let path = try #require(URL(string: source)?.path)
            guard let camera = paths.first(where: { $0.value == path })?.key else { continue }
            #expect(FileManager.default.fileExists(atPath: path))
            let start = asset.attribute(forName: "start")?.stringValue ?? ""
            assetStart[camera] = try FCPXMLSpine.frames(start, rate: rate) - (shift[camera] ?? 0)
        }
        let clips = try root.nodes(forXPath: "library/event/project/sequence/spine/asset-clip").compactMap { $0 as? XMLElement }
        for camera in ["cam1", "cam2"] {
            let starts = try clips.filter { $0.attribute(forName: "name")?.stringValue == camera }
                .map { try FCPXMLSpine.frames($0.attribute(forName: "start")?.stringValue ?? "", rate: rate) - (shift[camera] ?? 0) }
            let expected = min(try #require(firstFrame[camera]), starts.min() ?? .max)
            #expect(assetStart[camera] == expected, "\(camera): the asset starts at \(assetStart[camera] ?? -1), its file's first frame is \(firstFrame[camera] ?? -1)")
        }
        // The second cut's camera (cam1 again, a file that began at the show's start) declares its file's first pts exactly
        // when no clip starts before it; cam2's first clip is at the first cut, well after its file began.
        #expect(assetStart["cam2"] == firstFrame["cam2"], "cam2's ISO starts at its first pts")
        #endif

        // OTIO: loads in the real opentimelineio; its clips' media are the ISO files, each available from the file's start.
        if OTIO.python != nil {
            _ = try export("otio")
            let report = try OTIO.read(studio.directory.appendingPathComponent("show.otio").path)
            let clips = (report["items"]?.arrayValue ?? []).filter { $0["type"] == "Clip" && ($0["name"]?.stringValue ?? "").hasPrefix("cam") }
            #expect(clips.compactMap { $0["name"]?.stringValue } == ["cam1", "cam2", "cam1"], "\(report)")
            for clip in clips {
                let camera = clip["name"]?.stringValue ?? ""
                let url = clip["url"]?.stringValue ?? ""
                let path = URL(string: url)?.path ?? url
                #expect(path == paths[camera] && FileManager.default.fileExists(atPath: path), "\(url)")
                #expect(clip["available_start"]?.intValue == assetStart[camera].map { $0 + (shift[camera] ?? 0) }, "\(camera): \(clip)")
            }
            #expect(clips.dropFirst().compactMap { clip in clip["start"]?.intValue.map { $0 - (shift[clip["name"]?.stringValue ?? ""] ?? 0) } }
                    == cuts.map { frame(Double($0.ms)) })
        }
    }
}

/// Issue 34: a transition in a cut list is as long as the frames the switcher showed (`transition_ended`'s
/// `shown`), in every format. A real server mixes 15 frames and dips 30; the EDL's `D 015`/`D 030`, the
/// FCPXML's transition durations and the OTIO's (read by the real `opentimelineio`) say the same, and each
/// starts on the frame `transition_started` was on. Written as the time from the start to the switch, they
/// were 14 and 29: the switch is on a transition's last frame.
extension EndToEndTests {
    @Test func exportedTransitionsAreAsLongAsTheFramesShown() throws {
        let studio = try StudioHarness()
        let directory = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--record", directory.path] + Self.isoArguments)
        #expect(Self.waitForIsoFrames(studio, moreThan: 15), "the ISO feeds encode")
        let session = try #require(try studio.status()["session"]?.intValue)
        func ended() -> [JSONValue] { (try? studio.json(["log", "--kind", "transition_ended"]))?["events"]?.arrayValue ?? [] }
        func programMs() -> Int { (try? studio.status())?["program"]?["program_ms"]?.intValue ?? -1 }
        for (index, (camera, kind, frames)) in [("cam2", "mix", 15), ("cam1", "dip", 30)].enumerated() {
            #expect(try studio.run(["preview", camera, "--socket", studio.socket]).status == 0)
            let reply = try studio.run(["auto", kind, "--frames", String(frames), "--socket", studio.socket])
            #expect(reply.status == 0, "\(reply)")
            #expect(waitUntil(seconds: 30, every: 0.1) { ended().count == index + 1 }, "the \(kind) ends")
            let at = programMs()
            #expect(waitUntil(seconds: 30, every: 0.1) { programMs() > at + 500 }, "the program runs on after the \(kind)")
        }
        #expect(studio.stopServer() == .exited(0))

        let rate = 30
        func frame(_ milliseconds: Int) -> Int { (milliseconds * rate + 500) / 1000 }
        let log = try JSONValue(parsing: try studio.run(["log", String(session), "--json", "--db", studio.database]).output)
        let started = EndToEndTests.events(log, kind: "transition_started").compactMap { $0["program_ms"]?.intValue }.map(frame)
        let shown = EndToEndTests.events(log, kind: "transition_ended").compactMap { $0["details"]?["shown"]?.stringValue.flatMap { Int($0) } }
        try #require(shown == [15, 30] && started.count == 2, "\(log)")

        func export(_ format: String) throws -> String {
            let result = try studio.run(["export", String(session), "--format", format, "--iso", "--db", studio.database])
            try #require(result.status == 0, "export \(format): \(result)")
            return result.output
        }
        let edl = try CMX3600(parsing: try export("edl"), base: rate)
        let dissolves = edl.lines.filter { $0.code == "D" }
        #expect(dissolves.map { $0.length ?? -1 } == shown && dissolves.map(\.recordIn) == started, "\(edl.lines)")

        let spine = try FCPXMLSpine(try export("fcpxml"))
        let transitions = try spine.items.filter { $0.element == "transition" }.map {
            (try FCPXMLSpine.frames($0.offset, rate: rate), try FCPXMLSpine.frames($0.duration, rate: rate))
        }
        #expect(transitions.map(\.1) == shown && transitions.map(\.0) == started, "\(transitions)")

        if OTIO.python != nil {
            let file = studio.directory.appendingPathComponent("show.otio").path
            try export("otio").write(toFile: file, atomically: true, encoding: .utf8)
            let items = try OTIO.read(file)["items"]?.arrayValue ?? []
            let lengths = items.filter { $0["type"] == "Transition" }.map { ($0["in"]?.intValue ?? -1) + ($0["out"]?.intValue ?? -1) }
            #expect(lengths == shown, "\(items)")
        }
    }
}
