import Foundation
import Testing
import Capture
import Control
import StudioCore
import StudioSystem
import TestSupport
@testable import StudioServer
#if canImport(Glibc)
import Glibc
#endif

/// `studio serve` on the two vivid cameras, pushing to a private nginx-rtmp: controls, a mode change,
/// cuts, a disconnect and an unbind/bind mid-stream. Runs inside the VM (`scripts/vm/test-v4l2.sh`),
/// where vivid exists; skipped on the host.
@Suite(.serialized, .enabled(if: V4L2Discovery.captureNodes().filter { $0.capabilities.driver == "vivid" }.count >= 2,
                             "needs two vivid /dev/video nodes: runs inside the VM (scripts/vm/test-v4l2.sh)"))
struct V4L2EndToEndTests {
    /// Which camera a 16x9 RGB thumbnail shows: cam1 is set to vivid's red test pattern, cam2 to blue;
    /// nil for anything else (the slate).
    static func camera(in thumbnail: [UInt8]) -> CameraID? {
        var sums = (0.0, 0.0, 0.0)
        for pixel in 0..<(16 * 9) {
            sums.0 += Double(thumbnail[pixel * 3]); sums.1 += Double(thumbnail[pixel * 3 + 1]); sums.2 += Double(thumbnail[pixel * 3 + 2])
        }
        let (r, g, b) = (sums.0 / 144, sums.1 / 144, sums.2 / 144)
        if r > 150 && g < 80 && b < 80 { return "cam1" }
        if b > 150 && r < 80 && g < 80 { return "cam2" }
        return nil
    }

    static func events(_ log: JSONValue, kind: String, camera: String? = nil) -> [JSONValue] {
        (log["events"]?.arrayValue ?? []).filter {
            $0["kind"]?.stringValue == kind && (camera == nil || $0["camera"]?.stringValue == camera)
        }
    }

    /// A control request in-process (under TCG each CLI process costs seconds to start; the CLI itself
    /// is exercised by a few `studio.run` calls below).
    static func request(_ studio: StudioHarness, _ command: String, _ arguments: [String: JSONValue] = [:]) throws -> JSONValue {
        try ControlClient(socketPath: studio.socket).request(command, arguments: arguments, timeoutSeconds: 20)
    }

    /// Every frame of `file` as a 16x9 RGB thumbnail (ffmpeg, with a timeout that suits the VM).
    static func thumbnails(_ file: URL) throws -> [[UInt8]] {
        let child = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-nostdin", "-v", "error", "-i", file.path, "-map", "0:v:0", "-fps_mode", "passthrough",
            "-vf", "scale=16:9", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"])
        guard let exit = child.wait(timeout: 300) else {
            _ = child.stop()
            throw HarnessError("ffmpeg did not finish decoding \(file.path)")
        }
        try #require(exit == .exited(0), "ffmpeg: \(child.errorText())")
        let output = [UInt8](try Data(contentsOf: child.standardOutput))
        return stride(from: 0, to: output.count - 431, by: 432).map { Array(output[$0..<($0 + 432)]) }
    }

    /// A camera's losses in order, each with the reason it was lost and the reason it came back (nil:
    /// not back by the end of the log).
    static func outages(_ log: JSONValue, camera: String) -> [(lost: String, returned: String?)] {
        var outages: [(lost: String, returned: String?)] = []
        for event in log["events"]?.arrayValue ?? [] where event["camera"]?.stringValue == camera {
            let reason = event["details"]?["reason"]?.stringValue ?? "?"
            switch event["kind"]?.stringValue {
            case "camera_lost": outages.append((lost: reason, returned: nil))
            case "camera_returned" where outages.last?.returned == nil && !outages.isEmpty: outages[outages.count - 1].returned = reason
            default: break
            }
        }
        return outages
    }

    static func states(_ studio: StudioHarness) -> [String: String] {
        var result: [String: String] = [:]
        for camera in (try? request(studio, "cameras"))?["cameras"]?.arrayValue ?? [] {
            if let name = camera["name"]?.stringValue { result[name] = camera["state"]?.stringValue }
        }
        return result
    }

    @Test func servesBothCamerasThroughControlsCutsAndHotPlug() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        // cam2 is pinned in the config with its rate and test pattern (applied again whenever it returns).
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try """
        cameras:
          pins:
            - match: vivid-001
              name: cam2
              fps: 30
              controls:
                test_pattern: 100% Blue
        """.write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path, "--backends", "v4l2", "--program", "640x360@30", "--preset", "ultrafast", "--bitrate", "1500k",
                          "--no-iso", "--rtmp", nginx.url(stream: "vivid")])
        #expect(waitUntil(seconds: 15, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })

        let cameras = try Self.request(studio, "cameras")
        let list = cameras["cameras"]?.arrayValue ?? []
        #expect(list.compactMap { $0["name"]?.stringValue } == ["cam1", "cam2"])
        #expect(list.allSatisfy { $0["backend"]?.stringValue == "v4l2" && $0["format"]?["width"]?.intValue == 640 })
        #expect(list.allSatisfy { ($0["offered_modes"]?.arrayValue?.count ?? 0) > 20 })
        let identities = list.compactMap { $0["identity"]?.stringValue }
        #expect(waitUntil(seconds: 5, every: 0.1) { Self.states(studio) == ["cam1": "live", "cam2": "live"] })

        // Controls: tell the cameras apart by their test pattern.
        let red = try studio.run(["control", "cam1", "test_pattern=100% Red", "--socket", studio.socket])
        #expect(red.status == 0 && red.output.contains("test_pattern (menu) = 100% Red"), "\(red)")
        let controls = try Self.request(studio, "controls", ["camera": "cam2"])
        let pattern = controls["controls"]?.arrayValue?.first { $0["name"]?.stringValue == "test_pattern" }
        #expect(pattern?["value_text"]?.stringValue == "100% Blue")
        #expect(pattern?["menu"]?.arrayValue?.count == 22)
        let refused = try studio.run(["control", "cam1", "brightness=999", "--socket", studio.socket])
        #expect(refused.status != 0 && refused.error.contains("out of range for 'brightness': 0...255"), "\(refused)")
        #expect(throws: ControlError.self) { try Self.request(studio, "control", ["camera": "cam1", "name": "focus_absolute", "value": "10"]) }

        // A mode change reports what the device granted (vivid offers 25 fps at 640x360, not 24).
        let mode = try studio.run(["camera", "cam2", "--fps", "24", "--size", "640x360", "--socket", studio.socket])
        #expect(mode.status == 0 && mode.output.contains("granted 640x360 i420 @25"), "\(mode)")
        let back = try Self.request(studio, "camera", ["camera": "cam2", "fps": "30"])
        #expect(back["granted"]?["fps"]?.doubleValue == 30)

        // Cuts.
        // Each shown for a while: waits on the program's own frame count, not on the wall clock.
        #expect(studio.waitForProgramFrames(45))
        _ = try Self.request(studio, "switch", ["camera": "cam2"])
        #expect(studio.waitForProgramFrames(45))
        _ = try Self.request(studio, "switch", ["camera": "cam1"])
        #expect(studio.waitForProgramFrames(30))

        // cam1 (on air) fails as an unplugged USB camera would; vivid reconnects it once it is closed.
        let slateBefore = try Self.request(studio, "status")["program"]?["slate_frames"]?.intValue ?? 0
        #expect(try VividRig.run(["v4l2-ctl", "-d", "/dev/video0", "-c", "disconnect=1"]) == 0)
        // (Deadlines, not durations: under TCG on a loaded host vivid's reconnect has taken over 8 s.)
        #expect(waitUntil(seconds: 30, every: 0.1) {
            let log = (try? Self.request(studio, "log")) ?? .null
            return Self.events(log, kind: "camera_returned", camera: "cam1").contains { $0["details"]?["reason"]?.stringValue == "reappeared" }
        }, "cam1 comes back")
        let slateAfter = try Self.request(studio, "status")["program"]?["slate_frames"]?.intValue ?? 0
        #expect(slateAfter > slateBefore, "the slate was on program while cam1 was gone")
        #expect(studio.waitForProgramFrames(30))

        // Both unplugged at once, then back: same names.
        try VividRig.unbind()
        #expect(waitUntil(seconds: 20, every: 0.1) { Self.states(studio) == ["cam1": "lost", "cam2": "lost"] })
        #expect(studio.waitForProgramFrames(30), "the program goes on (the slate) with both cameras gone")
        try VividRig.bind()
        #expect(waitUntil(seconds: 30, every: 0.1) { Self.states(studio) == ["cam1": "live", "cam2": "live"] })
        let after = try Self.request(studio, "cameras")["cameras"]?.arrayValue ?? []
        #expect(after.compactMap { $0["identity"]?.stringValue } == identities)
        // vivid came back with its defaults; the config's test pattern is on cam2 again.
        let again = try Self.request(studio, "controls", ["camera": "cam2"])["controls"]?.arrayValue
        #expect(again?.first { $0["name"]?.stringValue == "test_pattern" }?["value_text"]?.stringValue == "100% Blue")
        #expect(studio.waitForProgramFrames(30))

        let log = try Self.request(studio, "log")
        let stopping = MonotonicClock.now()
        let stopped = studio.stopServer()
        // How long the stop took, and which services' stops took a second or more (the server says so).
        let slowStops = studio.server?.errorText().split(separator: "\n").filter { $0.contains("stopping ") && $0.contains(" took ") } ?? []
        print("V4L2 end-to-end: the server stopped in \(Double(MonotonicClock.now() - stopping) / 1e9) s; \(slowStops)")
        #expect(stopped == .exited(0), "server's last lines: \(studio.server?.errorText().split(separator: "\n").suffix(25).joined(separator: "\n") ?? "")")
        #expect(Self.events(log, kind: "camera_added").count == 2)
        // The device going away and coming back, exactly: cam1 twice (disconnect, unbind), cam2 once.
        // (Under TCG a camera can also stall past the loss timeout, e.g. around a mode change: those are
        // `reason=silent` losses, each ended by its frames resuming. A device that stalls before it goes
        // away is lost as silent and stays so: one loss, ended by the device's return.)
        for (camera, unplugs) in [("cam1", 2), ("cam2", 1)] {
            let outages = Self.outages(log, camera: camera)
            #expect(outages.allSatisfy { $0.returned != nil }, "\(camera): every loss ended: \(outages)")
            let byDevice = outages.filter { $0.returned == "reappeared" }
            #expect(byDevice.count == unplugs, "\(camera): unplugged \(unplugs) time(s): \(outages)")
            #expect(outages.filter { $0.lost == "removed" }.allSatisfy { $0.returned == "reappeared" }, "\(outages)")
            #expect(outages.filter { $0.returned == "frames resumed" }.allSatisfy { $0.lost == "silent" }, "\(outages)")
        }
        let changes = Self.events(log, kind: "camera_control_changed")
        #expect(changes.compactMap { $0["details"]?["value"]?.stringValue } == ["100% Red"])
        #expect(changes.first?["details"]?["previous"]?.stringValue == "75% Colorbar")
        #expect(Self.events(log, kind: "camera_mode_changed").count == 2)
        #expect(Self.events(log, kind: "switch").compactMap { $0["camera"]?.stringValue } == ["cam1", "cam2", "cam1"])

        // What nginx received: red (cam1), blue (cam2), red again, then the slate while cam1 was gone.
        let file = try #require(nginx.recordings().first)
        let shown = try Self.thumbnails(file).map(Self.camera(in:))
        #expect(shown.count > 300, "\(shown.count) frames received")
        var runs: [String] = []
        for camera in shown.map({ $0?.name ?? "slate" }) where runs.last != camera { runs.append(camera) }
        let firstRed = try #require(runs.firstIndex(of: "cam1"), "\(runs)")
        #expect(Array(runs[firstRed...].prefix(4)) == ["cam1", "cam2", "cam1", "slate"], "\(runs)")
    }

    /// `studio doctor` on the two vivid cameras: one free with a by-id link, one that another program
    /// (this test process) captures from.
    @Test func doctorDescribesEachCameraAndWhoHoldsABusyOne() throws {
        VividRig.removeByIDDirectory()
        defer { VividRig.removeByIDDirectory() }
        let byID = VividRig.byIDName(serial: "SERIAL2")
        try VividRig.makeByIDLink(byID, to: "video1")
        let camera = try V4L2Camera(id: "cam1", path: "/dev/video0", program: ProgramFormat(width: 640, height: 360, frameRate: Rational(30)))
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 5, every: 0.1) { camera.state == .live })

        let studio = try StudioHarness()
        let result = try studio.run(["doctor", "--json", "--db", studio.database, "--program", "640x360@30"])
        #expect(result.status == 1, "the busy camera is a problem: \(result)")
        let checks = DoctorTests.checks(try JSONValue(parsing: result.output), area: "v4l2")
        #expect(checks.count == 2, "\(checks)")
        let busy = try #require(checks.first { $0["details"]?["device"]?.stringValue == "/dev/video0" })
        #expect(busy["status"]?.stringValue == "problem")
        #expect(busy["message"]?.stringValue?.contains("busy") == true, "\(busy)")
        #expect(busy["details"]?["used_by"]?.stringValue?.contains("(pid \(getpid()))") == true, "\(busy)")
        #expect(busy["fix"]?.stringValue?.contains("close or stop") == true)
        let free = try #require(checks.first { $0["details"]?["device"]?.stringValue == "/dev/video1" })
        #expect(free["status"]?.stringValue == "ok", "\(free)")
        #expect(free["details"]?["card"]?.stringValue == "vivid")
        #expect(free["details"]?["identity"]?.stringValue == "v4l2:by-id:" + byID)
        #expect(free["details"]?["mode"]?.stringValue == "YU12 640x360@30")
        #expect(free["message"]?.stringValue?.contains("YU12 640x360@30 for the 640x360@30 program") == true, "\(free)")

        // At the default 1280x720@30 program vivid gives 12.5 fps: said, with what to do.
        camera.stop()
        let defaults = V4L2Doctor.videoDevices(program: .default)
        #expect(defaults.map(\.status) == [.warning, .warning], "\(defaults.map(\.message))")
        #expect(defaults.allSatisfy { $0.details["mode"] == "YU12 1280x720@12.5" && $0.message.contains("at most 12.5 fps") && $0.fix != nil })
    }
}
