import Foundation
import Testing
import Control
import StudioCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A passthrough ISO whose camera comes back sending raw frames, end to end: an MJPEG PipeWire camera
/// is recorded as it sent its JPEGs; its producer dies and returns under the same node sending NV12;
/// the ISO goes on in its next file, encoded with H.264, and the operator, the log and the history say
/// so. `studio transcode` then makes an editor's file of the JPEG one and skips the H.264 one. In the
/// PipeWire suite (serialized: one private daemon at a time).
extension PipeWireEndToEndTests {
    @Test func aPassthroughISOWhoseCameraComesBackRawGoesOnEncodedInItsNextFile() throws {
        let rig = try PipeWireRig()
        try rig.start()
        let studio = try StudioHarness()
        try rig.startCamera(node: "vcam1", camera: "cam1", size: "640x360", rate: 30, format: "mjpeg", extraArguments: ["--noise", "8"])
        let directory = studio.directory.appendingPathComponent("recordings")
        let server = try studio.serve(["--backends", "pipewire", "--record", directory.path] + Self.program, environment: rig.environment)
        func cam1ISO() -> JSONValue? {
            ((try? studio.json(["status"]))?["iso"]?.arrayValue ?? []).first { $0["camera"] == "cam1" }
        }
        #expect(waitUntil(seconds: 60, every: 0.1) { (cam1ISO()?["frames_encoded"]?.intValue ?? 0) > 60 }, "\(cam1ISO() ?? .null)")
        let copied = cam1ISO()
        #expect(copied?["mode"] == "passthrough" && copied?["codec"] == "mjpeg", "\(copied ?? .null)")

        rig.stopCamera(node: "vcam1")
        #expect(waitUntil(seconds: 10, every: 0.1) {
            ((try? studio.json(["cameras"]))?["cameras"]?.arrayValue ?? []).first { $0["name"] == "cam1" }?["state"] == "lost"
        })
        try rig.startCamera(node: "vcam1", camera: "cam1", size: "640x360", rate: 30, format: "nv12")
        let before = copied?["frames_encoded"]?.intValue ?? 0
        #expect(waitUntil(seconds: 60, every: 0.1) {
            guard let iso = cam1ISO() else { return false }
            return iso["mode"] == "encode" && (iso["frames_encoded"]?.intValue ?? 0) > before + 60
        }, "\(cam1ISO() ?? .null)")
        let encoded = cam1ISO()
        #expect(encoded?["codec"] == "h264" && encoded?["generation"] == 1 && encoded?["size"] == "640x360", "\(encoded ?? .null)")
        #expect(studio.stopServer() == .exited(0))
        rig.stopCamera(node: "vcam1")
        let log = server.errorText()
        #expect(log.contains("cam1's ISO: the camera sends raw frames now; they are encoded into the next file"), "\(log)")

        let first = directory.appendingPathComponent("session-1-cam1.mkv"), next = directory.appendingPathComponent("session-1-cam1-g1.mkv")
        let jpegs = try MediaProbe.probe(first), frames = try MediaProbe.probe(next)
        #expect(jpegs.video?.codecName == "mjpeg" && jpegs.videoPackets.count >= 60, "\(jpegs.streams), \(jpegs.videoPackets.count) packets")
        #expect(frames.video?.codecName == "h264" && frames.videoPackets.count >= 60, "\(frames.streams), \(frames.videoPackets.count) packets")
        #expect(frames.audio?.codecName == "aac", "the next file carries the program audio too")
        let firstEnd = jpegs.videoPackets.compactMap(\.ptsMilliseconds).max() ?? 0
        let nextStart = frames.videoPackets.compactMap(\.ptsMilliseconds).min() ?? 0
        #expect(nextStart > firstEnd, "one timeline: the JPEG file ends at \(firstEnd) ms, the H.264 one starts at \(nextStart) ms")

        // The history has both files (one `recordings` row each) and why the first ended.
        let history = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let stopped = EndToEndTests.events(history, kind: "recording_stopped").filter { $0["details"]?["path"]?.stringValue == first.path }
        #expect(stopped.first?["details"]?["reason"] == "format changed", "\(stopped)")
        let edit = studio.directory.appendingPathComponent("edit")
        try FileManager.default.createDirectory(at: edit, withIntermediateDirectories: true)
        let transcoded = try studio.run(["transcode", "--session", "1", "--db", studio.database, "--output", edit.path])
        #expect(transcoded.status == 0 && transcoded.output.contains("skipped \(next.path): already H.264"), "\(transcoded)")
        #expect(try MediaProbe.probe(edit.appendingPathComponent("session-1-cam1.mov")).video?.codecName == "h264")
    }
}
