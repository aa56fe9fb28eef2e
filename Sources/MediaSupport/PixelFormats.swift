import CFFmpeg
import StudioCore

extension PixelFormat {
    /// Each row's FFmpeg name resolved once (`av_get_pix_fmt`); a name libavutil does not know is a bug
    /// in `PixelFormat.table` (MediaSupportTests resolve every row).
    private static let avFormats: [PixelFormat: AVPixelFormat] = Dictionary(uniqueKeysWithValues: table.map { row in
        (row.format, av_get_pix_fmt(row.ffmpegName))
    })

    /// The FFmpeg pixel format with the same memory layout (`AV_PIX_FMT_NONE` only for a broken table row).
    public var avPixelFormat: AVPixelFormat { Self.avFormats[self] ?? AV_PIX_FMT_NONE }

    /// The pipeline format with the same memory layout as `avPixelFormat`, if any.
    public init?(avPixelFormat: AVPixelFormat) {
        guard let match = Self.avFormats.first(where: { $0.value == avPixelFormat })?.key else { return nil }
        self = match
    }
}

/// Whether FFmpeg's `format` may carry transparency: an alpha channel (yuva420p, argb, rgba, ProRes
/// 4444's yuva444p12le...) or a palette (pal8: a PNG's tRNS gives its entries alpha).
public func hasAlpha(_ format: AVPixelFormat) -> Bool {
    av_pix_fmt_desc_get(format).map { ($0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA | AV_PIX_FMT_FLAG_PAL)) != 0 } ?? false
}

/// FFmpeg's name of `format` (`yuv420p`, `yuvj422p`...), or its number.
func name(of format: AVPixelFormat) -> String {
    av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "pixel format \(format.rawValue)"
}

/// Converts pictures into `VideoFrame`s with libswscale (scaling and pixel-format conversion in one
/// pass). Owns its `SwsContext`, made again only when the source or output size or format changes (not
/// sws_getCachedContext: libswscale rewrites a yuvj* source format to the plain one inside the context,
/// so a cached context never matched a JPEG's and a new one was made, and logged, for every frame).
/// A pipeline frame with alpha (`PixelFormat.hasAlpha`: yuva420p) converted to a format without is
/// composited over black first (`AlphaOverBlack`); converted to a format with alpha, it keeps it.
/// Not thread-safe: each user owns its own.
public final class FrameConverter {
    private var context: OpaquePointer?
    private var key: [Int32] = []
    private var overBlack = AlphaOverBlack()

    public init() {}

    deinit { sws_freeContext(context) }

    /// Converts `source` (any pipeline format and size) into `output`'s format and size.
    public func convert(_ source: VideoFrame, into output: VideoFrame) throws(FFmpegError) {
        let source = output.format.hasAlpha ? source : overBlack.flattened(source)
        let (planes, strides) = try Self.pointers(of: source)
        try scale(planes, strides, width: source.width, height: source.height, format: source.format.avPixelFormat, into: output)
    }

    /// Converts `source` (any pipeline format and size) into a libavcodec picture with its buffers
    /// allocated (its `width`, `height` and `format` say what to make, e.g. `yuvj420p` for a JPEG encoder:
    /// libswscale converts the range too, as the formats differ).
    public func convert(_ source: VideoFrame, into frame: UnsafeMutablePointer<AVFrame>) throws(FFmpegError) {
        let source = hasAlpha(AVPixelFormat(rawValue: frame.pointee.format)) ? source : overBlack.flattened(source)
        let (planes, strides) = try Self.pointers(of: source)
        var outputPlanes = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        for index in 0..<4 { outputPlanes[index] = cff_frame_plane(frame, Int32(index)) }
        let outputStrides = withUnsafeBytes(of: frame.pointee.linesize) { Array($0.bindMemory(to: Int32.self).prefix(4)) }
        try scale(planes, strides, width: source.width, height: source.height, format: source.format.avPixelFormat,
                  to: (outputPlanes, outputStrides, Int(frame.pointee.width), Int(frame.pointee.height),
                       AVPixelFormat(rawValue: frame.pointee.format)))
    }

    /// The planes and strides of `source` as libswscale takes them.
    private static func pointers(of source: VideoFrame) throws(FFmpegError) -> ([UnsafePointer<UInt8>?], [Int32]) {
        guard source.width > 0, source.height > 0, !source.planes.isEmpty, source.planes.count <= 4 else {
            throw FFmpegError(call: "sws_scale", message: "bad source frame \(source.width)x\(source.height) with \(source.planes.count) planes")
        }
        var planes = [UnsafePointer<UInt8>?](repeating: nil, count: 4)
        var strides = [Int32](repeating: 0, count: 4)
        for (index, layout) in source.planes.enumerated() {
            planes[index] = UnsafePointer(source.plane(index).assumingMemoryBound(to: UInt8.self))
            strides[index] = Int32(layout.stride)
        }
        return (planes, strides)
    }

    /// Converts a decoded libavcodec picture into `output`'s format and size.
    public func convert(_ frame: UnsafePointer<AVFrame>, into output: VideoFrame) throws(FFmpegError) {
        try convert(frame, into: output, alpha: nil)
    }

    /// Converts a decoded libavcodec picture with transparency into `output` (I420) and its alpha, in one
    /// pass (libswscale's yuva420p with the fourth plane apart): `alpha` gets `output.height` rows of
    /// `output.width` bytes, `alphaStride` apart (a multiple of 16 keeps libswscale on its fast path).
    public func convert(_ frame: UnsafePointer<AVFrame>, into output: VideoFrame, alpha: UnsafeMutablePointer<UInt8>,
                        alphaStride: Int) throws(FFmpegError) {
        guard output.format == .i420, alphaStride >= output.width else {
            throw FFmpegError(call: "sws_scale", message: "alpha goes with an I420 output, \(alphaStride) bytes a row for \(output.width) pixels")
        }
        try convert(frame, into: output, alpha: (alpha, Int32(alphaStride)))
    }

    private func convert(_ frame: UnsafePointer<AVFrame>, into output: VideoFrame,
                         alpha: (plane: UnsafeMutablePointer<UInt8>, stride: Int32)?) throws(FFmpegError) {
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        guard width > 0, height > 0 else { throw FFmpegError(call: "sws_scale", message: "no picture size") }
        var planes = [UnsafePointer<UInt8>?](repeating: nil, count: 4)
        for index in 0..<4 { planes[index] = UnsafePointer(cff_frame_plane(frame, Int32(index))) }
        let strides = withUnsafeBytes(of: frame.pointee.linesize) { Array($0.bindMemory(to: Int32.self).prefix(4)) }
        try scale(planes, strides, width: width, height: height, format: AVPixelFormat(rawValue: frame.pointee.format), into: output,
                  alpha: alpha)
    }

    private func scale(_ sourcePlanes: [UnsafePointer<UInt8>?], _ sourceStrides: [Int32], width: Int, height: Int,
                       format: AVPixelFormat, into output: VideoFrame,
                       alpha: (plane: UnsafeMutablePointer<UInt8>, stride: Int32)? = nil) throws(FFmpegError) {
        var outputPlanes = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        var outputStrides = [Int32](repeating: 0, count: 4)
        for (index, layout) in output.planes.enumerated() {
            outputPlanes[index] = output.plane(index).assumingMemoryBound(to: UInt8.self)
            outputStrides[index] = Int32(layout.stride)
        }
        if let alpha {
            outputPlanes[3] = alpha.plane
            outputStrides[3] = alpha.stride
        }
        try scale(sourcePlanes, sourceStrides, width: width, height: height, format: format,
                  to: (outputPlanes, outputStrides, output.width, output.height, alpha == nil ? output.format.avPixelFormat : AV_PIX_FMT_YUVA420P))
    }

    /// What `scale` writes: planes, strides, size and format of the output picture.
    private typealias Destination = (planes: [UnsafeMutablePointer<UInt8>?], strides: [Int32], width: Int, height: Int, format: AVPixelFormat)

    private func scale(_ sourcePlanes: [UnsafePointer<UInt8>?], _ sourceStrides: [Int32], width: Int, height: Int,
                       format: AVPixelFormat, to output: Destination) throws(FFmpegError) {
        let outputFormat = output.format
        let wanted = [Int32(width), Int32(height), format.rawValue, Int32(output.width), Int32(output.height), outputFormat.rawValue]
        if wanted != key {
            sws_freeContext(context)
            context = Self.makeContext(width: width, height: height, format: format,
                                       outputWidth: output.width, outputHeight: output.height, outputFormat: outputFormat)
            key = context == nil ? [] : wanted
        }
        guard let context else {
            throw FFmpegError(call: "sws_getContext",
                              message: "cannot convert \(name(of: format)) \(width)x\(height) to \(name(of: outputFormat)) \(output.width)x\(output.height)")
        }
        let rows = sws_scale(context, sourcePlanes, sourceStrides, 0, Int32(height), output.planes, output.strides)
        guard rows == Int32(output.height) else {
            throw FFmpegError(call: "sws_scale", message: "wrote \(rows) of \(output.height) rows")
        }
    }

    /// A bilinear scaler, as `sws_getContext` makes it, except that a full-range `yuvj*` format is given
    /// as its plain format with the range set before the scaler initialises: the same conversion (libswscale
    /// does that mapping itself), without its "deprecated pixel format used" warning for every scaler
    /// (every JPEG camera's and every console tile's).
    private static func makeContext(width: Int, height: Int, format: AVPixelFormat,
                                    outputWidth: Int, outputHeight: Int, outputFormat: AVPixelFormat) -> OpaquePointer? {
        let source = plainFormat(format), output = plainFormat(outputFormat)
        guard let context = sws_alloc_context() else { return nil }
        let options: [(String, Int64)] = [
            ("srcw", Int64(width)), ("srch", Int64(height)), ("src_format", Int64(source.format.rawValue)),
            ("src_range", source.fullRange ? 1 : 0),
            ("dstw", Int64(outputWidth)), ("dsth", Int64(outputHeight)), ("dst_format", Int64(output.format.rawValue)),
            ("dst_range", output.fullRange ? 1 : 0), ("sws_flags", Int64(SWS_BILINEAR)),
        ]
        for (name, value) in options where av_opt_set_int(UnsafeMutableRawPointer(context), name, value, 0) < 0 {
            sws_freeContext(context)
            return nil
        }
        guard sws_init_context(context, nil, nil) >= 0 else {
            sws_freeContext(context)
            return nil
        }
        return context
    }

    /// The plain format of a `yuvj*` one, and whether it was full range.
    private static func plainFormat(_ format: AVPixelFormat) -> (format: AVPixelFormat, fullRange: Bool) {
        switch format {
        case AV_PIX_FMT_YUVJ420P: (AV_PIX_FMT_YUV420P, true)
        case AV_PIX_FMT_YUVJ422P: (AV_PIX_FMT_YUV422P, true)
        case AV_PIX_FMT_YUVJ444P: (AV_PIX_FMT_YUV444P, true)
        case AV_PIX_FMT_YUVJ440P: (AV_PIX_FMT_YUV440P, true)
        case AV_PIX_FMT_YUVJ411P: (AV_PIX_FMT_YUV411P, true)
        default: (format, false)
        }
    }
}
