import Foundation
import Testing
import Control
import TestSupport
import Capture
import EventStore
import StudioCore
import StudioSystem
@testable import StudioServer

/// `studio doctor` on this machine, through the real binary.
@Suite(.serialized) struct DoctorTests {
    static func checks(_ json: JSONValue, area: String) -> [JSONValue] {
        (json["checks"]?.arrayValue ?? []).filter { $0["area"]?.stringValue == area }
    }

    @Test func reportsReachableAndUnreachableDestinationsWithoutTheKey() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        let closedPort = try NginxRTMP.freePort()
        let result = try studio.run(["doctor", "--json", "--db", studio.database,
                                     "--rtmp", nginx.url(stream: "topsecret1"),
                                     "--rtmp", "rtmp://127.0.0.1:\(closedPort)/live/topsecret2"])
        #expect(result.status == 1, "a problem makes doctor exit 1")
        #expect(!result.output.contains("topsecret"))
        let json = try JSONValue(parsing: result.output)
        let rtmp = Self.checks(json, area: "rtmp")
        #expect(rtmp.map { $0["status"]?.stringValue } == ["ok", "problem"])
        #expect(rtmp[1]["fix"]?.stringValue?.isEmpty == false)
        #expect(json["problems"]?.intValue == 1)

        // What this machine has is reported as it is.
        let gpu = Self.checks(json, area: "gpu")
        let hasRenderNode = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []).contains { $0.hasPrefix("renderD") }
        if hasRenderNode {
            #expect(gpu.allSatisfy { ["ok", "problem"].contains($0["status"]?.stringValue ?? "") })
        } else {
            #expect(gpu.count == 1 && gpu[0]["status"] == "warning" && gpu[0]["message"]?.stringValue?.contains("render node") == true)
        }
        #expect(Self.checks(json, area: "ffmpeg").contains { $0["message"]?.stringValue?.contains("libx264") == true && $0["status"] == "ok" })
        #expect(Self.checks(json, area: "database").first?["status"] == "ok")
        // No V4L2 here (the host kernel has none): doctor says so. (With cameras: the VM test in V4L2EndToEndTests.)
        if !((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).contains(where: { $0.hasPrefix("video") }) {
            let v4l2 = Self.checks(json, area: "v4l2")
            #expect(v4l2.count == 1 && v4l2[0]["status"] == "warning" && v4l2[0]["message"]?.stringValue?.contains("no V4L2 video devices") == true, "\(v4l2)")
        }
    }

    /// An SRT output (UDP) is not TCP-connected as RTMP's are, which said every one was unreachable: its
    /// host is resolved, and what cannot be looked at without publishing is said; a host that does not
    /// resolve is a problem. The stream id stays masked.
    @Test func anSRTDestinationIsResolvedNotConnectedTo() throws {
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        let result = try studio.run(["doctor", "--json", "--db", studio.database,
                                     "--rtmp", "srt://127.0.0.1:\(port)?streamid=secretname9",
                                     "--rtmp", "srt://no-such-host.invalid:9000?streamid=secretname8"])
        #expect(!result.output.contains("secretname"), "the stream ids are masked")
        let json = try JSONValue(parsing: result.output)
        let srt = Self.checks(json, area: "srt")
        #expect(srt.map { $0["status"]?.stringValue } == ["ok", "problem"], "\(srt)")
        #expect(srt.first?["message"]?.stringValue?.contains("127.0.0.1 resolves; not probed further, since SRT runs over UDP") == true, "\(srt)")
        #expect(srt.last?["message"]?.stringValue?.contains("cannot resolve no-such-host.invalid") == true, "\(srt)")
        #expect(Self.checks(json, area: "rtmp").isEmpty)
        #expect(result.status == 1 && json["problems"]?.intValue == 1, "only the host that does not resolve is a problem: \(result.status) \(json["problems"] ?? .null)")
    }

    /// The wording for each kind of node, from survey results made here (the devices themselves are
    /// tested in the VM).
    @Test func v4l2LinesSayWhatEachNodeIsAndWhatToDo() {
        let program = ProgramFormat(width: 1280, height: 720, frameRate: Rational(30))
        let capture = UInt32(0x0000_0001 | 0x0400_0000)  // video capture + streaming
        let camera = V4L2Capabilities(driver: "uvcvideo", card: "HD Pro Webcam C920", busInfo: "usb-0000:00:14.0-1", deviceCaps: capture)
        let metadata = V4L2Capabilities(driver: "uvcvideo", card: "HD Pro Webcam C920", busInfo: "usb-0000:00:14.0-1", deviceCaps: 0x0080_0000 | 0x0400_0000)
        let mjpeg = V4L2ModeChoice.Choice(fourcc: FourCC("MJPG")!, width: 1280, height: 720, frameRate: Rational(30))
        let reports = [
            V4L2NodeReport(path: "/dev/video0", capabilities: camera, identity: "v4l2:by-id:usb-046d_C920_AB12-video-index0",
                           bestMode: mjpeg, bestModeFastestRate: 30),
            V4L2NodeReport(path: "/dev/video1", capabilities: metadata),
            V4L2NodeReport(path: "/dev/video2", capabilities: camera, identity: "v4l2:usb-3:cam", bestMode: mjpeg, bestModeFastestRate: 10),
            V4L2NodeReport(path: "/dev/video4", capabilities: camera, identity: "v4l2:usb-4:cam", bestMode: mjpeg, bestModeFastestRate: 30,
                           busy: SystemError(call: "VIDIOC_REQBUFS", errno: EBUSY)),
            V4L2NodeReport(path: "/dev/video6", capabilities: camera, identity: "v4l2:usb-5:cam", bestMode: mjpeg, bestModeFastestRate: 30,
                           busy: SystemError(call: "VIDIOC_REQBUFS", errno: EBUSY)),
            V4L2NodeReport(path: "/dev/video8", openError: SystemError(call: "open /dev/video8", errno: EACCES)),
        ]
        let checks = V4L2Doctor.videoDeviceChecks(reports, program: program) { path in
            path == "/dev/video4" ? [(812, "ffmpeg")] : [(90, "studio")]
        }
        #expect(checks.map(\.status) == [.ok, .warning, .problem, .ok, .problem, .ok])
        #expect(checks[0].message == "/dev/video0: HD Pro Webcam C920 [v4l2:by-id:usb-046d_C920_AB12-video-index0]: MJPG 1280x720@30 for the 1280x720@30 program")
        #expect(checks[1].message.contains("at most 10 fps") && checks[1].fix?.contains("--program 640x360@30") == true)
        #expect(checks[2].message.contains("busy, ffmpeg (pid 812) is capturing from it") && checks[2].fix?.contains("close or stop ffmpeg (pid 812)") == true)
        #expect(checks[3].message.contains("captured by a running studio (studio (pid 90))"))
        #expect(checks[4].fix?.contains("usermod -aG video") == true)
        #expect(checks[5].message == "1 node(s) skipped, not video capture (metadata or output): /dev/video1")
        #expect(checks.allSatisfy { $0.area == "v4l2" })

        let none = V4L2Doctor.videoDeviceChecks([V4L2NodeReport(path: "/dev/video0", capabilities: metadata)], program: program) { _ in [] }
        #expect(none.map(\.status) == [.ok, .warning] && none[1].message.contains("none of the 1 V4L2 node(s) is a camera"))
        let empty = V4L2Doctor.videoDevices(program: program, devDirectory: FileManager.default.temporaryDirectory.path + "/no-such-dev")
        #expect(empty.count == 1 && empty[0].status == .warning && empty[0].message.contains("no V4L2 video devices"))
    }

    @Test func aDatabaseThatCannotBeCreatedIsAProblem() throws {
        let studio = try StudioHarness()
        let blocker = studio.directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let result = try studio.run(["doctor", "--db", blocker.path + "/sub/studio.db"])
        #expect(result.status == 1)
        #expect(result.output.contains("PROBLEM database"), "\(result.output)")
        #expect(result.output.contains("1 problem(s)"))
    }

    /// The latest session's `events_lost` events make a warning with their total; none is ok.
    @Test func eventsLostInTheLatestSessionAreAWarning() throws {
        let studio = try StudioHarness()
        let path = studio.directory.appendingPathComponent("studio.db").path
        #expect(Doctor.eventsLost(path) == nil, "no database yet: nothing to say")
        let store = try EventStore(path: path)
        _ = try store.startSession(configSnapshot: "{}")
        store.record(StudioEvent(kind: .switchProgram, camera: CameraID("cam1")))
        store.flush()
        let clean = try #require(Doctor.eventsLost(path))
        #expect(clean.status == .ok && clean.area == "event log", "\(clean)")
        for lost in [4, 7] { store.record(StudioEvent(kind: .eventsLost, details: ["lost": "\(lost)", "bound": "3"])) }
        store.flush()
        let check = try #require(Doctor.eventsLost(path))
        #expect(check.status == .warning && check.details["lost"] == "11", "\(check)")
        #expect(check.message.contains("lost 11 event(s)") && check.fix != nil)
        try store.endSession(reason: "stopped")
        store.close()
    }
}
