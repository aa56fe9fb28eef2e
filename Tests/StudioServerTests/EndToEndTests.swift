import Foundation
import Testing
import Capture
import Control
import EventStore
import FrameDrawing
import StudioCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real binary, a real nginx-rtmp, real FFmpeg and SQLite: push, cut, stop, then check what nginx
/// recorded against what `studio log` says.
@Suite(.serialized) struct EndToEndTests {
    static let smallProgram = ["--program", "640x360@30", "--preset", "ultrafast", "--bitrate", "1500k"]

    /// Which test camera a 16x9 RGB thumbnail shows, judged by the ident block (left quarter), or nil
    /// (slate, or anything else).
    static func camera(in thumbnail: [UInt8], among cameras: [CameraID]) -> CameraID? {
        var sums = (0.0, 0.0, 0.0), count = 0.0
        for row in 2...6 {
            for column in 1...2 {
                let i = (row * 16 + column) * 3
                sums.0 += Double(thumbnail[i]); sums.1 += Double(thumbnail[i + 1]); sums.2 += Double(thumbnail[i + 2])
                count += 1
            }
        }
        let colour = YUVColor(red: Int(sums.0 / count), green: Int(sums.1 / count), blue: Int(sums.2 / count))
        return TestPatternCamera.camera(showing: colour, among: cameras)
    }

    static func events(_ log: JSONValue, kind: String) -> [JSONValue] {
        (log["events"]?.arrayValue ?? []).filter { $0["kind"]?.stringValue == kind }
    }

    @Test func cutsAppearInTheReceivedStreamExactlyWhereTheEventsSay() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--cameras", "3", "--rtmp", nginx.url(stream: "secretkey123"), "--record", recordings.path] + Self.smallProgram)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })

        let cameras = try studio.json(["cameras"])
        #expect(cameras["cameras"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["cam1", "cam2", "cam3"])
        #expect(cameras["cameras"]?[0]?["on_program"] == .bool(true))
        #expect(cameras["cameras"]?[1]?["format"]?["width"]?.intValue == 1280)

        // Each camera on air for 45 program frames (1.5 s of program time, however long that takes here).
        #expect(studio.waitForProgramFrames(45))
        let cut2 = try studio.run(["switch", "cam2", "--socket", studio.socket])
        #expect(cut2.status == 0 && cut2.output.hasPrefix("program: cam2"), "\(cut2)")
        #expect(studio.waitForProgramFrames(45))
        let cut3 = try studio.run(["switch", "cam3", "--socket", studio.socket])
        #expect(cut3.status == 0, "\(cut3)")
        #expect(studio.waitForProgramFrames(45))

        let status = try studio.json(["status"])
        #expect(status["program"]?["source"] == "cam3")
        #expect((status["program"]?["fps"]?.doubleValue ?? 0) > 20)
        #expect(status["outputs"]?[0]?["url"]?.stringValue?.contains("secretkey123") == false)
        #expect(status.jsonText.contains("secretkey123") == false)
        // The store section: every event so far reached the database.
        #expect((status["store"]?["written"]?.intValue ?? 0) >= 3, "\(status["store"] ?? .null)")
        #expect(status["store"]?["queued"]?.intValue == 0 && status["store"]?["lost"]?.intValue == 0)
        #expect(status["store"]?["retrying_since"] == .null && status["store"]?["last_error"] == .null)
        let statusText = try studio.run(["status", "--socket", studio.socket])
        #expect(statusText.output.contains("0 queued · 0 lost"), "\(statusText.output)")
        // Recording: the recording directory's free space.
        #expect(status["disk"]?["path"]?.stringValue == recordings.path && (status["disk"]?["free_bytes"]?.intValue ?? 0) > 0,
                "\(status["disk"] ?? .null)")
        #expect(statusText.output.contains("GB free at \(recordings.path)"), "\(statusText.output)")

        #expect(studio.stopServer() == .exited(0))

        // The history, read from the database with no server running.
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        #expect(log["session"]?["end_reason"] == "stopped")
        let kinds = log["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } ?? []
        #expect(kinds.first == "session_started" && kinds.last == "session_ended")
        #expect(Self.events(log, kind: "camera_added").count == 3)
        #expect(!log.jsonText.contains("secretkey123"))
        let switches = Self.events(log, kind: "switch")
        #expect(switches.compactMap { $0["camera"]?.stringValue } == ["cam1", "cam2", "cam3"])
        for event in log["events"]?.arrayValue ?? [] {
            #expect(event["wall_time"]?.stringValue != nil && event["kind"]?.stringValue != nil)
        }
        let connected = try #require(Self.events(log, kind: "output_connected").first)
        let firstProgramMS = try #require(Int(connected["details"]?["first_program_ms"]?.stringValue ?? ""))
        let sessions = try JSONValue(parsing: try studio.run(["sessions", "--json", "--db", studio.database]).output)
        #expect(sessions["sessions"]?[0]?["switch_count"]?.intValue == 3)

        // What nginx received.
        let file = try #require(nginx.recordings().first)
        let probe = try MediaProbe.probe(file)
        #expect(probe.video?.codecName == "h264" && probe.video?.width == 640 && probe.video?.height == 360)
        #expect(probe.audio?.codecName == "aac" && probe.audio?.sampleRate == 48000 && probe.audio?.channels == 2)
        let video = probe.videoPackets
        let dts = video.compactMap(\.dtsMilliseconds)
        #expect(dts.count == video.count && zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 }, "video timestamps must increase")
        let audioDTS = probe.audioPackets.compactMap(\.dtsMilliseconds)
        #expect(zip(audioDTS, audioDTS.dropFirst()).allSatisfy { $0 <= $1 }, "audio timestamps must not go back")
        let span = (dts.last ?? 0) - (dts.first ?? 0)
        let expectedFrames = span / (1000.0 / 30) + 1
        // Every frame sits on the program's 30 fps grid (a tick the machine missed leaves a gap, never
        // a shifted frame), and nearly all ticks made it (10% slack for a loaded CI machine).
        #expect(dts.allSatisfy { abs(($0 * 30 / 1000).rounded() * 1000 / 30 - $0) <= 1 }, "timestamps off the 30 fps grid")
        #expect(Double(video.count) >= expectedFrames * 0.9 && Double(video.count) <= expectedFrames + 1,
                "\(video.count) frames over \(span) ms")
        #expect(video.first?.isKeyframe == true)

        // Each cut: the first frame showing the new camera is the one whose timestamp the event gives.
        let frames = try MediaProbe.videoFrames(file)
        let thumbnails = try MediaProbe.tinyFrames(file)
        try #require(frames.count == thumbnails.count && frames.count > 100)
        let ids: [CameraID] = ["cam1", "cam2", "cam3"]
        let shown = thumbnails.map { Self.camera(in: $0, among: ids) }
        #expect(shown.allSatisfy { $0 != nil }, "every frame shows a camera (no slate); unclassified: \(shown.indices.filter { shown[$0] == nil }.map { "\($0): \(thumbnails[$0][((4 * 16 + 1) * 3)..<((4 * 16 + 1) * 3 + 3)])" })")
        for (camera, event) in zip(["cam2", "cam3"], switches.dropFirst()) {
            let programMS = try #require(event["program_ms"]?.intValue)
            let first = try #require(shown.firstIndex { $0 == CameraID(camera) }, "\(camera) never appears")
            let recordedMS = try #require(frames[first].ptsMilliseconds)
            #expect(abs(recordedMS + Double(firstProgramMS) - Double(programMS)) < 1.5,
                    "\(camera): event says \(programMS) ms, stream shows it first at \(recordedMS) + \(firstProgramMS) ms")
            #expect(first > 0 && shown[first - 1] != CameraID(camera))
        }
        // The order on air is exactly cam1, then cam2, then cam3.
        var runs: [CameraID] = []
        for camera in shown.compactMap({ $0 }) where runs.last != camera { runs.append(camera) }
        #expect(runs == ids)

        // The local recording of the program plays.
        let local = recordings.appendingPathComponent("session-1-program.mkv")
        let check = try MediaProbe.decodeCheck(local)
        #expect(check.clean && check.videoFrames > 100, "\(check.errors)")
    }

    @Test func theShowSurvivesTheStreamingServerGoingAway() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        try studio.serve(["--cameras", "1", "--rtmp", nginx.url(stream: "key")] + Self.smallProgram)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        #expect(studio.waitForProgramFrames(45))

        nginx.stop()
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "reconnecting" })
        let framesBefore = try studio.status()["program"]?["frames"]?.intValue ?? 0
        // The program kept running while the server was gone.
        #expect(studio.waitForProgramFrames(45), "program frames: \(framesBefore) -> \((try? studio.status())?["program"]?["frames"]?.intValue ?? 0)")

        try nginx.restart()
        #expect(waitUntil(seconds: 25, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        #expect(studio.waitForProgramFrames(60))
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let kinds = log["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } ?? []
        let disconnected = try #require(kinds.firstIndex(of: "output_disconnected"))
        let attempt = try #require(kinds.firstIndex(of: "output_reconnect_attempt"))
        let reconnected = try #require(kinds.firstIndex(of: "output_reconnected"))
        #expect(disconnected < attempt && attempt < reconnected)
        let resumedAt = try #require(Int(Self.events(log, kind: "output_reconnected")[0]["details"]?["first_program_ms"]?.stringValue ?? ""))

        // nginx wrote one file per connection; the second starts on a keyframe at the program time the
        // event gives, after the end of the first (timestamps continue, never reset).
        let files = nginx.recordings().sorted { $0.lastPathComponent < $1.lastPathComponent }
        try #require(files.count == 2, "\(files)")
        let probes = try files.map(MediaProbe.probe)
        let (before, after) = probes[0].videoPackets.last?.dtsMilliseconds ?? 0 < probes[1].videoPackets.first?.dtsMilliseconds ?? 0
            ? (probes[0], probes[1]) : (probes[1], probes[0])
        let resumed = try #require(after.videoPackets.first)
        #expect(resumed.isKeyframe)
        #expect(abs((resumed.dtsMilliseconds ?? -1) - Double(resumedAt)) < 1.5)
        #expect((before.videoPackets.last?.dtsMilliseconds ?? .infinity) < Double(resumedAt))
        #expect(after.videoPackets.count > 30)
    }

    @Test func aKilledServerLeavesAConsistentDatabaseAndAPlayableRecording() throws {
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--cameras", "2", "--record", recordings.path] + Self.smallProgram)
        #expect(studio.waitForProgramFrames(90))
        #expect(try studio.run(["switch", "cam2", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(30))
        let programAtKill = try studio.json(["status"])["program"]?["program_ms"]?.intValue ?? 0
        #expect(studio.stopServer(signal: SIGKILL) == .signalled(SIGKILL))

        let store = try EventStore.openReadOnly(path: studio.database)
        #expect(try store.integrityCheck() == "ok")
        #expect(try store.sessions().first?.endedAt == nil)
        store.close()

        let recording = recordings.appendingPathComponent("session-1-program.mkv")
        let check = try MediaProbe.decodeCheck(recording)
        // Flushed at keyframes and every 0.5 s, in clusters of at most 1 s: all but ~1.5 s survive
        // (2 s allowed here for the interleaver and the status round trip).
        let expected = (Double(programAtKill) - 2000) / (1000.0 / 30)
        #expect(Double(check.videoFrames) >= expected, "a killed server's recording plays up to its last flush: \(check), killed at \(programAtKill) ms")

        // The next start closes the orphaned session as crashed.
        try studio.serve(["--cameras", "0"] + Self.smallProgram)
        let sessions = try studio.json(["sessions"])
        #expect(sessions["sessions"]?[1]?["end_reason"] == "crashed")
        #expect(sessions["sessions"]?[1]?["switch_count"]?.intValue == 2)
        #expect(sessions["sessions"]?[0]?["ended_at"] == .null)
        #expect(studio.stopServer() == .exited(0))
    }

    @Test func badInputGetsClearErrorsAndTheShowGoesOn() throws {
        let studio = try StudioHarness()
        let noServer = try studio.run(["status", "--socket", studio.socket])
        #expect(noServer.status != 0 && noServer.error.contains(studio.socket), "\(noServer)")

        let badFlag = try studio.run(["serve", "--bogus"])
        #expect(badFlag.status == 2 && badFlag.error.contains("--bogus"))
        let badProgram = try studio.run(["serve", "--program", "1280x720"])
        #expect(badProgram.status == 2 && badProgram.error.contains("WxH@FPS"))
        let noGroup = try studio.run(["serve", "--cameras", "0", "--socket-group", "no-such-studio-group", "--db", studio.database, "--socket", studio.socket])
        #expect(noGroup.status == 2 && noGroup.error.contains("no-such-studio-group") && noGroup.error.contains("groupadd"), "\(noGroup)")
        // 2,000 destinations were accepted and SIGTERM then took more than 15 s: the limit is stated.
        let manyOutputs = (1...17).flatMap { ["--rtmp", "rtmp://127.0.0.1:9/live/key\($0)"] }
        let tooMany = try studio.run(["serve", "--cameras", "0", "--db", studio.database, "--socket", studio.socket] + manyOutputs)
        #expect(tooMany.status == 2 && tooMany.error.contains("17 outputs is more than the 16"), "\(tooMany)")
        #expect(!FileManager.default.fileExists(atPath: studio.database), "a refused start creates no database")
        let badBackends = try studio.run(["serve", "--backends", "v4l2,usb"])
        #expect(badBackends.status == 2 && badBackends.error.contains("--backends v4l2,usb") && badBackends.error.contains("pipewire"))

        let config = studio.directory.appendingPathComponent("studio.yaml")
        try "program:\n  fps: 30\nvideo:\n  preset: [veryfast]\n".write(to: config, atomically: true, encoding: .utf8)
        let badConfig = try studio.run(["serve", "--config", config.path, "--db", studio.database, "--socket", studio.socket])
        #expect(badConfig.status == 2 && badConfig.error.contains("studio.yaml:4"), "\(badConfig)")

        let unwritable = try studio.run(["serve", "--record", "/proc/studio-recordings", "--db", studio.database, "--socket", studio.socket])
        #expect(unwritable.status == 2 && unwritable.error.contains("/proc/studio-recordings"), "\(unwritable)")

        try studio.serve(["--cameras", "2"] + Self.smallProgram)
        let unknown = try studio.run(["switch", "cam9", "--socket", studio.socket])
        #expect(unknown.status == 1 && unknown.error.contains("cam9") && unknown.error.contains("cam1, cam2"), "\(unknown)")

        let second = try studio.run(["serve", "--cameras", "0", "--db", studio.database, "--socket", studio.socket])
        #expect(second.status == 2 && second.error.contains(studio.socket), "\(second)")

        // Garbage and an oversized line on the control socket get error replies; the server is fine.
        let replies = try RawControlConnection(path: studio.socket).exchange([
            Array("this is not json\n".utf8),
            Array(repeating: UInt8(ascii: "x"), count: 100_000) + [UInt8(ascii: "\n")],
            Array("{\"id\": 7, \"command\": \"status\"}\n".utf8),
        ], expectedLines: 3)
        #expect(replies.count == 3)
        #expect(replies[0]["ok"] == .bool(false) && replies[1]["error"]?["code"] == "too_large")
        #expect(replies[2]["id"] == 7 && replies[2]["ok"] == .bool(true))
        #expect(try studio.json(["status"])["program"]?["source"] == "cam1")

        // Out-of-range `limit` and `session` are refused, not clamped or read as "no limit".
        let client = try ControlClient(socketPath: studio.socket)
        let refused: [(String, [String: JSONValue], String)] = [
            ("sessions", ["limit": -1], "\"limit\" must be a positive number of sessions, got -1"),
            ("sessions", ["limit": 0], "got 0"),
            ("log", ["session": -3], "\"session\" must be a positive session id"),
            ("recordings", ["session": 0], "\"session\" must be a positive session id"),
            ("log", ["session": 1e30], "session"),
        ]
        for (command, arguments, message) in refused {
            do {
                _ = try client.request(command, arguments: arguments)
                Issue.record("\(command) \(arguments): expected invalid_argument")
            } catch {
                #expect(error.code == .invalidArgument && error.message.contains(message), "\(command) \(arguments): \(error)")
            }
        }
        #expect(try client.request("sessions", arguments: ["limit": 1])["sessions"]?.arrayValue?.count == 1)

        #expect(studio.stopServer() == .exited(0))
        // Failed starts left no sessions behind: only the one that ran.
        let sessions = try JSONValue(parsing: try studio.run(["sessions", "--json", "--db", studio.database]).output)
        #expect(sessions["sessions"]?.arrayValue?.count == 1)
    }
}

/// Writes raw bytes to the control socket and reads reply lines, bypassing the client's framing.
struct RawControlConnection {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if result != 0 { throw HarnessError("connect \(path): errno \(errno)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func exchange(_ messages: [[UInt8]], expectedLines: Int) throws -> [JSONValue] {
        defer { close(fd) }
        for message in messages {
            var sent = 0
            while sent < message.count {
                let n = message[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { throw HarnessError("send: errno \(errno)") }
                sent += n
            }
        }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while buffer.filter({ $0 == UInt8(ascii: "\n") }).count < expectedLines {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            buffer += chunk[0..<n]
        }
        return try buffer.split(separator: UInt8(ascii: "\n")).map { try JSONValue(parsing: Array($0)) }
    }
}
