import Foundation
import StudioCore

/// Clips made with the ffmpeg CLI whose every picture carries its frame number, burnt in as 8 flat
/// vertical bars (bar i white when bit i of the number is set: frame numbers 0 to 255), and its item
/// as the colour of the bars' chroma (`tint`: Cb of the whole picture), decodable after x264's
/// compression. For the players' tests: which picture of which item a frame shows.
public enum NumberedClips {
    /// Writes `path`: `frames` pictures of `width`x`height` at `rate` (fps), H.264 in the container the
    /// extension names (a PNG or JPEG still: its first picture), tinted `tint` (Cb, 16...240), with a
    /// 1 kHz tone when `audio`.
    public static func make(_ path: String, frames: Int, rate: String = "30", width: Int = 320, height: Int = 180,
                            tint: Int = 128, audio: Bool = false, extra: [String] = []) throws {
        let bar = width / 8
        let video = "color=c=black:s=\(width)x\(height):r=\(rate),format=yuv420p,"
            + "geq=lum='if(bitand(N\\,pow(2\\,floor(X/\(bar))))\\,235\\,16)':cb=\(tint):cr=128"
        var arguments = ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", video]
        if audio { arguments += ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000"] }
        // A still (`.png`, `.jpg`): one picture in the format its extension names.
        let still = [".png", ".jpg", ".jpeg"].contains { path.hasSuffix($0) }
        arguments += still ? ["-frames:v", "1", "-update", "1", "-q:v", "2"]
            : ["-frames:v", "\(frames)", "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-g", "30"]
        if audio { arguments += ["-c:a", "aac", "-shortest"] }
        arguments += extra + ["-y", path]
        let process = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: arguments)
        guard process.wait(timeout: 60) == .exited(0) else {
            throw NumberedClipError("ffmpeg could not make \(path): \(process.errorText())")
        }
    }

    /// The frame number and tint a picture shows (nil: not one of these pictures, e.g. black).
    public static func read(_ frame: VideoFrame) -> (number: Int, tint: Int)? {
        guard frame.format == .i420 else { return nil }
        let luma = frame.plane(0).assumingMemoryBound(to: UInt8.self)
        let stride = frame.planes[0].stride
        let bar = frame.width / 8, row = frame.height / 2
        var number = 0
        for bit in 0..<8 {
            let value = luma[row * stride + bit * bar + bar / 2]
            guard value > 200 || value < 50 else { return nil }
            if value > 128 { number |= 1 << bit }
        }
        let chroma = frame.plane(1).assumingMemoryBound(to: UInt8.self)
        let tint = Int(chroma[(frame.height / 4) * frame.planes[1].stride + frame.width / 4])
        return (number, tint)
    }
}

extension NumberedClips {
    /// What each video frame of `file` shows (decoded by the ffmpeg CLI at 320x180), in order.
    public static func readAll(_ file: URL) throws -> [(number: Int, tint: Int)?] {
        let (width, height) = (320, 180)
        let output = try MediaProbe.run(MediaProbe.ffmpeg, ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v:0", "-fps_mode", "passthrough",
                                                            "-vf", "scale=\(width):\(height)", "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"])
        let size = width * height * 3 / 2
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        return stride(from: 0, to: output.count - size + 1, by: size).map { start in
            output.withUnsafeBytes { bytes in
                var offset = start
                for (plane, rows, columns) in [(0, height, width), (1, height / 2, width / 2), (2, height / 2, width / 2)] {
                    for row in 0..<rows {
                        memcpy(frame.plane(plane) + row * frame.planes[plane].stride, bytes.baseAddress! + offset, columns)
                        offset += columns
                    }
                }
            }
            return read(frame)
        }
    }
}

extension NumberedClips {
    /// Writes `path`: an AVI of `frames` H.264 pictures whose codec tag says AVS2, a codec libavformat
    /// knows and libavcodec 5.1 cannot decode (a file of a codec the decoder lacks).
    public static func makeUndecodable(_ path: String, frames: Int = 10) throws {
        let h264 = path + ".h264.avi"
        try make(h264, frames: frames)
        defer { try? FileManager.default.removeItem(atPath: h264) }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: h264))
        let tag = Data("H264".utf8)
        var found = 0
        while let range = bytes.range(of: tag) {
            bytes.replaceSubrange(range, with: Data("AVS2".utf8))
            found += 1
        }
        guard found > 0 else { throw NumberedClipError("no H264 tag in \(h264)") }
        try bytes.write(to: URL(fileURLWithPath: path))
    }
}

public struct NumberedClipError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
