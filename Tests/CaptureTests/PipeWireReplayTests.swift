import Foundation
import Testing
import Capture
import StudioCore
import StudioSystem
import TestSupport

/// `pw-virtual-camera --replay N` (the eight-camera benchmark's cameras): N JPEGs made once, then sent
/// in a loop from `--replay-phase`, the loop also written to `--replay-file`; against a real private
/// PipeWire daemon (the rig of `PipeWireRigTests`), captured and decoded as any MJPEG camera.
extension PipeWireDaemonTests.PipeWireRigTests {
    @Test func aReplayingCameraSendsItsLoopFromItsPhaseAndWritesTheSameFramesToItsFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let loopPath = directory.appendingPathComponent("loop.mjpeg").path, logPath = directory.appendingPathComponent("sent.log").path
        try rig.startCamera(node: "vcam-replay", camera: "cam3", size: "320x240", rate: 30, format: "mjpeg",
                            extraArguments: ["--noise", "8", "--quality", "3", "--replay", "4", "--replay-phase", "1",
                                             "--replay-file", loopPath, "--log-frames", logPath])

        // A consumer gets the loop's JPEGs decoded, as from any MJPEG camera.
        let camera = try #require(PipeWireDiscoveryProbe.firstCamera(remote: rig.remote, wanted: CameraFormat(
            pixelFormat: .i420, width: 320, height: 240, frameRate: Rational(30))))
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 10) { camera.statistics.framesCaptured >= 12 }, "\(camera.state) \(camera.statistics)")
        #expect(camera.statistics.framesCorrupt == 0)
        let frame = try #require(camera.frames.latest().value)
        #expect(TestPatternCamera.camera(in: frame, among: ["cam1", "cam2", "cam3"]) == "cam3")

        // The file: four JPEGs (each starts FF D8 FF: in entropy-coded data FF is never followed by D8).
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: loopPath)))
        let starts = file.indices.dropLast(2).filter { file[$0] == 0xFF && file[$0 + 1] == 0xD8 && file[$0 + 2] == 0xFF }
        try #require(starts.count == 4 && starts.first == 0, "JPEG starts at \(starts)")
        let fileDigests = zip(starts, starts.dropFirst() + [file.count]).map { SentFrameLog.digest(Array(file[$0..<$1])) }
        #expect(Set(fileDigests).count == 4, "each frame of the loop has its own noise")

        // Sent: the loop from frame 1 (the phase), over and over.
        #expect(waitUntil(seconds: 10) { SentFrameLog.entries(atPath: logPath).count >= 10 })
        let sent = SentFrameLog.entries(atPath: logPath).map(\.digest)
        let expected = (0..<sent.count).map { fileDigests[($0 + 1) % 4] }
        #expect(sent == expected)
    }
}
