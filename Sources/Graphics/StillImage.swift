import CFFmpeg
import Foundation
import MediaSupport
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// A PNG or JPEG file decoded once, at config load or reload, into a picture the compositor layers as it
/// is on every frame: I420 plus the PNG's transparency (RGBA, grey + alpha, palette with tRNS) as the
/// alpha plane. Decoded with libavcodec, converted (and scaled, when a size is given) with libswscale in
/// one pass. An image without transparency, or whose every pixel is opaque, has no alpha plane, so the
/// compositor copies it instead of blending.
public struct StillImage: Sendable {
    /// The file, as the config named it.
    public let path: String
    /// The file's own picture size (before scaling).
    public let sourceWidth: Int
    public let sourceHeight: Int
    /// The picture, at the size asked for or the file's own.
    public let picture: KeyedPicture

    /// Reads and decodes `path`, scaled to `size` when one is given (any aspect: the caller fits it).
    /// Reads the file and decodes it on the calling thread: never call it from a media thread.
    public init(contentsOf path: String, size: (width: Int, height: Int)? = nil) throws(GraphicsError) {
        if let size, !GraphicsLimits.allows(width: size.width, height: size.height) {
            throw .badSize(width: size.width, height: size.height)
        }
        let file = try ImageFile(path: path)
        self.path = path
        // Data.withUnsafeBytes rethrows untyped errors: the typed one comes out as a Result.
        let loaded = file.data.withUnsafeBytes { bytes in
            Result { () throws(GraphicsError) -> (ImageHeader, KeyedPicture) in
                let header = try ImageHeader.read(bytes, path: path)
                guard GraphicsLimits.allows(width: header.width, height: header.height) else {
                    let side = GraphicsLimits.maxSide
                    throw .imageTooLarge(path: path, what: "\(header.width)x\(header.height) pixels", limit: "\(side)x\(side)")
                }
                return (header, try Self.decode(bytes, header: header, path: path,
                                                width: size?.width ?? header.width, height: size?.height ?? header.height))
            }
        }
        let (header, picture) = try loaded.get()
        sourceWidth = header.width
        sourceHeight = header.height
        self.picture = picture
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, path: String,
                               width: Int, height: Int) throws(GraphicsError) -> KeyedPicture {
        let output = VideoFrame.allocate(format: .i420, width: width, height: height)
        let converter = FrameConverter()
        do {
            let session = try CodecSession(header.kind.codecID, decoder: true)
            // libavcodec refuses anything larger than the header said we allow (a lying header).
            session.context.pointee.max_pixels = Int64(GraphicsLimits.maxSide * GraphicsLimits.maxSide)
            try session.open(header.kind == .png ? "png" : "mjpeg")
            let frame = try session.decode(bytes)
            defer { av_frame_unref(frame) }
            guard hasAlpha(AVPixelFormat(rawValue: frame.pointee.format)) else {
                try converter.convert(frame, into: output)
                return KeyedPicture(picture: output, alpha: nil)
            }
            // libswscale writes the alpha rows at a 32-byte-aligned stride; the plane is then packed.
            let stride = (width + 31) & ~31
            let padded = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * height)
            defer { padded.deallocate() }
            try converter.convert(frame, into: output, alpha: padded, alphaStride: stride)
            var alpha = [UInt8](repeating: 0, count: width * height)
            alpha.withUnsafeMutableBufferPointer { packed in
                for row in 0..<height {
                    (packed.baseAddress! + row * width).update(from: padded + row * stride, count: width)
                }
            }
            return KeyedPicture(picture: output, alpha: alpha.allSatisfy { $0 == 255 } ? nil : alpha)
        } catch where error.call == "avcodec_send_packet" || error.call == "avcodec_receive_frame" {
            throw .notAnImage(path: path, reason: "libavcodec cannot decode it (\(error.message))")
        } catch {
            throw .imageFailed(path: path, reason: error.description)
        }
    }
}

/// A whole file's bytes, read (mapped where the system can) after `stat` has said it is a regular file
/// within `GraphicsLimits.maxFileBytes`.
private struct ImageFile {
    let data: Data

    init(path: String) throws(GraphicsError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .imageNotFound(path: path) }
            throw .imageUnreadable(path: path, reason: String(cString: strerror(code)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .imageUnreadable(path: path, reason: "it is not a regular file") }
        guard status.st_size > 0 else { throw .notAnImage(path: path, reason: "the file is empty") }
        guard status.st_size <= GraphicsLimits.maxFileBytes else {
            throw .imageTooLarge(path: path, what: "\(status.st_size >> 20) MiB", limit: "\(GraphicsLimits.maxFileBytes >> 20) MiB")
        }
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            let reason = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError).map { String(cString: strerror(Int32($0.code))) }
            throw .imageUnreadable(path: path, reason: reason ?? "\(error)")
        }
    }
}
