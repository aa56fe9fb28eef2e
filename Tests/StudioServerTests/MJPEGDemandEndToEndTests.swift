import Foundation
import Testing
import Capture
import Control
import StudioCore
import TestSupport

/// The real binary with three MJPEG-only PipeWire virtual cameras at 1280x720@30 (like USB webcams),
/// pushing to a real nginx-rtmp: a camera nobody needs is not decoded at all; while the console's tiles
/// are watched it is decoded at reduced size; put on preview it is decoded at full size; cut to program,
/// the cut is exact (the exact-cut checks of `EndToEndTests`, on the received stream), also a direct
/// switch to a camera that was not decoded.
@Suite(.serialized) struct MJPEGDemandEndToEndTests {
    static let program = ["--program", "640x360@30", "--preset", "ultrafast", "--bitrate", "1500k"]
    static let ids: [CameraID] = ["cam1", "cam2", "cam3"]

    /// `cameras --json`'s `decode` object of `camera`.
    static func decode(_ studio: StudioHarness, _ camera: String) -> JSONValue? {
        let cameras = (try? studio.json(["cameras"]))?["cameras"]?.arrayValue ?? []
        return cameras.first { $0["name"]?.stringValue == camera }?["decode"]
    }

    @Test func aCameraNobodyNeedsIsNotDecodedTheTilesGetReducedPicturesAndCutsStayExact() throws {
        let rig = try PipeWireRig()
        try rig.start()
        for index in 1...3 {
            try rig.startCamera(node: "vcam\(index)", camera: "cam\(index)", size: "1280x720", rate: 30, format: "mjpeg")
        }
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        // Recording: every camera's ISO passes its JPEGs through, which needs no decoded picture, so
        // it must not hold an unseen camera at full size.
        let directory = studio.directory.appendingPathComponent("recordings")
        let port = try NginxRTMP.freePort()
        try studio.serve(["--backends", "pipewire", "--rtmp", nginx.url(stream: "mjpeg"), "--record", directory.path,
                          "--http", "127.0.0.1:\(port)"] + Self.program, environment: rig.environment)
        #expect(waitUntil(seconds: 10, every: 0.1) {
            let outputs = (try? studio.status())?["outputs"]?.arrayValue ?? []
            return outputs.count == 2 && outputs.allSatisfy { $0["state"]?.stringValue == "connected" }
        })
        #expect(waitUntil(seconds: 10, every: 0.1) { ((try? studio.status())?["iso"]?.arrayValue ?? []).count == 3 })
        let cameras = try studio.json(["cameras"])["cameras"]?.arrayValue ?? []
        let isoModes = (try studio.status()["iso"]?.arrayValue ?? []).compactMap { $0["mode"]?.stringValue }
        #expect(isoModes == ["passthrough", "passthrough", "passthrough"], "\(isoModes)")
        #expect(cameras.compactMap { $0["name"]?.stringValue } == ["cam1", "cam2", "cam3"])
        for camera in cameras {
            #expect(camera["offered_modes"]?[0]?["format"]?.stringValue == "MJPG")
            #expect(camera["format"]?["width"]?.intValue == 1280 && camera["format"]?["height"]?.intValue == 720)
        }

        // cam1 on program: every frame at full size. cam2 and cam3, needed by nobody (no tile watched,
        // no backup): not decoded at all, yet live and counting the JPEGs that arrive.
        #expect(studio.waitForProgramFrames(45))
        #expect(waitUntil(seconds: 30, every: 0.1) { (Self.decode(studio, "cam2")?["skipped"]?.intValue ?? 0) >= 30 })
        let cam1 = try #require(Self.decode(studio, "cam1"))
        #expect(cam1["demand"] == "full" && (cam1["full"]?.intValue ?? 0) > 20 && cam1["reduced"]?.intValue == 0, "\(cam1)")
        for name in ["cam2", "cam3"] {
            let off = try #require(Self.decode(studio, name))
            #expect(off["demand"] == "idle" && off["full"]?.intValue == 0 && off["reduced"]?.intValue == 0, "\(name): \(off)")
            let camera = (try studio.json(["cameras"])["cameras"]?.arrayValue ?? []).first { $0["name"]?.stringValue == name }
            #expect(camera?["state"] == "live" && (camera?["frames"]?.intValue ?? 0) >= 30, "\(name): \(camera ?? .null)")
        }

        // The console watches a camera tile (each request keeps the tiles watched for 2 s): every
        // unseen camera now decodes reduced pictures (1280 / 4 = 320, the tiles' width), about 10 a
        // second, the rest not decoded.
        func watchTile() { _ = try? HTTPTestClient.fetch(port: port, "GET", "/api/v1/tiles/cam2.jpg") }
        #expect(waitUntil(seconds: 30, every: 0.1) {
            watchTile()
            return (Self.decode(studio, "cam2")?["reduced"]?.intValue ?? 0) >= 10 && (Self.decode(studio, "cam3")?["reduced"]?.intValue ?? 0) >= 1
        })
        for name in ["cam2", "cam3"] {
            let off = try #require(Self.decode(studio, name))
            #expect(off["demand"] == "reduced" && off["full"]?.intValue == 0 && (off["reduced"]?.intValue ?? 0) > 0, "\(name): \(off)")
        }
        // The reduced rate: 15 more pictures take at least 1.1 s (at most one per 75 ms: the tiles'
        // 100 ms less a quarter of slack); the camera's other frames are not decoded (`skipped`; how many
        // depends on how fast the virtual camera manages to send on this machine).
        let start = try #require(Self.decode(studio, "cam2"))
        let startTime = Date()
        #expect(waitUntil(seconds: 30, every: 0.1) {
            watchTile()
            return (Self.decode(studio, "cam2")?["reduced"]?.intValue ?? 0) >= (start["reduced"]?.intValue ?? 0) + 15
        })
        let end = try #require(Self.decode(studio, "cam2"))
        let elapsed = Date().timeIntervalSince(startTime)
        let reducedMore = (end["reduced"]?.intValue ?? 0) - (start["reduced"]?.intValue ?? 0)
        #expect(Double(reducedMore) <= elapsed / 0.075 + 1, "\(reducedMore) reduced decodes in \(elapsed) s")
        #expect(end["skipped"]?.intValue != nil && end["full"]?.intValue == 0, "\(end)")
        let metrics = try studio.json(["metrics"])["text"]?.stringValue ?? ""
        #expect(metrics.contains("studio_camera_decoded_frames_total{camera=\"cam2\",size=\"reduced\"}"), "\(metrics.prefix(300))")
        // Nobody watches any more: idle again within the tiles' 2 s, and no more reduced decodes.
        #expect(waitUntil(seconds: 15, every: 0.1) { Self.decode(studio, "cam2")?["demand"] == "idle" && Self.decode(studio, "cam3")?["demand"] == "idle" })
        let idleAgain = Self.decode(studio, "cam2")?["reduced"]?.intValue ?? -1
        #expect(studio.waitForProgramFrames(15))
        #expect(Self.decode(studio, "cam2")?["reduced"]?.intValue == idleAgain)

        // On preview: full size from then on (the newest JPEG at once, then every frame).
        let preview = try studio.run(["preview", "cam2", "--socket", studio.socket])
        #expect(preview.status == 0, "\(preview)")
        #expect(Self.decode(studio, "cam2")?["demand"] == "full")
        #expect(waitUntil(seconds: 10, every: 0.1) { (Self.decode(studio, "cam2")?["full"]?.intValue ?? 0) >= 15 })
        #expect(studio.waitForProgramFrames(45))
        let cut = try studio.run(["cut", "--socket", studio.socket])
        #expect(cut.status == 0, "\(cut)")
        #expect(studio.waitForProgramFrames(45))
        // No reduced picture ever reached the program.
        #expect(try studio.status()["program"]?["reduced_frames"]?.intValue == 0)
        // cam1 now on preview, cam3 still needed by nobody.
        #expect(Self.decode(studio, "cam1")?["demand"] == "full" && Self.decode(studio, "cam3")?["demand"] == "idle")

        // A direct switch to cam3, not decoded: its full decode starts when the command is queued, and
        // the take waits for that picture (at most 100 ms: 4 ticks at 30 fps), counted in held_ticks.
        let take = try studio.run(["switch", "cam3", "--socket", studio.socket])
        #expect(take.status == 0, "\(take)")
        #expect(studio.waitForProgramFrames(45))
        let programStatus = try studio.status()["program"]
        let reducedShown = programStatus?["reduced_frames"]?.intValue ?? -1, slateFrames = programStatus?["slate_frames"]?.intValue ?? -1
        let held = programStatus?["held_ticks"]?.intValue ?? -1
        #expect((0...1).contains(reducedShown), "\(reducedShown) reduced pictures on program")
        #expect((0...4).contains(held), "the take waited \(held) ticks")
        #expect(studio.stopServer() == .exited(0))

        // The received stream: exactly cam1, cam2, cam3, each cut on the frame its event gives.
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let switches = EndToEndTests.events(log, kind: "switch")
        #expect(switches.compactMap { $0["camera"]?.stringValue } == ["cam1", "cam2", "cam3"])
        let connected = try #require(EndToEndTests.events(log, kind: "output_connected").first)
        let firstProgramMS = try #require(Int(connected["details"]?["first_program_ms"]?.stringValue ?? ""))
        let file = try #require(nginx.recordings().first)
        let frames = try MediaProbe.videoFrames(file)
        let thumbnails = try MediaProbe.tinyFrames(file)
        try #require(frames.count == thumbnails.count && frames.count > 100)
        let shown = thumbnails.map { EndToEndTests.camera(in: $0, among: Self.ids) }
        #expect(shown.allSatisfy { $0 != nil }, """
            every frame shows a camera (no slate); unclassified of \(shown.count): \(shown.indices.filter { shown[$0] == nil }); \
            slate frames \(slateFrames), reduced pictures \(reducedShown), held ticks \(held)
            """)
        var runs: [CameraID] = []
        for camera in shown.compactMap({ $0 }) where runs.last != camera { runs.append(camera) }
        #expect(runs == Self.ids)
        try EndToEndTests.expectCutsWhereTheEventsSay(zip(["cam2", "cam3"], switches.dropFirst()).map { (CameraID($0), $1) },
                                                      shown: shown, frames: frames, firstProgramMS: firstProgramMS)
    }
}

extension EndToEndTests {
    /// Each cut's camera first appears in the received stream on the frame whose program time its event
    /// gives, after a frame of another camera. The recording's first video frame is program time
    /// `firstProgramMS` (nginx may rebase the file's timestamps on the first audio packet instead, so
    /// times are mapped from the first video frame).
    static func expectCutsWhereTheEventsSay(_ cuts: [(camera: CameraID, event: JSONValue)], shown: [CameraID?],
                                            frames: [MediaProbe.Frame], firstProgramMS: Int) throws {
        let firstRecordedMS = try #require(frames.first?.ptsMilliseconds)
        for (camera, event) in cuts {
            let programMS = try #require(event["program_ms"]?.intValue)
            let first = try #require(shown.firstIndex { $0 == camera }, "\(camera) never appears")
            let recordedMS = try #require(frames[first].ptsMilliseconds)
            let shownAt = recordedMS - firstRecordedMS + Double(firstProgramMS)
            #expect(abs(shownAt - Double(programMS)) < 1.5, "\(camera): event says \(programMS) ms, stream shows it first at \(shownAt) ms")
            #expect(first > 0 && shown[first - 1] != camera)
        }
    }
}
