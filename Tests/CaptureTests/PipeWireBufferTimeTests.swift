import Foundation
import Testing
import StudioCore
import StudioSystem
import TestSupport
@testable import Capture

/// The rule for a PipeWire frame's capture time (`PipeWireBufferTime`): the buffer header's pts when it
/// is a plausible CLOCK_MONOTONIC time, else the moment of dequeue.
@Suite struct PipeWireBufferTimeTests {
    /// About 83 minutes after boot.
    let now: UInt64 = 5_000_000_000_000

    @Test func aPlausiblePtsIsTheCaptureTime() {
        let late = now - 357_000_000
        #expect(PipeWireBufferTime.captureTime(pts: Int64(late), now: now) == late, "a frame that waited 357 ms keeps its time")
        #expect(PipeWireBufferTime.captureTime(pts: Int64(now), now: now) == now)
        let oldest = now - PipeWireBufferTime.maximumAge
        #expect(PipeWireBufferTime.captureTime(pts: Int64(oldest), now: now) == oldest)
        let ahead = now + PipeWireBufferTime.futureTolerance
        #expect(PipeWireBufferTime.captureTime(pts: Int64(ahead), now: now) == ahead)
    }

    @Test func anImplausiblePtsFallsBackToNow() {
        let cases: [(String, Int64?)] = [
            ("no header", nil),
            ("zero", 0),
            ("negative", -1),
            ("in the future", Int64(now + PipeWireBufferTime.futureTolerance + 1)),
            ("older than the maximum age", Int64(now - PipeWireBufferTime.maximumAge - 1)),
            ("wall-clock time", 1_764_633_600_000_000_000),
            ("a stream's own count from zero", 33_333_333),
            ("the largest pts", .max),
        ]
        for (what, pts) in cases {
            #expect(PipeWireBufferTime.captureTime(pts: pts, now: now) == now, "\(what): \(pts.map(String.init) ?? "nil")")
        }
    }

    @Test func soonAfterBootASmallPtsIsStillPlausible() {
        let now: UInt64 = 400_000_000
        #expect(PipeWireBufferTime.captureTime(pts: 350_000_000, now: now) == 350_000_000)
        #expect(PipeWireBufferTime.captureTime(pts: 0, now: now) == now)
    }
}

/// Against the rig's daemon: a camera whose PipeWire loop is held up (as a loop thread starved of CPU
/// is) gets its frames late, after they waited in the stream's queue; their capture times are still the
/// times pw-virtual-camera sent them (its buffers' header pts), not the times they were dequeued.
extension PipeWireDaemonTests.PipeWireRigTests {
    @Test func anMJPEGCameraHeldUpKeepsTheTimesItsFramesWereSent() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pts-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logPath = directory.appendingPathComponent("sent.log").path
        // Noise makes every JPEG's bytes (and digest) its own.
        try rig.startCamera(node: "vcam-held", camera: "cam1", size: "320x240", rate: 30, format: "mjpeg",
                            extraArguments: ["--noise", "8", "--log-frames", logPath])
        let camera = try #require(PipeWireDiscoveryProbe.firstCamera(remote: rig.remote, wanted: CameraFormat(
            pixelFormat: .i420, width: 320, height: 240, frameRate: Rational(30))))
        let queue = CompressedFrameQueue(capacity: 1024)
        camera.compressedFrames.attach(queue)
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 10) { camera.state == .live && queue.offered >= 10 }, "\(camera.state) \(camera.statistics)")

        let heldFrom = MonotonicClock.now()
        #expect(camera.holdLoop(seconds: 0.5))
        let heldUntil = MonotonicClock.now()
        let offeredAfterHold = queue.offered
        #expect(waitUntil(seconds: 10) { queue.offered >= offeredAfterHold + 10 }, "frames again after the hold: \(camera.statistics)")
        camera.compressedFrames.detach(queue)
        // (Taken before the log is read: every frame the camera has was logged before it was sent.)
        let decoded = try #require(camera.frames.latest().value)

        var received: [CompressedVideoFrame] = []
        while case .item(let frame) = queue.pop(timeoutSeconds: 0) { received.append(frame) }
        var sentAt: [UInt64: UInt64] = [:]
        for entry in SentFrameLog.entries(atPath: logPath) { sentAt[entry.digest] = entry.time }
        let times = received.map { (captured: $0.captureTime, sent: sentAt[SentFrameLog.digest($0.bytes)]) }
        #expect(times.allSatisfy { $0.sent != nil }, "every JPEG received is one the camera sent")
        // Each frame's capture time is exactly its send time, however long it waited.
        let wrong = times.filter { $0.sent != nil && $0.captured != $0.sent }
        #expect(wrong.isEmpty, "\(wrong.count) of \(times.count) frames stamped off their send time by \(wrong.map { (Int64($0.captured) - Int64($0.sent!)) / 1_000_000 }) ms")
        // The hold did keep frames waiting: some were sent at least 100 ms before it ended and were
        // received (stamped at dequeue they would carry a time after the hold).
        let waited = times.filter { ($0.sent ?? 0) >= heldFrom && ($0.sent ?? .max) + 100_000_000 <= heldUntil }
        #expect(!waited.isEmpty, "no frame sent during the hold was received: sent \(times.compactMap(\.sent).map { (Int64($0) - Int64(heldFrom)) / 1_000_000 }) ms after it began")
        // The decoded picture carries the same time as the JPEG it came from.
        #expect(Set(sentAt.values).contains(decoded.captureTime))
    }

    @Test func aRawCameraHeldUpKeepsTheTimesStampedInItsPictures() throws {
        try rig.startCamera(node: "vcam-stamped", camera: "cam2", size: "640x360", rate: 30, format: "i420", extraArguments: ["--stamp", "1"])
        let camera = try #require(PipeWireDiscoveryProbe.firstCamera(remote: rig.remote, wanted: CameraFormat(
            pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(30))))
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 10) { camera.state == .live }, "\(camera.state) \(camera.problem ?? "")")

        #expect(camera.holdLoop(seconds: 0.5))
        // The frames published after the hold (the first ones had waited in the queue): each carries the
        // time the producer stamped into its picture when it sent it.
        var checked: [(captured: UInt64, stamped: UInt64?)] = []
        var lastSequence: UInt64?
        let deadline = MonotonicClock.now() + 3_000_000_000
        while checked.count < 20 && MonotonicClock.now() < deadline {
            if let frame = camera.frames.latest().value, frame.sequence != lastSequence {
                lastSequence = frame.sequence
                checked.append((frame.captureTime, CaptureStamp.read(frame)))
            }
            MonotonicClock.sleep(seconds: 0.005)
        }
        #expect(checked.count >= 10, "\(checked.count) frames after the hold: \(camera.statistics)")
        #expect(checked.allSatisfy { $0.stamped != nil }, "every picture's stamp reads")
        let wrong = checked.filter { $0.stamped != nil && $0.captured != $0.stamped }
        #expect(wrong.isEmpty, "\(wrong.count) of \(checked.count) frames stamped off the picture's time by \(wrong.map { (Int64($0.captured) - Int64($0.stamped!)) / 1_000_000 }) ms")
    }
}

extension PipeWireDiscoveryProbe {
    /// The first camera a discovery of `remote` finds (for the program format `wanted`), not started; the
    /// discovery is stopped again.
    static func firstCamera(remote: String, wanted: CameraFormat) -> PipeWireCamera? {
        let log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: MemoryNamer().namer, wanted: wanted, remote: remote, report: log.report)
        defer { discovery.stop() }
        return cameras(discovery, log).first
    }
}
