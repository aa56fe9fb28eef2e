import Testing
@testable import Capture
import StudioCore
import TestSupport

/// MJPEG decoding with JPEG frames made here by libavcodec's MJPEG encoder (vivid has no MJPEG), plus
/// damaged ones. Runs on the host too: it needs no device.
@Suite struct MJPEGDecoderTests {
    /// Encodes one 4:2:0 JPEG: the left half bright (Y 200 in JPEG's full range: 188 limited), the right
    /// half dark (Y 50 full: 59 limited), chroma neutral.
    static func makeJPEG(width: Int = 640, height: Int = 360) throws -> [UInt8] {
        var problem = ""
        let encoder = try #require(JPEGEncoder(width: width, height: height, rate: Rational(30), problem: &problem), "\(problem)")
        let picture = VideoFrame.allocate(format: .i420, width: width, height: height, captureTime: 0, sequence: 0)
        for row in 0..<height {
            let line = picture.plane(0).assumingMemoryBound(to: UInt8.self) + row * picture.planes[0].stride
            for column in 0..<width { line[column] = column < width / 2 ? 188 : 59 }
        }
        for plane in 1...2 {
            for row in 0..<height / 2 {
                (picture.plane(plane) + row * picture.planes[plane].stride).initializeMemory(as: UInt8.self, repeating: 128, count: width / 2)
            }
        }
        return try #require(encoder.encode(picture))
    }

    static func luma(_ frame: VideoFrame, x: Int, y: Int) -> UInt8 {
        frame.plane(0).load(fromByteOffset: y * frame.planes[0].stride + x, as: UInt8.self)
    }

    @Test func decodesAnEncodedJPEGToI420() throws {
        let jpeg = try Self.makeJPEG()
        #expect(jpeg.count > 1000)
        let decoder = try MJPEGDecoder()
        let frame = try jpeg.withUnsafeBytes { try decoder.decode($0, captureTime: 7, sequence: 3) }
        #expect(frame.format == .i420)
        #expect(frame.width == 640 && frame.height == 360)
        #expect(frame.captureTime == 7 && frame.sequence == 3)
        // JPEG is full range, the program limited range: 200 -> 16 + 200 * 219 / 255 = 188, 50 -> 59.
        #expect(abs(Int(Self.luma(frame, x: 100, y: 100)) - 188) <= 3)
        #expect(abs(Int(Self.luma(frame, x: 500, y: 300)) - 59) <= 3)
    }

    @Test func damagedFramesThrowAndTheDecoderCarriesOn() throws {
        let jpeg = try Self.makeJPEG()
        let decoder = try MJPEGDecoder()
        // Not a JPEG at all (bus garbage).
        var garbage = [UInt8](repeating: 0, count: 5000)
        for index in garbage.indices { garbage[index] = UInt8(truncatingIfNeeded: index &* 7919 &+ 13) }
        #expect(throws: MJPEGDecoder.Failure.self) { try garbage.withUnsafeBytes { try decoder.decode($0) } }
        // Cut short (a USB transfer that lost its tail).
        let truncated = Array(jpeg.prefix(jpeg.count / 3))
        #expect(throws: MJPEGDecoder.Failure.self) { try truncated.withUnsafeBytes { try decoder.decode($0) } }
        // A valid header followed by garbage where the scan should be.
        var scrambled = jpeg
        let scanStart = try #require((2..<scrambled.count - 1).first { scrambled[$0] == 0xFF && scrambled[$0 + 1] == 0xDA })
        for index in (scanStart + 20)..<(scrambled.count - 2) { scrambled[index] = 0xFF }
        #expect(throws: MJPEGDecoder.Failure.self) { try scrambled.withUnsafeBytes { try decoder.decode($0) } }
        // Empty.
        #expect(throws: MJPEGDecoder.Failure.self) { try [UInt8]().withUnsafeBytes { try decoder.decode($0) } }
        // And a good frame still decodes afterwards.
        let frame = try jpeg.withUnsafeBytes { try decoder.decode($0) }
        #expect(frame.width == 640 && abs(Int(Self.luma(frame, x: 10, y: 10)) - 188) <= 3)
    }
}

/// Mode choice from offered modes (no device needed).
@Suite struct V4L2ModeChoiceTests {
    static let rates30: V4L2FrameRates = .discrete([Rational(30), Rational(15)])

    @Test func prefersTheProgramSizeAndRateThenRawFormats() {
        let modes = [
            V4L2Mode(fourcc: .mjpeg, width: 1280, height: 720, rates: Self.rates30),
            V4L2Mode(fourcc: .yuyv, width: 1280, height: 720, rates: .discrete([Rational(10)])),
            V4L2Mode(fourcc: .yuyv, width: 640, height: 360, rates: Self.rates30),
            V4L2Mode(fourcc: .nv12, width: 1280, height: 720, rates: Self.rates30),
        ]
        let best = V4L2ModeChoice.best(modes, for: ProgramFormat(width: 1280, height: 720, frameRate: Rational(30)))
        #expect(best == V4L2ModeChoice.Choice(fourcc: .nv12, width: 1280, height: 720, frameRate: Rational(30)))
        // Without NV12, MJPEG at 30 fps beats YUYV that only reaches 10 fps at that size.
        let withoutNV12 = V4L2ModeChoice.best(Array(modes.prefix(3)), for: .default)
        #expect(withoutNV12?.fourcc == .mjpeg)
    }

    @Test func takesTheNearestSizeWhenTheWantedOneIsNotOffered() {
        let modes = [
            V4L2Mode(fourcc: .yuyv, width: 320, height: 180, rates: Self.rates30),
            V4L2Mode(fourcc: .yuyv, width: 800, height: 600, rates: Self.rates30),
            V4L2Mode(fourcc: .yuyv, width: 3840, height: 2160, rates: Self.rates30),
        ]
        let best = V4L2ModeChoice.best(modes, for: ProgramFormat(width: 1280, height: 720, frameRate: Rational(30)))
        #expect(best?.width == 800 && best?.height == 600)
        // A stepwise range gives the program size itself.
        let stepwise = V4L2FrameSize.stepwise(minWidth: 160, maxWidth: 1920, widthStep: 16, minHeight: 120, maxHeight: 1080, heightStep: 8)
        #expect(stepwise.nearest(toWidth: 1280, height: 720) == (1280, 720))
        #expect(stepwise.nearest(toWidth: 4000, height: 100) == (1920, 120))
    }

    @Test func lighterAlternativesAreCompressedFirstThenSmaller() {
        let modes = [
            V4L2Mode(fourcc: .yuyv, width: 1280, height: 720, rates: Self.rates30),
            V4L2Mode(fourcc: .mjpeg, width: 1280, height: 720, rates: Self.rates30),
            V4L2Mode(fourcc: .yuyv, width: 640, height: 360, rates: Self.rates30),
            V4L2Mode(fourcc: .yuyv, width: 1920, height: 1080, rates: Self.rates30),
        ]
        let current = V4L2ModeChoice.Choice(fourcc: .yuyv, width: 1280, height: 720, frameRate: Rational(30))
        let lighter = V4L2ModeChoice.lighterAlternatives(to: current, in: modes, frameRate: Rational(30))
        #expect(lighter.map(\.fourcc) == [.mjpeg, .yuyv])
        #expect(lighter.last?.width == 640)
    }

    @Test func controlNamesFollowV4L2Ctl() {
        #expect("Focus, Automatic Continuous".v4l2ControlName == "focus_automatic_continuous")
        #expect("Read-Only Integer 32 Bits".v4l2ControlName == "read_only_integer_32_bits")
        #expect("Test Pattern".v4l2ControlName == "test_pattern")
    }
}
