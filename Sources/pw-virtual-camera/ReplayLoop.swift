import Capture
import FrameDrawing
import StudioCore
import StudioSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `--replay N` (with `--format mjpeg`): the camera's JPEGs made once, before it starts, and then sent
/// in a loop. The frames are the live camera's (the pattern with its moving box and running timecode,
/// `--noise`, `--quality`), so a consumer gets the same bytes per frame as from a live camera, while
/// the producer costs almost nothing: many cameras at 720p30 on a small machine without their own
/// JPEG encoders taking the cores the benchmark measures.
struct ReplayLoop {
    /// The JPEGs, in the order rendered (frame 0 first).
    let frames: [[UInt8]]

    /// Renders and encodes `count` frames of `camera`'s pattern at `format`, each with fresh `noise`.
    static func make(camera: CameraID, format: CameraFormat, count: Int, noise: inout SensorNoise,
                     encoder: JPEGEncoder) -> ReplayLoop? {
        let pool = FramePool(capacity: VideoFrame.byteCount(format: format.pixelFormat, width: format.width, height: format.height), limit: 4)
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        var failed = false
        TestPatternCamera.renderFrames(of: camera, format: format, count: count) { pattern in
            guard !failed else { return }
            let frame = noise.amplitude > 0 ? noise.noisy(pattern, pool: pool) : pattern
            if let jpeg = encoder.encode(frame) { frames.append(jpeg) } else { failed = true }
        }
        return failed ? nil : ReplayLoop(frames: frames)
    }

    /// The JPEGs one after another in one file (a raw MJPEG stream, what `ffmpeg -f mjpeg -framerate
    /// RATE -i PATH` reads), so other programs can be fed the very same frames. Nil on success, else
    /// what went wrong.
    func write(to path: String) -> String? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return "cannot write \(path): \(String(cString: strerror(errno)))" }
        defer { close(descriptor) }
        for jpeg in frames {
            let written = jpeg.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written == jpeg.count else { return "cannot write \(path): \(String(cString: strerror(errno)))" }
        }
        return nil
    }

    /// The frame sent as the `tick`th, starting `phase` frames into the loop.
    func frame(tick: Int64, phase: Int) -> [UInt8] {
        frames[Int((tick + Int64(phase)) % Int64(frames.count))]
    }
}
