import Testing
import CFFmpeg
import Capture
import MediaSupport
import StudioCore
import Encoding

/// x264 at the program's settings when a mix has emptied its rate buffer: the scenes end-to-end test's
/// case, rebuilt from the same test-pattern pictures. A still picture lets CBR drift to a very low
/// quantiser; then a mix changes every pixel on every frame, each frame several times its share of the
/// bit rate, and the GOP's keyframe falls on the mix's 14th frame with the buffer empty. x264 may then
/// use its quantisers above H.264's 51 ("emergency" ones, up to 69) and at the highest it codes a whole
/// slice with no residual at all: the top slice decoded as flat mid-grey (Y, U, V 128).
@Suite struct RateBufferTests {
    static let settings = VideoEncoderSettings(width: 640, height: 360, frameRate: Rational(30), bitRate: 1_500_000,
                                               preset: "ultrafast", keyframeIntervalSeconds: 2)

    @Test func aKeyframeAfterAMixThatEmptiedTheRateBufferShowsItsWholePicture() throws {
        let settings = Self.settings
        try #require(settings.keyframeIntervalFrames == 60)
        let cam1 = try Self.pattern("cam1"), cam2 = try Self.pattern("cam2")
        // A: cam1 full frame. B: the interview scene, the middle half of each camera side by side.
        let a = try Self.scaled(cam1, width: 640, height: 360)
        let b = VideoFrame.allocate(format: .i420, width: 640, height: 360)
        for (index, camera) in [cam1, cam2].enumerated() {
            let middle = try #require(camera.region(PixelRect(x: 320, y: 0, width: 640, height: 720)))
            let half = try #require(b.region(PixelRect(x: index * 320, y: 0, width: 320, height: 360)))
            try FrameConverter().convert(middle, into: half)
        }
        // 47 frames of A, then a 15-frame mix to B: frame 60, the GOP's keyframe, is the mix's 14th.
        let encoder = try X264Encoder(settings: settings)
        var packets: [EncodedPacket] = []
        var sources: [VideoFrame] = []
        for n in 0...60 {
            let step = n - 46
            let frame = step <= 0 ? a : Self.mix(a, b, weight: (step * 256 + 7) / 15)
            sources.append(frame)
            packets += try encoder.encode(frame, pts: MediaTime(count: Int64(n), rate: settings.frameRate), forceKeyframe: false)
        }
        try #require(packets.count == 61)
        #expect(packets[60].isKeyframe)

        // Each 16-row band of the decoded keyframe is close to its source (a grey band: about 26 off).
        let decoded = try Self.decodeKeyframe(packets[60].data, extradata: encoder.streamDescription.extradata)
        let source = sources[60]
        var bands: [Double] = []
        for top in stride(from: 0, to: 360, by: 16) {
            var sum = 0, count = 0
            for row in top..<min(360, top + 16) {
                let s = source.plane(0).assumingMemoryBound(to: UInt8.self) + row * source.planes[0].stride
                for x in 0..<640 {
                    sum += abs(Int(s[x]) - Int(decoded.luma[row * 640 + x]))
                    count += 1
                }
            }
            bands.append(Double(sum) / Double(count))
        }
        #expect(bands.allSatisfy { $0 < 12 }, "mean luma error per 16-row band: \(bands.map { ($0 * 10).rounded() / 10 })")
    }

    /// Frame 0 of a test-pattern camera's picture, 1280x720 I420 (the end-to-end test's cameras).
    static func pattern(_ name: String) throws -> VideoFrame {
        var first: VideoFrame?
        TestPatternCamera.renderFrames(of: CameraID(name), count: 1) { first = $0 }
        return try #require(first)
    }

    static func scaled(_ frame: VideoFrame, width: Int, height: Int) throws -> VideoFrame {
        let output = VideoFrame.allocate(format: .i420, width: width, height: height)
        try FrameConverter().convert(frame, into: output)
        return output
    }

    /// `a + (b - a) * weight / 256`, every sample (as the switcher's mix).
    static func mix(_ a: VideoFrame, _ b: VideoFrame, weight: Int) -> VideoFrame {
        let output = VideoFrame.allocate(format: .i420, width: a.width, height: a.height)
        for plane in 0..<3 {
            let rows = plane == 0 ? a.height : a.height / 2, width = plane == 0 ? a.width : a.width / 2
            for row in 0..<rows {
                let pa = a.plane(plane).assumingMemoryBound(to: UInt8.self) + row * a.planes[plane].stride
                let pb = b.plane(plane).assumingMemoryBound(to: UInt8.self) + row * b.planes[plane].stride
                let out = output.plane(plane).assumingMemoryBound(to: UInt8.self) + row * output.planes[plane].stride
                for x in 0..<width { out[x] = UInt8((Int(pa[x]) * (256 - weight) + Int(pb[x]) * weight + 128) >> 8) }
            }
        }
        return output
    }

    /// Decodes one IDR access unit (length-prefixed, as the encoder delivers it) with libavcodec's H.264
    /// decoder; its luma, 640 bytes a row.
    static func decodeKeyframe(_ data: [UInt8], extradata: [UInt8]) throws -> (luma: [UInt8], width: Int, height: Int) {
        let session = try CodecSession(AV_CODEC_ID_H264, decoder: true)
        let padded = extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        let header = try #require(av_mallocz(padded)).assumingMemoryBound(to: UInt8.self)
        header.update(from: extradata, count: extradata.count)
        session.context.pointee.extradata = header
        session.context.pointee.extradata_size = Int32(extradata.count)
        session.context.pointee.thread_count = 1
        session.context.pointee.flags |= Int32(AV_CODEC_FLAG_LOW_DELAY)
        try session.open("h264 decoder")
        let frame = try data.withUnsafeBytes { try session.decode($0) }
        defer { av_frame_unref(frame) }
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        try #require(width == 640 && height == 360 && frame.pointee.format == AV_PIX_FMT_YUV420P.rawValue)
        let plane = try #require(cff_frame_plane(frame, 0))
        let stride = Int(frame.pointee.linesize.0)
        var luma: [UInt8] = []
        luma.reserveCapacity(width * height)
        for row in 0..<height { luma += UnsafeBufferPointer(start: plane + row * stride, count: width) }
        return (luma, width, height)
    }
}
