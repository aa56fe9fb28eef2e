import MediaSupport
import StudioCore

/// Converts any camera frame to the program's size in I420 with one libswscale pass (scaling and
/// pixel-format conversion together), through MediaSupport's `FrameConverter`, which keeps its
/// context while the source format and size stay the same. Not thread-safe: each user (the program
/// thread, each ISO thread) owns its own.
public final class FrameScaler {
    private let converter = FrameConverter()
    private let pool: FramePool

    public let width: Int
    public let height: Int

    public init(width: Int, height: Int, pool: FramePool) {
        self.width = width
        self.height = height
        self.pool = pool
    }

    /// A new I420 frame of the program size showing `source`. Keeps the source's capture time.
    public func convert(_ source: VideoFrame, sequence: UInt64) throws(FFmpegError) -> VideoFrame {
        let output = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool,
                                         captureTime: source.captureTime, sequence: sequence)
        try converter.convert(source, into: output)
        return output
    }
}
