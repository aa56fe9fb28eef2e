import Foundation
import Synchronization
import Testing
import StudioCore
import StudioSystem
import Capture
@testable import IsoRecording

/// A network camera's ISO copy (`IsoPassthrough`) through its real queue and thread: the last picture a
/// connection gave before it ended (`endsItsStream`: the demuxer flushes a PES cut short as a whole
/// packet) is set aside and counted, and the next connection's pictures go on in the same file from
/// its keyframe; and a camera whose pictures stall while its sound goes on does not grow the group
/// its feed holds.
@Suite struct IsoPassthroughTests {
    /// A camera that only hands on packets (what `NetworkPullCamera` does from its receive thread).
    final class PacketCamera: CompressedFrameSource {
        let id: CameraID = "anna"
        let backend: BackendName = .network
        let identity = "network:anna"
        let displayName = "anna"
        let frames = LatestValue<VideoFrame>()
        var state: CameraState { .live }
        var currentFormat: CameraFormat? { nil }
        var statistics: CaptureStatistics { CaptureStatistics() }
        let compressedFrames = CompressedFrameTap()
        var compressedCodec: CompressedCodec? { .h264 }
        var isSendingCompressed: Bool { true }
        func start() {}
        func stop() {}
    }

    static let ms: Int64 = 1_000_000
    static let origin: UInt64 = 1_000_000_000_000

    /// Picture `index` of a 25 fps stream whose media clock starts at 7 s, due 100 ms after the origin.
    static func picture(_ index: Int, epoch: Int, keyframe: Bool, endsItsStream: Bool = false) -> CompressedVideoFrame {
        let dts = 7_000 * ms + Int64(index) * 40 * ms
        var frame = CompressedVideoFrame(codec: .h264, bytes: [0, 0, 0, 1, 0x65, UInt8(index)], captureTime: origin, width: 64, height: 36,
                                         isKeyframe: keyframe)
        frame.parameters = [0, 0, 0, 1, 0x67]
        frame.timing = StreamTiming(pts: dts, dts: dts, duration: 40 * ms, offset: Int64(origin) + 100 * ms - 7_000 * ms, epoch: epoch)
        frame.endsItsStream = endsItsStream
        return frame
    }

    /// The camera's own sound (AAC, 1024 samples at 48 kHz) packet `index`, beside `picture`'s stream.
    static func sound(_ index: Int, epoch: Int) -> CompressedVideoFrame {
        let dts = 7_000 * ms + Int64(index) * 21_333_333
        var frame = CompressedVideoFrame(codec: .aac, bytes: [0x21, UInt8(index % 256)], captureTime: origin, width: 0, height: 0)
        frame.parameters = [0x11, 0x90]
        frame.sampleRate = 48_000
        frame.channels = 2
        frame.timing = StreamTiming(pts: dts, dts: dts, duration: 21_333_333, offset: Int64(origin) + 100 * ms - 7_000 * ms, epoch: epoch)
        return frame
    }

    @Test func soundThatGoesOnWhileThePicturesStallIsWrittenAGroupAtATime() {
        let sound = Mutex(0)
        let feed = IsoPassthrough(name: "iso.test", deliver: { _ in }, deliverAudio: { item in
            if case .packet = item { sound.withLock { $0 += 1 } }
        })
        let camera = PacketCamera()
        feed.start(grid: FrameGrid(origin: Self.origin, rate: Rational(25)), camera: camera)
        // Two pictures, then ten seconds of sound alone (469 packets), all at once.
        camera.compressedFrames.offer(Self.picture(0, epoch: 1, keyframe: true))
        camera.compressedFrames.offer(Self.picture(1, epoch: 1, keyframe: false))
        // Each offered until the feed's queue (32) takes it: a refusal is counted and the packet offered again.
        for index in 0..<469 {
            var refused = feed.framesDropped
            camera.compressedFrames.offer(Self.sound(index, epoch: 1))
            let deadline = MonotonicClock.now() + 10_000_000_000
            while feed.framesDropped > refused, MonotonicClock.now() < deadline {
                refused = feed.framesDropped
                MonotonicClock.sleep(seconds: 0.001)
                camera.compressedFrames.offer(Self.sound(index, epoch: 1))
            }
        }
        feed.finish()
        // A group spans at most `groupLimit` (2 s): 94 sound packets and the two pictures, give or take one.
        let bound = Int(IsoPassthrough.groupLimit / 21_333_333) + 3
        #expect(feed.statistics.mostHeld <= bound, "the most packets a group held: \(feed.statistics.mostHeld), bound \(bound)")
        #expect(sound.withLock { $0 } == 469 && feed.statistics.framesWritten == 2, "\(feed.statistics); sound packets written \(sound.withLock { $0 })")
    }

    @Test func theLastPictureOfAConnectionThatEndedIsSetAsideAndTheNextGoesOnFromItsKeyframe() {
        let packets = Mutex<[EncodedPacket]>([])
        let ended = Mutex(false)
        let feed = IsoPassthrough(name: "iso.test", deliver: { item in
            switch item {
            case .packet(let packet): packets.withLock { $0.append(packet) }
            case .endOfStream: ended.withLock { $0 = true }
            case .format: break
            }
        })
        let camera = PacketCamera()
        feed.start(grid: FrameGrid(origin: Self.origin, rate: Rational(25)), camera: camera)
        // The first connection: a keyframe, two pictures, and its last one (possibly cut short).
        for index in 0..<3 { camera.compressedFrames.offer(Self.picture(index, epoch: 1, keyframe: index == 0)) }
        camera.compressedFrames.offer(Self.picture(3, epoch: 1, keyframe: false, endsItsStream: true))
        // The next connection, later on the stream's clock.
        for index in 50..<53 { camera.compressedFrames.offer(Self.picture(index, epoch: 2, keyframe: index == 50)) }
        feed.finish()
        #expect(ended.withLock { $0 }, "the feed ended its stream")

        let written = packets.withLock { $0 }
        #expect(written.map { Int($0.data.last ?? 255) } == [0, 1, 2, 50, 51, 52], "the pictures written: \(written.map { $0.data.last ?? 255 })")
        #expect(written.first?.isKeyframe == true && written[3].isKeyframe, "each connection's run starts at its keyframe")
        #expect(feed.statistics.framesSetAside == 1, "\(feed.statistics)")
        #expect(feed.statistics.framesWritten == 6)
    }
}
