import Foundation
import Testing
import Capture
import Control
import StudioCore
import TestSupport

/// An MJPEG V4L2 camera, as USB webcams are: a v4l2loopback node fed with the test pattern's JPEGs
/// (`LoopbackRig`: `pw-virtual-camera --v4l2-output`). Runs inside the VM (`scripts/vm/test-v4l2.sh`,
/// which sets STUDIO_REQUIRE_LOOPBACK, so there a missing module fails these tests instead of skipping
/// them; each test loads the module and unloads it, so the vivid tests see only vivid); skipped on the host.
@Suite(.serialized, .enabled(if: LoopbackRig.isRequired,
                             "needs a v4l2loopback node: runs inside the VM (scripts/vm/test-v4l2.sh)"))
struct V4L2LoopbackTests {
    /// The writer's camera: its ident block is cam3's blue; the server is told to name it cam3 too.
    static let camera: CameraID = "cam3"
    /// What the writer sends: a loop of the live pattern's first 4 JPEGs, made once before it starts:
    /// in the VM (TCG, a debug build) each picture costs it about 1.5 s to make, so a live writer would
    /// take a core and a 30-frame loop a minute.
    static let writerArguments = ["--replay", "4"]

    /// The JPEGs in a raw MJPEG stream (one after another, as `v4l2-ctl --stream-to` writes the buffers):
    /// cut after each end-of-image marker that is followed by a start-of-image or the end.
    static func jpegs(in stream: [UInt8]) -> [[UInt8]] {
        var result: [[UInt8]] = [], start = 0, index = 0
        while index + 1 < stream.count {
            if stream[index] == 0xFF && stream[index + 1] == 0xD9
                && (index + 2 == stream.count || (index + 3 < stream.count && stream[index + 2] == 0xFF && stream[index + 3] == 0xD8)) {
                result.append(Array(stream[start...(index + 1)]))
                start = index + 2
            }
            index += 1
        }
        return result
    }

    @Test func theNodeIsAnMJPEGCaptureDeviceGivingBackTheJPEGsWritten() throws {
        try LoopbackRig.load()
        defer { LoopbackRig.unload() }
        let node = try LoopbackRig.firstNode()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sentLog = directory.appendingPathComponent("sent.log").path
        let writer = try LoopbackRig.startCamera(node: node, camera: Self.camera.name, extraArguments: Self.writerArguments + ["--log-frames", sentLog])
        defer { writer.stop() }

        // What a capture program sees: a capture device offering MJPG at the writer's size and rate only.
        let device = try V4L2Device(path: node)
        let capabilities = try device.capabilities()
        #expect(capabilities.isVideoCapture && capabilities.driver == "v4l2 loopback", "\(capabilities)")
        #expect(try device.formats().map(\.fourcc) == [.mjpeg])
        let modes = try device.offeredModes()
        #expect(modes.map(\.description) == [V4L2Mode(fourcc: .mjpeg, width: 640, height: 360, rates: .discrete([Rational(30)])).description],
                "\(modes)")
        // (Its VIDIOC_G_PARM sets no V4L2_CAP_TIMEPERFRAME, so the rate is known from the modes only.)
        let format = try device.currentFormat()
        #expect(format.fourcc == .mjpeg && format.width == 640 && format.height == 360, "\(format)")
        device.close()

        // A capture (v4l2-ctl, mmap streaming) reads back exactly the JPEGs the writer sent.
        let captured = directory.appendingPathComponent("captured.mjpeg")
        let capture = try ChildProcess(executable: "/usr/bin/v4l2-ctl", arguments: [
            "-d", node, "--stream-mmap", "--stream-count", "20", "--stream-to", captured.path])
        let exit = capture.wait(timeout: 60)
        if exit == nil { capture.stop() }
        #expect(exit == .exited(0), "v4l2-ctl: \(capture.errorText())")
        let jpegs = Self.jpegs(in: [UInt8](try Data(contentsOf: captured)))
        // (v4l2loopback lets the writer overwrite a buffer the reader has not dequeued yet: a reader that
        // falls the ring's 4 frames behind, as v4l2-ctl writing its file under TCG may, gets a torn frame.)
        let sent = Set(SentFrameLog.entries(atPath: sentLog).map(\.digest))
        let exact = jpegs.filter { sent.contains(SentFrameLog.digest($0)) }
        #expect(jpegs.count >= 15 && exact.count >= 15, "\(exact.count) of \(jpegs.count) JPEGs captured are ones the writer sent, byte for byte")
        #expect(Set(jpegs.map(SentFrameLog.digest)).count >= 2, "the frames move on")
        // And the picture is the writer's camera: its ident block.
        let last = try #require(jpegs.last)
        #expect(Self.camera(in: last) == Self.camera)
    }

    /// Which camera's ident block a JPEG shows, among the writer's (decoded in-process: under TCG an
    /// ffmpeg process costs seconds to start); nil for anything else or a JPEG that does not decode.
    static func camera(in jpeg: [UInt8]) -> CameraID? {
        decode(jpeg).flatMap { TestPatternCamera.camera(in: $0, among: [camera]) }
    }

    /// Each thread of process `pid`, its name and where in the kernel it waits (for a stop that hangs).
    static func threads(of pid: Int32) -> String {
        let directory = "/proc/\(pid)/task"
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted().map { tid in
            func read(_ name: String) -> String {
                ((try? String(contentsOfFile: "\(directory)/\(tid)/\(name)", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            }
            return "\(tid) \(read("comm")) wchan=\(read("wchan")) \(read("stack").split(separator: "\n").prefix(4).joined(separator: " < "))"
        }.joined(separator: "\n")
    }

    static func decode(_ jpeg: [UInt8]) -> VideoFrame? {
        guard let decoder = try? MJPEGDecoder() else { return nil }
        return try? jpeg.withUnsafeBytes { try decoder.decode($0) }
    }

    /// Also what MJPEG webcams get on V4L2 as on PipeWire (`CompressedCapture`): while nobody needs it the
    /// camera decodes nothing (its JPEGs still count), on program every one at full size; its ISO is the
    /// camera's own JPEGs, byte for byte, not re-encoded.
    @Test func studioCapturesTheMJPEGCameraAndPutsItOnProgram() throws {
        try LoopbackRig.load()
        defer { LoopbackRig.unload() }
        let node = try LoopbackRig.firstNode()
        // Small and slow: under TCG every JPEG the server decodes costs tens of milliseconds, and the VM
        // also runs two vivid cameras, the program and its encoder.
        let studio = try StudioHarness()
        let sentLog = studio.directory.appendingPathComponent("sent.log").path
        let writer = try LoopbackRig.startCamera(node: node, camera: Self.camera.name, size: "320x180", rate: 10,
                                                 extraArguments: Self.writerArguments + ["--log-frames", sentLog])
        defer { writer.stop() }
        let config = studio.directory.appendingPathComponent("studio.yaml")
        // An ISO for the MJPEG camera only (the vivid cameras' would be x264 encodes, slow under TCG).
        try """
        cameras:
          iso: false
          pins:
            - match: v4l2loopback
              name: \(Self.camera.name)
              iso: passthrough
        """.write(to: config, atomically: true, encoding: .utf8)
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--config", config.path, "--backends", "v4l2", "--program", "320x180@10", "--preset", "ultrafast", "--bitrate", "500k",
                          "--record", recordings.path])
        func loopbackCamera() -> JSONValue? {
            ((try? V4L2EndToEndTests.request(studio, "cameras"))?["cameras"]?.arrayValue ?? []).first { $0["name"]?.stringValue == Self.camera.name }
        }

        // Found and captured: a V4L2 camera offering MJPG only, live, its frames counting.
        #expect(waitUntil(seconds: 20, every: 0.1) { loopbackCamera()?["state"]?.stringValue == "live" }, "\(String(describing: loopbackCamera()))")
        let found = try #require(loopbackCamera())
        #expect(found["backend"]?.stringValue == "v4l2" && found["identity"]?.stringValue?.contains("v4l2loopback") == true, "\(found)")
        #expect(found["offered_modes"]?.arrayValue?.compactMap { $0["format"]?.stringValue } == ["MJPG"], "\(found)")
        #expect(found["format"]?["width"]?.intValue == 320 && found["format"]?["height"]?.intValue == 180
                && found["format"]?["fps"]?.doubleValue == 10, "\(found)")
        let framesBefore = found["frames"]?.intValue ?? 0
        #expect(waitUntil(seconds: 20, every: 0.1) { (loopbackCamera()?["frames"]?.intValue ?? 0) >= framesBefore + 30 }, "\(String(describing: loopbackCamera()))")
        // Off program and preview, no tiles watched, no backup: idle, nothing decoded, the JPEGs counted.
        let idle = try #require(loopbackCamera())
        if idle["tally"] == nil || idle["tally"] == .null {
            #expect(idle["decode"]?["demand"] == "idle" && idle["decode"]?["full"]?.intValue == 0 && idle["decode"]?["reduced"]?.intValue == 0
                    && (idle["decode"]?["skipped"]?.intValue ?? 0) >= 30, "\(idle)")
        } else {
            Issue.record("cam3 should be neither on program nor on preview at the start: \(idle)")
        }

        // Cut to it: on program, and the program recording shows first a vivid camera (not cam3's ident
        // block: vivid's colour bars), then cam3's ident block.
        #expect(studio.waitForProgramFrames(30))
        _ = try V4L2EndToEndTests.request(studio, "switch", ["camera": .string(Self.camera.name)])
        #expect(studio.waitForProgramFrames(30))
        let cameras = try V4L2EndToEndTests.request(studio, "cameras")["cameras"]?.arrayValue ?? []
        #expect(cameras.first { $0["name"]?.stringValue == Self.camera.name }?["on_program"]?.boolValue == true)
        // On program: every JPEG decoded at full size.
        let fullBefore = loopbackCamera()?["decode"]?["full"]?.intValue ?? 0
        #expect(waitUntil(seconds: 20, every: 0.1) { (loopbackCamera()?["decode"]?["full"]?.intValue ?? 0) >= fullBefore + 20 }, "\(String(describing: loopbackCamera()))")
        #expect(loopbackCamera()?["decode"]?["demand"] == "full", "\(String(describing: loopbackCamera()))")
        let iso = try studio.status()["iso"]?.arrayValue?.first { $0["camera"]?.stringValue == Self.camera.name }
        #expect(iso?["mode"] == "passthrough" && iso?["codec"] == "mjpeg", "\(String(describing: iso))")
        // (In the VM, on a host busy with other work, the server's stop has taken over 20 s.)
        let stopped = studio.stopServer(timeout: 90)
        #expect(stopped == .exited(0), """
            server's threads: \(stopped == nil ? Self.threads(of: studio.server?.pid ?? 0) : "")
            server's last lines: \(studio.server?.errorText().split(separator: "\n").suffix(40).joined(separator: "\n") ?? "")
            """)
        let shown = try MediaProbe.tinyFrames(try AudioInputsEndToEndTests.programFile(in: recordings))
            .map { EndToEndTests.camera(in: $0, among: [Self.camera]) }
        var runs: [String] = []
        for camera in shown.map({ $0?.name ?? "other" }) where runs.last != camera { runs.append(camera) }
        // (Under TCG the camera may go silent for a moment while on program: a run of something else then.)
        #expect(shown.count > 30 && runs.first == "other" && runs.last == Self.camera.name && shown.filter { $0 == Self.camera }.count >= 15,
                "\(shown.count) frames, shown in turn: \(runs)")

        // The ISO: the camera's own JPEGs, as the writer logged them (v4l2loopback may hand a reader a
        // frame the writer was overwriting under load: nine in ten byte for byte).
        let sent = Set(SentFrameLog.entries(atPath: sentLog).map(\.digest))
        let file = try #require(try FileManager.default.contentsOfDirectory(at: recordings, includingPropertiesForKeys: nil)
            .first { $0.lastPathComponent.hasSuffix("-\(Self.camera.name).mkv") })
        let packets = try DemuxedPackets(path: file.path)
        #expect(packets.video?.codecName == "mjpeg" && packets.video?.width == 320 && packets.video?.height == 180, "\(packets.streams)")
        let matched = packets.videoPackets.filter { sent.contains(SentFrameLog.digest($0.bytes)) }.count
        #expect(packets.videoPackets.count >= 30 && matched * 10 >= packets.videoPackets.count * 9,
                "\(matched) of \(packets.videoPackets.count) ISO packets are JPEGs the camera sent (\(sent.count) kinds sent)")
    }
}
