import Foundation
import Testing
import Control
import StudioCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real show asked afterwards: PipeWire cameras (one killed mid-show while on program, then started
/// again), cuts, a mix, a real nginx-rtmp going away and coming back, a local program recording. `studio
/// onair` must agree with the switch events, and the decoded recording must show each interval's source.
@Suite(.serialized) struct OnAirEndToEndTests {
    static func state(_ studio: StudioHarness, _ camera: String) -> String? {
        ((try? studio.json(["cameras"]))?["cameras"]?.arrayValue ?? []).first { $0["name"]?.stringValue == camera }?["state"]?.stringValue
    }

    @Test func onAirAgreesWithTheEventsAndTheRecording() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try PipeWireEndToEndTests.startCameras(rig)
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--backends", "pipewire", "--rtmp", nginx.url(stream: "onair"), "--record", recordings.path, "--no-iso"]
                         + PipeWireEndToEndTests.program, environment: rig.environment)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        #expect(waitUntil(seconds: 10, every: 0.1) { ["cam1", "cam2", "cam3"].allSatisfy { Self.state(studio, $0) == "live" } })
        #expect(try studio.run(["switch", "cam1", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(30))
        #expect(try studio.run(["switch", "cam2", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(30))
        #expect(try studio.run(["preview", "cam3", "--socket", studio.socket]).status == 0)
        #expect(try studio.run(["auto", "mix", "--frames", "15", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(45))
        // cam3, on program, goes away (no backup): the slate, until it comes back by itself.
        rig.stopCamera(node: "vcam3")
        #expect(waitUntil(seconds: 5, every: 0.1) { Self.state(studio, "cam3") == "lost" })
        #expect(studio.waitForProgramFrames(30))
        try rig.startCamera(node: "vcam3", camera: "cam3", size: "640x480", rate: 30, format: "yuy2")
        #expect(waitUntil(seconds: 10, every: 0.1) { Self.state(studio, "cam3") == "live" })
        #expect(studio.waitForProgramFrames(30))
        // The streaming server goes away and comes back.
        nginx.stop()
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "reconnecting" })
        #expect(studio.waitForProgramFrames(30))
        try nginx.restart()
        #expect(waitUntil(seconds: 25, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        #expect(try studio.run(["switch", "cam1", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(30))
        // The running server answers the same questions (and refuses the same way).
        let liveSwitches = try studio.json(["log", "--kind", "switch", "--camera", "cam1"])
        #expect(liveSwitches["session"] == .null && liveSwitches["events"]?.arrayValue?.count == 2, "\(liveSwitches)")
        let liveOnAir = try studio.json(["onair"])
        #expect(liveOnAir["intervals"]?.arrayValue?.last?["source"] == "cam1" && liveOnAir["intervals"]?.arrayValue?.last?["ended_by"] == .null)
        let unknown = try studio.run(["log", "--camera", "cam9", "--socket", studio.socket])
        #expect(unknown.status == 2 && unknown.error.hasPrefix("studio log: no camera cam9 in the history; it knows cam1, cam2, cam3"), "\(unknown)")
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let switches = EndToEndTests.events(log, kind: "switch")
        let result = try studio.run(["onair", "--json", "--db", studio.database])
        try #require(result.status == 0, "\(result)")
        let reply = try JSONValue(parsing: result.output)
        let intervals = reply["intervals"]?.arrayValue ?? []
        let described = intervals.map { "\($0["source"]?.stringValue ?? "?") \($0["from_ms"]?.intValue ?? -1)-\($0["to_ms"]?.intValue ?? -1) \($0["ended_by"]?.stringValue ?? "-")" }
        try #require(intervals.count >= switches.count, "\(described)")

        // Each switch starts an interval of its camera at its program time, in order.
        let switchStarts = switches.map { [$0["camera"]?.stringValue ?? "", String($0["program_ms"]?.intValue ?? -1)] }
        let intervalStarts = intervals.filter { interval in
            switches.contains { $0["program_ms"]?.intValue == interval["from_ms"]?.intValue && $0["camera"] == interval["source"] }
        }.map { [$0["source"]?.stringValue ?? "", String($0["from_ms"]?.intValue ?? -1)] }
        #expect(intervalStarts == switchStarts, "\(described)")
        #expect(switches.compactMap { $0["camera"]?.stringValue }.suffix(3) == ["cam2", "cam3", "cam1"])
        // No gaps, and together they are the program's time.
        #expect(zip(intervals, intervals.dropFirst()).allSatisfy { $0["to_ms"] == $1["from_ms"] }, "\(described)")
        let total = intervals.compactMap { $0["duration_ms"]?.intValue }.reduce(0, +)
        #expect(total == reply["program_ms"]?.intValue && total == (reply["program_to_ms"]?.intValue ?? 0) - (reply["program_from_ms"]?.intValue ?? 0))
        #expect(intervals.last?["ended_by"] == "session end" && intervals.last?["source"] == "cam1")
        // The mix to cam3: cam2 ended by a transition that began where transition_started says.
        let mix = try #require(intervals.first { $0["ended_by"] == "transition" }, "\(described)")
        #expect(mix["source"] == "cam2" && mix["via"] == "mix")
        #expect(mix["transition_from_ms"]?.intValue == EndToEndTests.events(log, kind: "transition_started").first?["program_ms"]?.intValue)
        // cam3 lost on program without a backup: the slate, then cam3 again when it returned.
        let loss = try #require(intervals.firstIndex { $0["source"] == "slate" && $0["camera"] == "cam3" }, "\(described)")
        #expect(loss > 0 && intervals[loss - 1]["source"] == "cam3" && intervals[loss - 1]["ended_by"] == "loss")
        #expect(intervals[loss]["ended_by"] == "returned" && loss + 1 < intervals.count && intervals[loss + 1]["source"] == "cam3", "\(described)")
        #expect((intervals[loss]["duration_ms"]?.intValue ?? 0) >= 500, "the slate was on air for a while: \(described)")

        // The views, as anyone reads them with the sqlite3 shell.
        let outages = try HistoryCLITests.sqlite3([studio.database, "SELECT ended_by, attempts >= 1, up_program_ms FROM output_outages"])
        let reconnected = EndToEndTests.events(log, kind: "output_reconnected").first?["program_ms"]?.intValue ?? -1
        #expect(outages.output == "reconnected|1|\(reconnected)\n", "\(outages)")
        let lost = try HistoryCLITests.sqlite3([studio.database, "SELECT camera, reason, ended_by FROM camera_outages WHERE reason = 'removed'"])
        #expect(lost.output == "cam3|removed|returned\n", "\(lost)")

        // The cut list of the real session: an EDL on the program recording, one event per interval, cut
        // where each began (the switch's frame at 30 fps), contiguous to the program's end (checked below
        // against the recording's last frame).
        let edl = try CMX3600(parsing: try ExportTests.export(studio, ["--format", "edl"]), base: 30)
        #expect(edl.lines.map(\.recordIn) == intervals.map { ExportTests.frame($0["from_ms"]?.intValue ?? -1) }, "\(edl.lines)")
        #expect(edl.lines.allSatisfy { $0.reel == "PROGRAM" } && edl.comments[1]?.contains("FROM CLIP NAME: session-1-program.mkv") == true)

        // The program recording: each interval's source at its start (a switch's frame exactly; the slate and
        // the return, whose times come from the wall clock, in their middle).
        let file = recordings.appendingPathComponent("session-1-program.mkv")
        let frames = try MediaProbe.videoFrames(file)
        let thumbnails = try MediaProbe.tinyFrames(file)
        try #require(frames.count == thumbnails.count && frames.count > 100)
        let started = try #require(EndToEndTests.events(log, kind: "recording_started").first)
        let firstProgramMS = Double(try #require(Int(started["details"]?["first_program_ms"]?.stringValue ?? "")))
        let offset = firstProgramMS - (try #require(frames.first?.ptsMilliseconds))
        // The program's end is its last frame: the EDL's last event ends with the recording's last frame, not at
        // the session's end (`program_to_ms`, a wall-clock time a few frames later, once the outputs drained).
        let lastProgramFrame = ExportTests.frame(Int(((frames.last?.ptsMilliseconds ?? -1) + offset).rounded()))
        #expect(edl.lines.last?.recordOut == lastProgramFrame + 1, "\(edl.lines.last.map { "\($0)" } ?? "") ends after frame \(lastProgramFrame)")
        #expect(lastProgramFrame + 1 <= ExportTests.frame(reply["program_to_ms"]?.intValue ?? -1))
        func shown(at programMS: Int) -> String? {
            guard let index = frames.firstIndex(where: { ($0.ptsMilliseconds ?? -1) + offset >= Double(programMS) - 1.5 }) else { return nil }
            return EndToEndTests.camera(in: thumbnails[index], among: PipeWireEndToEndTests.ids)?.name ?? "slate"
        }
        for interval in intervals {
            guard let from = interval["from_ms"]?.intValue, let to = interval["to_ms"]?.intValue, let source = interval["source"]?.stringValue,
                  Double(from) >= firstProgramMS else { continue }
            let exact = switches.contains { $0["program_ms"]?.intValue == from }
            let at = exact ? from : (from + to) / 2
            #expect(shown(at: at) == source, "at \(at) ms: \(interval) (\(described))")
        }
    }
}
