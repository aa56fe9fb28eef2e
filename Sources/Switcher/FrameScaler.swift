import CFFmpeg
import StudioCore

/// A libswscale call that failed.
public struct ScalerError: Error, Equatable, CustomStringConvertible {
    public var call: String
    public var message: String
    public init(call: String, message: String) {
        self.call = call
        self.message = message
    }
    public var description: String { "\(call): \(message)" }
}

extension PixelFormat {
    /// The FFmpeg pixel format with the same memory layout.
    var avPixelFormat: AVPixelFormat {
        switch self {
        case .i420: AV_PIX_FMT_YUV420P
        case .nv12: AV_PIX_FMT_NV12
        case .yuyv: AV_PIX_FMT_YUYV422
        case .uyvy: AV_PIX_FMT_UYVY422
        case .rgb24: AV_PIX_FMT_RGB24
        case .bgr24: AV_PIX_FMT_BGR24
        case .bgra: AV_PIX_FMT_BGRA
        case .rgba: AV_PIX_FMT_RGBA
        }
    }
}

/// Converts any camera frame to the program's size in I420 with one libswscale pass (scaling and
/// pixel-format conversion together). Owns its `SwsContext`, which `sws_getCachedContext` reuses
/// while the source format stays the same. Not thread-safe: each user (the program thread, each ISO
/// thread) owns its own.
public final class FrameScaler {
    private var context: OpaquePointer?
    private let pool: FramePool

    public let width: Int
    public let height: Int

    public init(width: Int, height: Int, pool: FramePool) {
        self.width = width
        self.height = height
        self.pool = pool
    }

    deinit { sws_freeContext(context) }

    /// A new I420 frame of the program size showing `source`. Keeps the source's capture time.
    public func convert(_ source: VideoFrame, sequence: UInt64) throws(ScalerError) -> VideoFrame {
        guard source.width > 0, source.height > 0, !source.planes.isEmpty, source.planes.count <= 4 else {
            throw ScalerError(call: "sws_scale", message: "bad source frame \(source.width)x\(source.height) with \(source.planes.count) planes")
        }
        guard let next = sws_getCachedContext(context, Int32(source.width), Int32(source.height), source.format.avPixelFormat,
                                              Int32(width), Int32(height), AV_PIX_FMT_YUV420P, SWS_BILINEAR, nil, nil, nil) else {
            throw ScalerError(call: "sws_getCachedContext",
                              message: "cannot convert \(source.format.rawValue) \(source.width)x\(source.height) to i420 \(width)x\(height)")
        }
        context = next
        let output = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool,
                                         captureTime: source.captureTime, sequence: sequence)
        var sourcePlanes = [UnsafePointer<UInt8>?](repeating: nil, count: 4)
        var sourceStrides = [Int32](repeating: 0, count: 4)
        for (index, layout) in source.planes.enumerated() {
            sourcePlanes[index] = UnsafePointer(source.plane(index).assumingMemoryBound(to: UInt8.self))
            sourceStrides[index] = Int32(layout.stride)
        }
        var outputPlanes = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        var outputStrides = [Int32](repeating: 0, count: 4)
        for (index, layout) in output.planes.enumerated() {
            outputPlanes[index] = output.plane(index).assumingMemoryBound(to: UInt8.self)
            outputStrides[index] = Int32(layout.stride)
        }
        let rows = sws_scale(next, sourcePlanes, sourceStrides, 0, Int32(source.height), outputPlanes, outputStrides)
        guard rows == Int32(height) else {
            throw ScalerError(call: "sws_scale", message: "wrote \(rows) of \(height) rows")
        }
        return output
    }
}
