import Foundation
import StudioCore

/// Writes I420 frames as YUV4MPEG2 (ffmpeg reads it as yuv420p), so a benchmark can hand the ffmpeg CLI
/// the very pictures it measured studio on.
public final class Y4MWriter {
    private let output: FileHandle

    /// Opens (creates or truncates) `path` and writes the stream header; nil when it cannot be written.
    public init?(path: String, width: Int, height: Int, rate: Rational = Rational(30)) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let output = FileHandle(forWritingAtPath: path) else { return nil }
        self.output = output
        output.write(Data("YUV4MPEG2 W\(width) H\(height) F\(rate.numerator):\(rate.denominator) Ip A1:1 C420jpeg\n".utf8))
    }

    deinit { output.closeFile() }

    /// Appends one frame (I420 of the header's size).
    public func write(_ frame: VideoFrame) {
        var bytes = Data("FRAME\n".utf8)
        for (index, plane) in frame.planes.enumerated() {
            let rowBytes = index == 0 ? frame.width : (frame.width + 1) / 2
            for row in 0..<plane.rows { bytes.append(Data(bytes: frame.plane(index) + row * plane.stride, count: rowBytes)) }
        }
        output.write(bytes)
    }

    /// Writes `frames` (I420, all one size) to `path`, or says why not on standard error and exits 1.
    public static func write(_ frames: [VideoFrame], to path: String, tool: String) {
        guard let first = frames.first, let writer = Y4MWriter(path: path, width: first.width, height: first.height) else {
            FileHandle.standardError.write(Data("\(tool): cannot write \(path)\n".utf8))
            exit(1)
        }
        frames.forEach(writer.write)
    }
}

/// CPU seconds this process has used (all its threads).
public func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
