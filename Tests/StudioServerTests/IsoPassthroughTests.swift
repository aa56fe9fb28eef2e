import Testing
import Synchronization
import Capture
import Output
import StudioConfig
import StudioCore
import StudioSystem
@testable import StudioServer
@testable import IsoRecording

/// The passthrough ISO feed on its own: real cameras (a PipeWire camera made for an MJPEG-only node,
/// not started; a test-pattern camera), the real queue and thread; frames offered through the camera's
/// tap as its PipeWire callback offers them.
@Suite struct IsoPassthroughTests {
    static let wanted = CameraFormat(pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(30))

    static func pipeWireCamera(name: String, offer: PipeWireVideoOffer) -> PipeWireCamera {
        PipeWireCamera(id: CameraID(name), identity: "pipewire:\(name)", displayName: name, nodeID: 999, nodeName: name,
                       offers: [offer], wanted: wanted)
    }
    static let mjpegOffer = PipeWireVideoOffer(spaFormat: 0, name: "MJPG", sizes: .list([.init(width: 640, height: 360)]),
                                               rates: .list([Rational(30)]))
    static let rawOffer = PipeWireVideoOffer(spaFormat: PipeWireVideoFormats.spaFormat(for: .nv12), name: "NV12",
                                             sizes: .list([.init(width: 640, height: 360)]), rates: .list([Rational(30)]))

    @Test func compressedCamerasPassThroughByDefaultAndRawOnesAreEncoded() throws {
        let mjpeg = Self.pipeWireCamera(name: "cam1", offer: Self.mjpegOffer)
        let raw = Self.pipeWireCamera(name: "cam2", offer: Self.rawOffer)
        let pattern = try TestPatternCamera(id: "cam3")
        #expect(mjpeg.compressedCodec == .mjpeg && raw.compressedCodec == nil)
        #expect(IsoMode.resolve(asked: .auto, camera: mjpeg) == (.passthrough, nil))
        #expect(IsoMode.resolve(asked: .encode, camera: mjpeg) == (.encode, nil))
        #expect(IsoMode.resolve(asked: .passthrough, camera: mjpeg) == (.passthrough, nil))
        #expect(IsoMode.resolve(asked: .auto, camera: raw) == (.encode, nil))
        #expect(IsoMode.resolve(asked: .auto, camera: pattern) == (.encode, nil))
        // Asked of a camera that sends raw frames: encoded, with a warning naming it.
        let refused = IsoMode.resolve(asked: .passthrough, camera: pattern)
        #expect(refused.mode == .encode)
        #expect(refused.warning?.contains("cam3 is set to iso: passthrough") == true, "\(refused.warning ?? "no warning")")
    }

    /// A mode change that leaves a camera sending raw frames warns only when its ISO passes the
    /// camera's JPEGs through (it encodes the raw frames into a new file meanwhile); an encoded ISO goes on.
    @Test func aModeChangeToRawWarnsOnlyForAPassthroughISO() {
        let warning = IsoMode.warning(afterModeChangeOf: CameraID("cam1"), sendsCompressed: false, iso: .passthrough)
        #expect(warning?.contains("cam1's ISO records the camera's own JPEG images") == true, "\(warning ?? "no warning")")
        #expect(IsoMode.warning(afterModeChangeOf: CameraID("cam1"), sendsCompressed: true, iso: .passthrough) == nil)
        #expect(IsoMode.warning(afterModeChangeOf: CameraID("cam1"), sendsCompressed: false, iso: .encode) == nil)
        #expect(IsoMode.warning(afterModeChangeOf: CameraID("cam1"), sendsCompressed: false, iso: nil) == nil)
    }

    @Test func framesAreStampedOnTheGridAndCopiedAsTheyCame() throws {
        let camera = Self.pipeWireCamera(name: "cam1", offer: Self.mjpegOffer)
        let items = Mutex<[MediaItem]>([])
        let feed = IsoPassthrough(name: "iso.test", deliver: { item in items.withLock { $0.append(item) } })
        #expect(!camera.compressedFrames.isAttached)
        let grid = FrameGrid(origin: 10_000_000_000, rate: Rational(30))
        feed.start(grid: grid, camera: camera)
        #expect(camera.compressedFrames.isAttached)
        func offer(_ bytes: [UInt8], at time: UInt64, width: Int = 640) {
            bytes.withUnsafeBytes {
                camera.compressedFrames.offer(codec: .mjpeg, bytes: $0, captureTime: time, width: width, height: 360)
            }
        }
        offer([1], at: grid.origin - 1)                       // before the program: not recorded
        offer([2, 2], at: grid.time(ofFrame: 3) - 1_000_000)    // just before tick 3: tick 3
        offer([3], at: grid.time(ofFrame: 3) + 1)              // just after tick 3: tick 4
        offer([4], at: grid.time(ofFrame: 4) - 1)              // tick 4 again: on the heels of the previous, tick 5
        offer([5], at: grid.time(ofFrame: 9), width: 320)      // a new size: a new stream
        feed.finish()
        #expect(!camera.compressedFrames.isAttached)

        let delivered = items.withLock { $0 }
        var formats: [StreamDescription] = [], packets: [EncodedPacket] = [], ends = 0
        for item in delivered {
            switch item {
            case .format(let format): formats.append(format)
            case .packet(let packet): packets.append(packet)
            case .endOfStream: ends += 1
            }
        }
        #expect(formats.map(\.codec) == [.mjpeg, .mjpeg] && formats.map(\.width) == [640, 320] && formats.map(\.generation) == [0, 1])
        #expect(packets.map(\.data) == [[2, 2], [3], [4], [5]])
        #expect(packets.map(\.pts) == [3, 4, 5, 9].map { grid.pts(ofFrame: $0) })
        #expect(packets.allSatisfy { $0.isKeyframe && $0.dts == $0.pts && $0.kind == .video })
        #expect(packets.map(\.generation) == [0, 0, 0, 1])
        #expect(ends == 1, "the video stream ends once")
        if case .endOfStream = delivered.last {} else { Issue.record("end of stream comes last: \(delivered)") }
        let statistics = feed.statistics
        #expect(statistics.framesWritten == 4 && statistics.framesBeforeOrigin == 1 && statistics.width == 320)
        #expect(feed.framesDropped == 0)
    }

    @Test func aFullQueueRefusesTheNewestAndCountsItNeverWaiting() {
        let queue = CompressedFrameQueue(capacity: 2)
        let started = MonotonicClock.now()
        for index in 0..<5 {
            queue.offer(CompressedVideoFrame(codec: .mjpeg, bytes: [UInt8(index)], captureTime: UInt64(index), width: 2, height: 2))
        }
        #expect(MonotonicClock.now() - started < 1_000_000_000)
        #expect(queue.offered == 5 && queue.dropped == 3)
        queue.close()
        var kept: [UInt8] = []
        while case .item(let frame) = queue.pop(timeoutSeconds: 0) { kept += frame.bytes }
        #expect(kept == [0, 1], "the oldest are kept, in order")
    }

    @Test func aTapCopiesNothingWithoutAQueueAndStopsAtDetach() {
        let tap = CompressedFrameTap(), queue = CompressedFrameQueue(capacity: 8)
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]
        bytes.withUnsafeBytes { tap.offer(codec: .mjpeg, bytes: $0, captureTime: 1, width: 2, height: 2) }
        tap.attach(queue)
        bytes.withUnsafeBytes { tap.offer(codec: .mjpeg, bytes: $0, captureTime: 2, width: 2, height: 2) }
        tap.detach(CompressedFrameQueue(capacity: 1))  // not the attached one: no effect
        bytes.withUnsafeBytes { tap.offer(codec: .mjpeg, bytes: $0, captureTime: 3, width: 2, height: 2) }
        tap.detach(queue)
        bytes.withUnsafeBytes { tap.offer(codec: .mjpeg, bytes: $0, captureTime: 4, width: 2, height: 2) }
        queue.close()
        var times: [UInt64] = []
        while case .item(let frame) = queue.pop(timeoutSeconds: 0) {
            #expect(frame.bytes == bytes)
            times.append(frame.captureTime)
        }
        #expect(times == [2, 3])
    }
}
