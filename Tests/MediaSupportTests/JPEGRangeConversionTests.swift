import CFFmpeg
import Foundation
import Testing
import StudioCore
import TestSupport
import PixelKernels
@testable import MediaSupport

/// The vector conversion of decoded webcam JPEGs (full-range 4:2:2 and 4:2:0) to the pipeline's I420,
/// against libswscale's conversion of the same pictures: noisy camera-like JPEGs made by the ffmpeg CLI.
@Suite struct JPEGRangeConversionTests {
    /// A 1280x720 JPEG of a moving test picture with sensor-like noise, at a webcam's quality.
    static func makeJPEG(pixelFormat: String, size: String = "1280x720") throws -> [UInt8] {
        let data = try MediaProbe.run(MediaProbe.ffmpeg, ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                                                          "testsrc2=size=\(size):rate=30,noise=alls=20:allf=t", "-frames:v", "1",
                                                          "-pix_fmt", pixelFormat, "-q:v", "3", "-f", "mjpeg", "-"])
        return [UInt8](data)
    }

    /// The greatest and the mean absolute difference between two pictures' `planes`, over `a`'s size.
    static func difference(_ a: VideoFrame, _ b: VideoFrame, planes: [Int] = [0, 1, 2]) -> (maximum: Int, mean: Double) {
        var maximum = 0, total = 0, count = 0
        for plane in planes {
            let rows = plane == 0 ? a.height : (a.height + 1) / 2, columns = plane == 0 ? a.width : (a.width + 1) / 2
            for row in 0..<rows {
                for column in 0..<columns {
                    let x = Int(a.plane(plane).load(fromByteOffset: row * a.planes[plane].stride + column, as: UInt8.self))
                    let y = Int(b.plane(plane).load(fromByteOffset: row * b.planes[plane].stride + column, as: UInt8.self))
                    maximum = max(maximum, abs(x - y))
                    total += abs(x - y)
                    count += 1
                }
            }
        }
        return (maximum, Double(total) / Double(count))
    }

    @Test(arguments: [("yuvj422p", AV_PIX_FMT_YUVJ422P), ("yuvj420p", AV_PIX_FMT_YUVJ420P)])
    func convertsAsLibswscaleDoes(pixelFormat: String, decoded: AVPixelFormat) throws {
        let jpeg = try Self.makeJPEG(pixelFormat: pixelFormat)
        let session = try CodecSession(AV_CODEC_ID_MJPEG, decoder: true)
        try session.open("mjpeg")
        let frame = try jpeg.withUnsafeBytes { try session.decode($0) }
        defer { av_frame_unref(frame) }
        #expect(frame.pointee.format == decoded.rawValue)
        let fast = VideoFrame.allocate(format: .i420, width: 1280, height: 720)
        let reference = VideoFrame.allocate(format: .i420, width: 1280, height: 720)
        #expect(JPEGRangeConversion.convert(frame, into: fast))
        try FrameConverter().convert(frame, into: reference)
        // Luma: the same range conversion, to the rounding.
        let luma = Self.difference(fast, reference, planes: [0])
        #expect(luma.maximum <= 1 && luma.mean < 0.1, "\(pixelFormat) luma: greatest difference \(luma.maximum), mean \(luma.mean)")
        // Chroma: 4:2:0 as is, the same to the rounding; 4:2:2 halved vertically, by the mean of each
        // row pair here and by libswscale's wider bilinear filter there: on noise they differ where the
        // noise does, little on average.
        let chroma = Self.difference(fast, reference, planes: [1, 2])
        let (maximum, mean) = decoded == AV_PIX_FMT_YUVJ420P ? (1, 0.1) : (40, 2.0)
        #expect(chroma.maximum <= maximum && chroma.mean < mean, "\(pixelFormat) chroma: greatest difference \(chroma.maximum), mean \(chroma.mean)")
        // And exactly the formula, sample by sample, from the decoded planes (the vector loop and its
        // tail against plain arithmetic).
        for plane in 1...2 {
            let source = try #require(cff_frame_plane(frame, Int32(plane)))
            let stride = withUnsafeBytes(of: frame.pointee.linesize) { Int($0.load(fromByteOffset: plane * 4, as: Int32.self)) }
            for row in 0..<360 {
                for column in 0..<640 {
                    let rows = decoded == AV_PIX_FMT_YUVJ420P ? (row, row) : (2 * row, 2 * row + 1)
                    let mean = (Int(source[rows.0 * stride + column]) + Int(source[rows.1 * stride + column]) + 1) / 2
                    let expected = (mean * 224 + 3968 + 127) / 255
                    let got = Int(fast.plane(plane).load(fromByteOffset: row * fast.planes[plane].stride + column, as: UInt8.self))
                    guard got == expected else {
                        Issue.record("\(pixelFormat) plane \(plane) (\(column), \(row)): \(got), the formula says \(expected)")
                        return
                    }
                }
            }
        }

        // A smaller output (a reduced decode's odd side cut to even) is the top-left of the same picture.
        let cropped = VideoFrame.allocate(format: .i420, width: 1278, height: 718)
        #expect(JPEGRangeConversion.convert(frame, into: cropped))
        #expect(Self.difference(cropped, fast).maximum == 0)
        // Larger than the picture, or another format: not this conversion's job.
        #expect(!JPEGRangeConversion.convert(frame, into: VideoFrame.allocate(format: .i420, width: 1282, height: 720)))
        #expect(!JPEGRangeConversion.convert(frame, into: VideoFrame.allocate(format: .nv12, width: 1280, height: 720)))
    }

    /// The formulas at the ends of the range: full black and white to 16 and 235, chroma 0 and 255 to 16 and 240.
    @Test func theRangeEndsMapToTheLimitedRange() {
        #expect(FullRangeRows.luma(0) == 16 && FullRangeRows.luma(255) == 235 && FullRangeRows.luma(128) == 126)
        #expect(FullRangeRows.chroma(0, 0) == 16 && FullRangeRows.chroma(255, 255) == 240 && FullRangeRows.chroma(128, 128) == 128)
        #expect(FullRangeRows.chroma(100, 101) == FullRangeRows.chroma(101, 101), "the mean of two rows rounds up")
    }
}
