import Foundation
import Testing
import StudioCore
import StudioSystem
import TestSupport
@testable import Capture

/// Against the rig's daemon: a raw camera's buffers lent to the pipeline instead of copied
/// (`PipeWireBufferLoans`). Each picture carries the time it was sent (`--stamp 1`, also its buffer's
/// pts, which becomes the frame's capture time), so a picture read in place that the producer wrote over
/// meanwhile would read another time, or none.
extension PipeWireDaemonTests.PipeWireRigTests {
    private func stampedCamera(node: String) throws -> PipeWireCamera {
        try rig.startCamera(node: node, camera: "cam2", size: "640x360", rate: 30, format: "i420", extraArguments: ["--stamp", "1"])
        let camera = try #require(PipeWireDiscoveryProbe.firstCamera(remote: rig.remote, wanted: CameraFormat(
            pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(30))))
        camera.start()
        #expect(waitUntil(seconds: 10) { camera.state == .live }, "\(camera.state) \(camera.problem ?? "")")
        return camera
    }

    /// The newest frames, one per new sequence number, all kept, until `count` or `seconds`.
    private func frames(of camera: PipeWireCamera, count: Int, seconds: Double) -> [VideoFrame] {
        var seen: [VideoFrame] = []
        var last: UInt64?
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        while seen.count < count && MonotonicClock.now() < deadline {
            if let frame = camera.frames.latest().value, frame.sequence != last {
                last = frame.sequence
                seen.append(frame)
            }
            MonotonicClock.sleep(seconds: 0.004)
        }
        return seen
    }

    @Test func aRawCameraLendsItsBuffersAndTheirPicturesAreTheProducers() throws {
        let camera = try stampedCamera(node: "vcam-lend")
        defer { camera.stop() }
        // Read as they come, and let go: the buffers go back, the next ones are lent again.
        var lent = 0, checked = 0
        var wrong: [String] = []
        var last: UInt64?
        let deadline = MonotonicClock.now() + 5_000_000_000
        while checked < 30 && MonotonicClock.now() < deadline {
            if let frame = camera.frames.latest().value, frame.sequence != last {
                last = frame.sequence
                checked += 1
                if frame.storage.isBorrowed { lent += 1 }
                let stamp = CaptureStamp.read(frame)
                if stamp != frame.captureTime { wrong.append("\(frame.sequence): stamp \(stamp.map(String.init) ?? "unread") vs \(frame.captureTime)") }
                if TestPatternCamera.camera(in: frame, among: ["cam1", "cam2", "cam3"]) != "cam2" { wrong.append("\(frame.sequence): not cam2's picture") }
            }
            MonotonicClock.sleep(seconds: 0.004)
        }
        #expect(checked >= 20, "\(checked) frames: \(camera.statistics)")
        #expect(wrong.isEmpty, "\(wrong)")
        // Each picture is let go before the next comes, so nearly all are read in place (a copy only when
        // the buffers before were not back yet).
        #expect(lent * 2 >= checked, "\(lent) of \(checked) frames lent")
    }

    /// A reader that keeps pictures (a slow encoder, a queue) holds its buffers: the camera lends no more
    /// than leaves the producer buffers to fill, copies the rest, and goes on at the producer's rate; the
    /// pictures kept are not written over while they are held.
    @Test func picturesKeptByAReaderAreNotWrittenOverAndTheCameraGoesOn() throws {
        let camera = try stampedCamera(node: "vcam-keep")
        defer { camera.stop() }
        let kept = frames(of: camera, count: 30, seconds: 5)
        #expect(kept.count >= 20, "\(kept.count) frames kept: \(camera.statistics)")
        let lent = kept.filter(\.storage.isBorrowed)
        #expect(!lent.isEmpty, "some kept pictures were lent")
        #expect(lent.count <= 16 - PipeWireBufferLoans.reserve, "at most the stream's buffers (16 at most) less the reserve are lent: \(lent.count)")
        // Half a second more of the producer writing its buffers while these are held (all its buffers
        // lent, it would have none to fill and the camera would stall).
        let whileKept = camera.statistics.framesCaptured
        #expect(waitUntil(seconds: 5) { camera.statistics.framesCaptured >= whileKept + 15 },
                "the camera went on while pictures were held: \(camera.statistics.framesCaptured - whileKept) frames")
        let overwritten = kept.filter { CaptureStamp.read($0) != $0.captureTime }
        #expect(overwritten.isEmpty, "\(overwritten.count) of \(kept.count) kept pictures changed (\(overwritten.filter(\.storage.isBorrowed).count) lent)")
    }

    /// A lent picture still reads after its producer is gone and the camera's stream destroyed (the
    /// camera maps the buffer's memory itself; PipeWire's mapping goes with the stream).
    @Test func aLentPictureOutlivesItsProducerAndTheStream() throws {
        let camera = try stampedCamera(node: "vcam-gone")
        let lent = frames(of: camera, count: 40, seconds: 5).filter(\.storage.isBorrowed)
        let frame = try #require(lent.last, "no lent picture among the frames")
        rig.stopCamera(node: "vcam-gone")
        #expect(waitUntil(seconds: 5) { camera.state == .lost }, "\(camera.state)")
        camera.stop()
        #expect(CaptureStamp.read(frame) == frame.captureTime)
        #expect(TestPatternCamera.camera(in: frame, among: ["cam1", "cam2", "cam3"]) == "cam2")
    }
}
