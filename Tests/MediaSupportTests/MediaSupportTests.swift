import CFFmpeg
import Testing
import StudioCore
@testable import MediaSupport

@Suite struct PixelFormatTableTests {
    /// Every row's FFmpeg name resolves, to a distinct format, and back.
    @Test func everyFormatHasItsFFmpegPixelFormat() {
        var seen = Set<Int32>()
        for format in PixelFormat.allCases {
            let av = format.avPixelFormat
            #expect(av != AV_PIX_FMT_NONE, "\(format) has no FFmpeg pixel format")
            #expect(seen.insert(av.rawValue).inserted, "\(format) shares its FFmpeg pixel format")
            #expect(PixelFormat(avPixelFormat: av) == format)
        }
        #expect(PixelFormat.i420.avPixelFormat == AV_PIX_FMT_YUV420P && PixelFormat.yuyv.avPixelFormat == AV_PIX_FMT_YUYV422)
        #expect(PixelFormat(avPixelFormat: AV_PIX_FMT_YUVJ422P) == nil)
    }

    /// The table's plane geometry says what libavutil says about the same FFmpeg format: plane count,
    /// bytes per row and rows of each plane (for odd and even sizes).
    @Test func planeGeometryAgreesWithLibavutil() {
        for format in PixelFormat.allCases {
            for (width, height) in [(640, 360), (322, 242), (1920, 1080)] {
                var lineSizes = [Int32](repeating: 0, count: 4)
                #expect(av_image_fill_linesizes(&lineSizes, format.avPixelFormat, Int32(width)) >= 0)
                let planes = lineSizes.filter { $0 > 0 }.map(Int.init)
                #expect(format.rowBytes(width: width) == planes, "\(format) \(width)")
                let layouts = format.planeLayouts(width: width, height: height, alignment: 1)
                #expect(layouts.map(\.stride) == planes)
                var sizes = [Int](repeating: 0, count: 4)
                var linesizes = [Int](repeating: 0, count: 4)
                for index in 0..<4 { linesizes[index] = Int(lineSizes[index]) }
                #expect(av_image_fill_plane_sizes(&sizes, format.avPixelFormat, Int32(height), &linesizes) >= 0)
                #expect(layouts.map(\.byteCount) == sizes.filter { $0 > 0 }, "\(format) \(width)x\(height)")
            }
        }
    }
}

@Suite struct FFmpegErrorTests {
    @Test func checkThrowsNegativeResultsWithTheirText() {
        #expect(throws: Never.self) { try check("fine", 3) }
        let error = #expect(throws: FFmpegError.self) { try check("avio_open2", FFmpegError.tryAgain) }
        #expect(error?.call == "avio_open2" && error?.code == FFmpegError.tryAgain && error?.message.isEmpty == false)
        #expect(error?.description.hasPrefix("avio_open2: ") == true && error?.description.hasSuffix("(\(FFmpegError.tryAgain))") == true)
        let made = FFmpegError(call: "X264Encoder", message: "frame size 3x3 must be even")
        #expect(made.description == "X264Encoder: frame size 3x3 must be even")
        #expect(FFmpegError.outOfMemory("av_frame_alloc").code == cff_averror(ENOMEM))
    }
}

@Suite struct CodecSessionTests {
    @Test func missingEncoderIsNamed() {
        let error = #expect(throws: FFmpegError.self) { try CodecSession(encoderNamed: "no-such-encoder") }
        #expect(error?.call == "avcodec_find_encoder_by_name" && error?.message.contains("no-such-encoder") == true)
    }

    /// An MJPEG picture made by one session decodes in another and converts back to the same picture.
    @Test func encodesAndDecodesAPictureRoundTrip() throws {
        let width = 64, height = 48
        let encoder = try CodecSession(AV_CODEC_ID_MJPEG, decoder: false)
        encoder.context.pointee.width = Int32(width)
        encoder.context.pointee.height = Int32(height)
        encoder.context.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        encoder.context.pointee.time_base = AVRational(num: 1, den: 30)
        try encoder.open("mjpeg")
        let frame = encoder.frame
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
        try check("av_frame_get_buffer", av_frame_get_buffer(frame, 32))
        for plane in 0..<3 {
            let rows = plane == 0 ? height : height / 2
            let stride = withUnsafeBytes(of: frame.pointee.linesize) { Int($0.bindMemory(to: Int32.self)[plane]) }
            cff_frame_plane(frame, Int32(plane)).update(repeating: plane == 0 ? 200 : 128, count: stride * rows)
        }
        frame.pointee.pts = 0
        try encoder.send(frame)
        let jpeg = try #require(try encoder.receivePackets { copiedBytes($0.pointee.data, count: $0.pointee.size) }.first)
        #expect(jpeg.prefix(2) == [0xFF, 0xD8])

        let decoder = try CodecSession(AV_CODEC_ID_MJPEG, decoder: true)
        try decoder.open("mjpeg")
        let decoded = try jpeg.withUnsafeBytes { try decoder.decode($0) }
        defer { av_frame_unref(decoded) }
        #expect(decoded.pointee.width == Int32(width) && decoded.pointee.height == Int32(height))
        let output = VideoFrame.allocate(format: .i420, width: width / 2, height: height / 2)
        try FrameConverter().convert(decoded, into: output)
        // Full-range 200 becomes limited-range 16 + 200 * 219 / 255 = 188.
        let luma = output.plane(0).assumingMemoryBound(to: UInt8.self)
        #expect(abs(Int(luma[5 * output.planes[0].stride + 5]) - 188) <= 3)
        // Garbage fails and leaves the decoder usable.
        #expect(throws: FFmpegError.self) { try [UInt8](repeating: 7, count: 64).withUnsafeBytes { try decoder.decode($0) } }
        let again = try jpeg.withUnsafeBytes { try decoder.decode($0) }
        av_frame_unref(again)
    }

    @Test func converterRefusesAFrameWithoutPlanes() {
        let source = VideoFrame(format: .yuyv, width: 0, height: 0, planes: [], storage: FrameStorage(capacity: 0), captureTime: 0, sequence: 0)
        let error = #expect(throws: FFmpegError.self) { try FrameConverter().convert(source, into: VideoFrame.allocate(format: .i420, width: 16, height: 16)) }
        #expect(error?.call == "sws_scale")
    }
}

@Suite struct FFmpegLoggingTests {
    @Test func linesAreTrimmedAndEmptyOnesDropped() {
        #expect("  [mjpeg @ 0x1] bad marker\n".withCString { FFmpegLogging.text(of: $0) } == "[mjpeg @ 0x1] bad marker")
        #expect(" \n".withCString { FFmpegLogging.text(of: $0) } == nil)
    }
}

@Suite struct JPEGThumbnailerTests {
    /// A flat limited-range picture of `format` and size, luma `y`, chroma `u`/`v` (planar and packed
    /// 4:2:x formats only).
    static func flat(_ format: PixelFormat, width: Int, height: Int, y: UInt8, u: UInt8, v: UInt8) -> VideoFrame {
        let frame = VideoFrame.allocate(format: format, width: width, height: height)
        switch format {
        case .i420:
            for (index, value) in [y, u, v].enumerated() { frame.plane(index).initializeMemory(as: UInt8.self, repeating: value, count: frame.planes[index].byteCount) }
        case .nv12:
            frame.plane(0).initializeMemory(as: UInt8.self, repeating: y, count: frame.planes[0].byteCount)
            let chroma = frame.plane(1).assumingMemoryBound(to: UInt8.self)
            for index in stride(from: 0, to: frame.planes[1].byteCount - 1, by: 2) { chroma[index] = u; chroma[index + 1] = v }
        default:
            let bytes = frame.plane(0).assumingMemoryBound(to: UInt8.self)
            for index in stride(from: 0, to: frame.planes[0].byteCount - 3, by: 4) {
                (bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3]) = format == .yuyv ? (y, u, y, v) : (u, y, v, y)
            }
        }
        return frame
    }

    /// Any pipeline format comes out as a baseline JPEG 320 wide with the source's aspect, in full range
    /// (a limited-range grey of 126 decodes to 128, black 16 to 0).
    @Test func scalesAnyFormatTo320WideInFullRange() throws {
        let thumbnailer = JPEGThumbnailer(width: 320)
        let decoder = try CodecSession(AV_CODEC_ID_MJPEG, decoder: true)
        try decoder.open("mjpeg")
        for (format, width, height, expected) in [(PixelFormat.i420, 1280, 720, (320, 180)), (.nv12, 640, 480, (320, 240)),
                                                  (.yuyv, 1920, 1080, (320, 180)), (.uyvy, 720, 576, (320, 256)),
                                                  (.i420, 160, 120, (160, 120))] {
            for (luma, full) in [(UInt8(126), 128), (16, 0)] {
                let made = try thumbnailer.encode(Self.flat(format, width: width, height: height, y: luma, u: 128, v: 128))
                #expect(made.width == expected.0 && made.height == expected.1, "\(format) \(width)x\(height)")
                #expect(made.jpeg.prefix(2) == [0xFF, 0xD8])
                let decoded = try made.jpeg.withUnsafeBytes { try decoder.decode($0) }
                defer { av_frame_unref(decoded) }
                #expect(decoded.pointee.width == Int32(expected.0) && decoded.pointee.height == Int32(expected.1))
                #expect(decoded.pointee.format == AV_PIX_FMT_YUVJ420P.rawValue)
                let sample = Int(cff_frame_plane(decoded, 0)[Int(decoded.pointee.linesize.0) * expected.1 / 2 + expected.0 / 2])
                #expect(abs(sample - full) <= 2, "\(format): luma \(luma) became \(sample), not \(full)")
            }
        }
    }
}
