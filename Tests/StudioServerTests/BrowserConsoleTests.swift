import Foundation
import Testing
import Capture
import Control
import FrameDrawing
import StudioCore
import TestSupport

/// The operator's console in a real browser: Debian's chromium, headless, driven by Selenium
/// (Browser/console_test.py, run with /usr/bin/python3) against the real `studio serve` on loopback,
/// pushing to a private nginx. Every camera tile shows its camera; clicking cam2's tile and then Cut
/// puts cam2 on program (its tile turns red, `data-tally="program"`, and the stream nginx received
/// shows cam2 from the `switch` event's program time); clicking its picture draws the focus cursor and
/// sends the point (`camera_focus` in the log).
@Suite struct BrowserConsoleTests {
    static let python = "/usr/bin/python3"
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/console_test.py").path

    /// Whether chromium, chromedriver and Selenium are installed (scripts/setup.sh installs them).
    static var browserAvailable: Bool {
        guard FileManager.default.isExecutableFile(atPath: chromium), FileManager.default.isExecutableFile(atPath: chromedriver) else {
            return false
        }
        guard let probe = try? ChildProcess(executable: python, arguments: ["-c", "import selenium"]) else { return false }
        return probe.wait(timeout: 30) == .exited(0)
    }

    /// The script's JSON report, once it has ended (killed after two minutes).
    static func report(of browser: ChildProcess) throws -> JSONValue {
        let exit = browser.wait(timeout: 120)
        if exit == nil { browser.terminate(signal: SIGKILL); _ = browser.wait(timeout: 5) }
        let output = browser.outputText()
        try #require(exit == .exited(0), "the browser script: \(String(describing: exit))\n\(output)\n\(browser.errorText().suffix(3000))")
        return try JSONValue(parsing: output.split(whereSeparator: \.isNewline).last.map(String.init) ?? "")
    }

    /// A PipeWire camera unplugged (its producer killed, as in PipeWireEndToEndTests): its tile turns
    /// `lost` within a second, without a reload. The listener has a token, which the page gets in its
    /// URL: its script and style load without it, and it passes it on to the API, the events and the tiles.
    @Test(.enabled(if: browserAvailable,
                   "needs chromium, chromium-driver and python3-selenium (Debian packages; run scripts/setup.sh)"))
    func anUnpluggedCameraTurnsItsTileLostWithinASecond() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try PipeWireEndToEndTests.startCameras(rig)
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        let token = "browser-test-token-0123456789"
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try "http:\n  token: \(token)\n".write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path, "--backends", "pipewire", "--http", "127.0.0.1:\(port)"] + PipeWireEndToEndTests.program,
                         environment: rig.environment)
        #expect(studio.waitForProgramFrames(30))
        let ready = studio.directory.appendingPathComponent("browser-ready").path
        let browser = try ChildProcess(executable: Self.python,
                                       arguments: [Self.script, "--lost", "cam2", "http://127.0.0.1:\(port)/?token=\(token)", ready])
        #expect(waitUntil(seconds: 90, every: 0.1) { FileManager.default.fileExists(atPath: ready) || browser.hasExited }, "the page never showed every camera live")
        let unpluggedMS = Int(Date().timeIntervalSince1970 * 1000)
        rig.stopCamera(node: "vcam2")
        let report = try Self.report(of: browser)
        let lostMS = try #require(report["lost_at_ms"]?.intValue, "\(report)")
        #expect(lostMS - unpluggedMS <= 1000, "cam2's tile turned lost \(lostMS - unpluggedMS) ms after it was unplugged")
        #expect(lostMS >= unpluggedMS, "the tile turned lost before the camera went")
        #expect(studio.stopServer() == .exited(0))
    }

    @Test(.enabled(if: browserAvailable,
                   "needs chromium, chromium-driver and python3-selenium (Debian packages; run scripts/setup.sh)"))
    func clickCutAndFocusInTheBrowser() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        // A scene: cam1 over the left half, cam2 over the right (stretched, so each shows its ident block).
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try """
            scenes:
              - name: duo
                layers:
                  - { source: cam1, rect: [0, 0, 0.5, 1], fit: stretch }
                  - { source: cam2, rect: [0.5, 0, 0.5, 1], fit: stretch, border: { width: 8, color: white } }
            """.write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path, "--cameras", "3", "--rtmp", nginx.url(stream: "console"), "--http", "127.0.0.1:\(port)"]
                         + EndToEndTests.smallProgram)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        #expect(studio.waitForProgramFrames(30))

        // Set STUDIO_CONSOLE_SCREENSHOT=docs/console.png (absolute) to refresh the README's picture.
        let screenshot = ProcessInfo.processInfo.environment["STUDIO_CONSOLE_SCREENSHOT"]
            ?? studio.directory.appendingPathComponent("console.png").path
        let report = try Self.report(of: ChildProcess(executable: Self.python, arguments: [Self.script, "http://127.0.0.1:\(port)/", screenshot, "duo"]))

        // Each tile shows its own camera's ident colour, as the browser drew it.
        let ids: [CameraID] = ["cam1", "cam2", "cam3"]
        for camera in ids {
            let rgb = report["colours"]?[camera.name]?.arrayValue?.compactMap(\.intValue) ?? []
            try #require(rgb.count == 3, "no colour for \(camera.name): \(report)")
            let shown = TestPatternCamera.camera(showing: YUVColor(red: rgb[0], green: rgb[1], blue: rgb[2]), among: ids)
            #expect(shown == camera, "\(camera.name)'s tile shows \(rgb) (\(shown?.name ?? "no camera"))")
        }
        // The scene's tile, and the preview tile with the scene on preview: cam1 left, cam2 right.
        for key in ["scene_halves", "preview_halves"] {
            let halves = report[key]?.arrayValue?.map { $0.arrayValue?.compactMap(\.intValue) ?? [] } ?? []
            try #require(halves.count == 2 && halves.allSatisfy { $0.count == 3 }, "no \(key): \(report)")
            let shown = halves.map { TestPatternCamera.camera(showing: YUVColor(red: $0[0], green: $0[1], blue: $0[2]), among: ids) }
            #expect(shown == ["cam1", "cam2"], "\(key): \(halves) shows \(shown)")
        }
        // One stream for every picture: over 3 s the page received dozens of pictures and made (almost)
        // no new tile requests (one, should the stream have been opened again with a new list).
        let requests = report["tile_requests"]?.arrayValue?.compactMap(\.doubleValue) ?? []
        let parts = report["tile_parts"]?.arrayValue?.compactMap(\.intValue) ?? []
        try #require(requests.count == 2 && parts.count == 2, "\(report)")
        #expect(parts[1] - parts[0] >= 30, "pictures received in 3 s: \(parts)")
        #expect(requests[1] - requests[0] <= 1 && requests[0] <= 3, "tile requests: \(requests) for pictures \(parts)")
        #expect(report["preview_tally"] == "preview" && report["tally_after_cut"] == "program", "\(report)")
        #expect(report["cursor"] == .bool(true), "no focus cursor was drawn")
        let point = report["focus_point"]?.arrayValue?.compactMap(\.doubleValue) ?? []
        #expect(point.count == 2 && abs(point[0] - 0.3) < 0.05 && abs(point[1] - 0.6) < 0.05, "the point sent: \(point)")
        #expect(report["focus_method"] == "none", "a test camera has no focus control: \(report)")
        // The meter shows the demo tone's peak (the default audio: a sine at `level` dBFS peak).
        if case .tone(_, let level) = TestToneSource.Signal.standard {
            let peaks = report["meter_peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            #expect(peaks.count == 2 && peaks.allSatisfy { abs($0 - level) < 1 }, "the meter reads \(peaks), the tone peaks at \(level)")
            // The mixer's input meter for the tone reads the same (unity gain); its mute button muted it.
            let input = report["input_peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            #expect(input.count == 2 && input.allSatisfy { abs($0 - level) < 1 }, "the tone input's meter reads \(input)")
            // Its RMS tick: a sine's RMS is 3.01 dB under its peak.
            let rms = report["input_rms_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            #expect(rms.count == 2 && rms.allSatisfy { abs($0 - (level - 3.01)) < 0.5 }, "the tone input's RMS reads \(rms)")
            // The loudness readout. BS.1770's calibration: a 1 kHz sine at L dBFS in both channels reads
            // L LUFS (momentary, short-term and, steady since the start, integrated), its true peak L dBTP,
            // and a steady sound has no loudness range. The page shows what the API says (to a tenth, read
            // a poll apart).
            let shown = report["loudness"]?.objectValue ?? [:], api = report["api_loudness"]?.objectValue ?? [:]
            for field in ["momentary_lufs", "short_term_lufs", "integrated_lufs", "true_peak_dbtp"] {
                let value = try #require(shown[field]?.doubleValue, "no \(field) shown: \(report)")
                #expect(abs(value - level) < 0.5, "\(field) shows \(value) for a sine at \(level) dBFS")
                let said = try #require(api[field]?.doubleValue, "the API has no \(field): \(report)")
                #expect(abs(value - said) <= 0.2, "\(field): the page shows \(value), the API says \(said)")
            }
            #expect((shown["range_lu"]?.doubleValue ?? 0) < 1, "loudness range \(shown["range_lu"] ?? .null) for a steady sine")
        }
        #expect(report["input_muted"] == .bool(true), "\(report)")
        #expect(try studio.json(["audio"])["inputs"]?[0]?["muted"] == .bool(true))
        #expect(report["silent_momentary"] == .bool(true), "\(report)")
        // Its follow menu: none, the three cameras and the scene; choosing cam2 set it, as `studio audio`
        // says, and the log has the change.
        #expect(report["follow_choices"]?.arrayValue?.compactMap(\.stringValue) == ["none", "cam1", "cam2", "cam3", "duo"], "\(report)")
        #expect(report["input_follow"] == "cam2", "\(report)")
        #expect(try studio.json(["audio"])["inputs"]?[0]?["follow"] == "cam2")
        // The outputs panel added, stopped and removed an output; the history says the console (http) did.
        let addedRow = report["output_added"]?.stringValue ?? ""
        #expect(addedRow.contains("backup (rtmp, added by http)") && !addedRow.contains("browserkey"), "\(report)")
        #expect(report["output_stopped"] == .bool(true) && report["output_removed"] == .bool(true), "\(report)")
        let outputEvents = try studio.json(["log", "--kind", "output_added,output_stopped,output_removed"])["events"]?.arrayValue ?? []
        #expect(outputEvents.map { $0["kind"]?.stringValue ?? "" } == ["output_added", "output_stopped", "output_removed"]
                && outputEvents.allSatisfy { $0["details"]?["by"] == "http" }, "\(outputEvents)")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        #expect(try studio.status()["program"]?["source"] == "cam2")
        #expect(studio.waitForProgramFrames(30))
        #expect(studio.stopServer() == .exited(0))

        // The log: the page's Cut is a switch to cam2, its click a camera_focus at the point sent.
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let switches = EndToEndTests.events(log, kind: "switch")
        #expect(switches.compactMap { $0["camera"]?.stringValue } == ["cam1", "cam2"], "\(switches)")
        let changes = EndToEndTests.events(log, kind: "audio_changed")
        #expect(changes.contains { $0["details"]?["input"] == "tone" && $0["details"]?["follow"] == "none -> cam2" }, "\(changes)")
        let focus = try #require(EndToEndTests.events(log, kind: "camera_focus").first, "no camera_focus event")
        #expect(focus["camera"] == "cam2" && focus["details"]?["method"] == "none", "\(focus)")
        let connected = try #require(EndToEndTests.events(log, kind: "output_connected").first)
        let firstProgramMS = try #require(Int(connected["details"]?["first_program_ms"]?.stringValue ?? ""))

        // What nginx received: cam2 from the switch event's program time on.
        let file = try #require(nginx.recordings().first)
        let frames = try MediaProbe.videoFrames(file)
        let thumbnails = try MediaProbe.tinyFrames(file)
        try #require(frames.count == thumbnails.count && frames.count > 30)
        let shown = thumbnails.map { EndToEndTests.camera(in: $0, among: ids) }
        let programMS = try #require(switches.last?["program_ms"]?.intValue)
        let first = try #require(shown.firstIndex { $0 == "cam2" }, "cam2 never appears in the stream")
        let recordedMS = try #require(frames[first].ptsMilliseconds)
        #expect(abs(recordedMS + Double(firstProgramMS) - Double(programMS)) < 1.5,
                "the event says \(programMS) ms, the stream shows cam2 first at \(recordedMS) + \(firstProgramMS) ms")
        #expect(shown[first...].allSatisfy { $0 == "cam2" }, "after the cut, the stream shows cam2 only")
    }
}
