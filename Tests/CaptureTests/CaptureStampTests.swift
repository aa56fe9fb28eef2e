import Foundation
import Testing
import Capture
import FrameDrawing
import StudioCore
import StudioSystem
import TestSupport

/// The capture-time bar code: written by the test pattern, read back from the picture (as drawn, and
/// after a real x264 encode and decode, scaled to other sizes by swscale on the way).
@Suite struct CaptureStampTests {
    /// Times with every byte different, the highest bit set, and near zero: a misplaced bit changes them.
    static let times: [UInt64] = [1_234_567_890_123_456_789, 0x8000_0000_0000_0001, 0xA5C3_0F1E_D2B4_7869, 42, 31_415_926_535]

    @Test(arguments: [(1280, 720), (640, 360), (320, 180)])
    func drawnStampReadsBack(width: Int, height: Int) {
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        frame.fill(with: .black)
        #expect(CaptureStamp.read(frame) == nil, "a black picture has no stamp")
        for time in Self.times {
            CaptureStamp.draw(time, into: frame)
            #expect(CaptureStamp.read(frame) == time)
        }
    }

    @Test func aDamagedStampIsAMisreadNotAWrongTime() {
        let frame = VideoFrame.allocate(format: .i420, width: 1280, height: 720)
        let time: UInt64 = 1_234_567_890_123_456_789
        CaptureStamp.draw(time, into: frame)
        // Invert one block in the middle of the time's bits: the CRC no longer matches.
        let area = CaptureStamp.region.pixelRect(width: 1280, height: 720)
        let blockWidth = area.width / CaptureStamp.blocksPerRow
        let rect = PixelRect(x: area.x + 20 * blockWidth + 2, y: area.y + 2, width: blockWidth - 4, height: area.height / 2 - 4)
        let luma = frame.plane(0).assumingMemoryBound(to: UInt8.self)
        let wasWhite = luma[(rect.y + 4) * frame.planes[0].stride + rect.x + 4] > 128
        frame.fill(rect, with: wasWhite ? .black : .white)
        #expect(CaptureStamp.read(frame) == nil)
    }

    @Test func testPatternStampsEachFramesCaptureTime() throws {
        let clock = ManualClock()
        let format = CameraFormat(pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(30))
        let camera = try TestPatternCamera(id: "cam1", format: format, clock: clock, stampsCaptureTime: true)
        camera.start()
        defer { camera.stop() }
        var version: UInt64 = 0
        for _ in 0..<3 {
            clock.advance(by: 33_333_334)
            let result = camera.frames.waitForNewer(than: version, timeoutSeconds: 5)
            let frame = try #require(result.value)
            version = result.version
            #expect(frame.captureTime != 0)
            #expect(CaptureStamp.read(frame) == frame.captureTime)
        }
        let plain = try TestPatternCamera(id: "cam2", format: format, clock: clock)
        plain.start()
        defer { plain.stop() }
        clock.advance(by: 33_333_334)
        let frame = try #require(plain.frames.waitForNewer(than: 0, timeoutSeconds: 5).value)
        #expect(CaptureStamp.read(frame) == nil, "no stamp unless asked for")
    }

    /// 720p pictures with stamps through libx264 (`veryfast`, `zerolatency`, 4500k, as the program) and
    /// back, decoded at 720p and scaled to the program sizes 1920x1080 and 640x360: every frame reads.
    @Test(arguments: [(1280, 720), (1920, 1080), (640, 360)])
    func stampSurvivesX264AndScaling(width: Int, height: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stamp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("in.yuv"), encoded = directory.appendingPathComponent("out.mkv")
        let format = CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30))
        let count = 30
        var raw = Data(), stamps: [UInt64] = []
        TestPatternCamera.renderFrames(of: "cam1", format: format, count: count) { frame in
            let time = 5_000_000_000_000 + UInt64(frame.sequence) * 33_333_333 + UInt64(frame.sequence * frame.sequence)
            CaptureStamp.draw(time, into: frame)
            stamps.append(time)
            raw.append(Self.packed(frame))
        }
        try raw.write(to: source)
        _ = try MediaProbe.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "1280x720", "-r", "30",
                                          "-i", source.path, "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency",
                                          "-b:v", "4500k", "-maxrate", "4500k", "-bufsize", "9000k", "-g", "60", "-y", encoded.path])
        let decoded = try MediaProbe.run("ffmpeg", ["-nostdin", "-v", "error", "-i", encoded.path, "-vf", "scale=\(width):\(height)",
                                                    "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let frameBytes = width * height * 3 / 2
        #expect(decoded.count == frameBytes * count)
        var read: [UInt64?] = []
        decoded.withUnsafeBytes { bytes in
            let base = bytes.bindMemory(to: UInt8.self).baseAddress!
            for index in 0..<(decoded.count / frameBytes) {
                read.append(CaptureStamp.read(luma: base + index * frameBytes, stride: width, width: width, height: height))
            }
        }
        #expect(read == stamps.map { Optional($0) })
    }

    /// The frame's planes one after the other without row padding (ffmpeg's rawvideo layout).
    static func packed(_ frame: VideoFrame) -> Data {
        var data = Data(capacity: frame.width * frame.height * 3 / 2)
        for (index, plane) in frame.planes.enumerated() {
            let rowBytes = index == 0 ? frame.width : frame.width / 2
            for row in 0..<plane.rows {
                data.append(frame.plane(index).assumingMemoryBound(to: UInt8.self) + row * plane.stride, count: rowBytes)
            }
        }
        return data
    }
}
