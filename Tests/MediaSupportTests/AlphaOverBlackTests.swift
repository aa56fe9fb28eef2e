import CFFmpeg
import Testing
import StudioCore
@testable import MediaSupport

/// A yuva420p frame (a player's item with alpha) converted for a consumer without alpha (the program
/// full screen, an ISO, a console tile's JPEG) is composited over black; into yuva420p it keeps its alpha.
@Suite struct AlphaOverBlackTests {
    /// 64x32, Y 200 and U, V 60 everywhere; alpha 255 in columns 0..<16, 128 in 16..<32, 0 from 32 on.
    static func picture() -> VideoFrame {
        let frame = VideoFrame.allocate(format: .yuva420p, width: 64, height: 32)
        for (index, value) in [(0, 200), (1, 60), (2, 60)] as [(Int, UInt8)] {
            memset(frame.plane(index), Int32(value), frame.planes[index].byteCount)
        }
        for row in 0..<32 {
            let line = frame.plane(3) + row * frame.planes[3].stride
            for x in 0..<64 { line.storeBytes(of: UInt8(x < 16 ? 255 : x < 32 ? 128 : 0), toByteOffset: x, as: UInt8.self) }
        }
        return frame
    }

    static func sample(_ frame: VideoFrame, plane: Int, x: Int, y: Int) -> Int {
        Int(frame.plane(plane).load(fromByteOffset: y * frame.planes[plane].stride + x, as: UInt8.self))
    }

    @Test func intoI420ItIsOverBlack() throws {
        let output = VideoFrame.allocate(format: .i420, width: 64, height: 32)
        try FrameConverter().convert(Self.picture(), into: output)
        // Opaque: as it is; alpha 128 (weight 129 of 256): halfway to black; transparent: black.
        #expect([4, 20, 50].map { Self.sample(output, plane: 0, x: $0, y: 10) } == [200, 109, 16])
        #expect([2, 10, 25].map { Self.sample(output, plane: 1, x: $0, y: 5) } == [60, 94, 128])
    }

    @Test func intoAnAVFrameWithoutAlphaItIsOverBlack() throws {
        var allocated = av_frame_alloc()
        defer { av_frame_free(&allocated) }
        let frame = try #require(allocated)
        frame.pointee.width = 64
        frame.pointee.height = 32
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try #require(av_frame_get_buffer(frame, 32) >= 0)
        try FrameConverter().convert(Self.picture(), into: frame)
        let luma = try #require(frame.pointee.data.0)
        #expect([4, 50].map { Int(luma[10 * Int(frame.pointee.linesize.0) + $0]) } == [200, 16])
    }

    @Test func intoYUVA420PItKeepsItsAlpha() throws {
        let output = VideoFrame.allocate(format: .yuva420p, width: 32, height: 16)
        try FrameConverter().convert(Self.picture(), into: output)
        #expect(Self.sample(output, plane: 0, x: 30, y: 8) == 200)
        #expect([2, 24].map { Self.sample(output, plane: 3, x: $0, y: 8) } == [255, 0])
    }
}
