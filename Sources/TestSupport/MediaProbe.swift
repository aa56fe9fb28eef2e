import Foundation
import StudioSystem

/// Reads media files with the ffprobe/ffmpeg command-line tools (Debian's `ffmpeg` package), so tests
/// check what a real player would see.
public enum MediaProbe {
    public struct Failure: Error, CustomStringConvertible {
        public let command: String
        public let message: String
        public var description: String { "\(command): \(message)" }
    }

    public struct Stream: Sendable, Equatable {
        public var index: Int
        public var codecType: String
        public var codecName: String
        public var width: Int
        public var height: Int
        public var sampleRate: Int
        public var channels: Int
        /// Seconds per timestamp unit.
        public var timeBase: Double
    }

    public struct Packet: Sendable, Equatable {
        public var streamIndex: Int
        public var codecType: String
        /// Timestamps in milliseconds (nil when the container has none).
        public var ptsMilliseconds: Double?
        public var dtsMilliseconds: Double?
        public var durationMilliseconds: Double?
        public var size: Int
        public var isKeyframe: Bool
    }

    public struct Frame: Sendable, Equatable {
        public var ptsMilliseconds: Double?
        public var isKeyframe: Bool
        public var pictureType: String
    }

    public struct Result: Sendable {
        public var streams: [Stream]
        public var packets: [Packet]
        public var formatName: String
        public var durationSeconds: Double?

        public var video: Stream? { streams.first { $0.codecType == "video" } }
        public var audio: Stream? { streams.first { $0.codecType == "audio" } }
        public var videoPackets: [Packet] { packets.filter { $0.codecType == "video" } }
        public var audioPackets: [Packet] { packets.filter { $0.codecType == "audio" } }
    }

    public static let ffprobe = "/usr/bin/ffprobe"
    public static let ffmpeg = "/usr/bin/ffmpeg"

    /// Streams and every packet (in file order) of `file`.
    public static func probe(_ file: URL) throws -> Result {
        let output = try run(ffprobe, ["-v", "error", "-of", "json", "-show_format", "-show_streams", "-show_packets", file.path])
        guard let root = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw Failure(command: "ffprobe", message: "no JSON object for \(file.path)")
        }
        let streams = (root["streams"] as? [[String: Any]] ?? []).map { s in
            Stream(index: int(s["index"]) ?? 0, codecType: s["codec_type"] as? String ?? "",
                   codecName: s["codec_name"] as? String ?? "", width: int(s["width"]) ?? 0, height: int(s["height"]) ?? 0,
                   sampleRate: int(s["sample_rate"]) ?? 0, channels: int(s["channels"]) ?? 0,
                   timeBase: rational(s["time_base"]) ?? 0.001)
        }
        let timeBases = Dictionary(streams.map { ($0.index, $0.timeBase) }, uniquingKeysWith: { a, _ in a })
        let packets = (root["packets"] as? [[String: Any]] ?? []).map { p -> Packet in
            let index = int(p["stream_index"]) ?? 0
            let scale = (timeBases[index] ?? 0.001) * 1000
            return Packet(streamIndex: index, codecType: p["codec_type"] as? String ?? "",
                          ptsMilliseconds: double(p["pts"]).map { $0 * scale },
                          dtsMilliseconds: double(p["dts"]).map { $0 * scale },
                          durationMilliseconds: double(p["duration"]).map { $0 * scale },
                          size: int(p["size"]) ?? 0, isKeyframe: (p["flags"] as? String ?? "").hasPrefix("K"))
        }
        let format = root["format"] as? [String: Any] ?? [:]
        return Result(streams: streams, packets: packets, formatName: format["format_name"] as? String ?? "",
                      durationSeconds: double(format["duration"]))
    }

    /// The decoded video frames of the first video stream, in output order.
    public static func videoFrames(_ file: URL) throws -> [Frame] {
        let output = try run(ffprobe, ["-v", "error", "-of", "json", "-select_streams", "v:0", "-show_frames",
                                       "-show_entries", "frame=pts,best_effort_timestamp,key_frame,pict_type:stream=time_base",
                                       file.path])
        guard let root = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw Failure(command: "ffprobe", message: "no JSON object for \(file.path)")
        }
        let timeBase = ((root["streams"] as? [[String: Any]])?.first).flatMap { rational($0["time_base"]) } ?? 0.001
        return (root["frames"] as? [[String: Any]] ?? []).map { f in
            Frame(ptsMilliseconds: (double(f["pts"]) ?? double(f["best_effort_timestamp"])).map { $0 * timeBase * 1000 },
                  isKeyframe: int(f["key_frame"]) == 1, pictureType: f["pict_type"] as? String ?? "")
        }
    }

    /// Decodes every video frame scaled to `width`x`height` RGB24; element i is frame i of `videoFrames`.
    public static func tinyFrames(_ file: URL, width: Int = 16, height: Int = 9) throws -> [[UInt8]] {
        let output = try run(ffmpeg, ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v:0", "-fps_mode", "passthrough",
                                      "-vf", "scale=\(width):\(height)", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"])
        let frameBytes = width * height * 3
        return stride(from: 0, to: output.count - frameBytes + 1, by: frameBytes).map { Array(output[$0..<($0 + frameBytes)]) }
    }

    /// Mean red, green and blue of an RGB24 picture (0...255).
    public static func averageColour(_ rgb: [UInt8]) -> (red: Double, green: Double, blue: Double) {
        var sums = (0.0, 0.0, 0.0)
        let pixels = max(1, rgb.count / 3)
        for i in 0..<(rgb.count / 3) {
            sums.0 += Double(rgb[3 * i]); sums.1 += Double(rgb[3 * i + 1]); sums.2 += Double(rgb[3 * i + 2])
        }
        return (sums.0 / Double(pixels), sums.1 / Double(pixels), sums.2 / Double(pixels))
    }

    /// Decodes the whole file and reports whether ffmpeg finished without errors, with the video frame count.
    public static func decodeCheck(_ file: URL) throws -> (clean: Bool, errors: String, videoFrames: Int) {
        let child = try ChildProcess(executable: ffmpeg, arguments: ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v:0",
                                                                    "-f", "framecrc", "-"])
        guard let exit = child.wait(timeout: 60) else {
            child.stop()
            throw Failure(command: "ffmpeg", message: "timed out decoding \(file.path)")
        }
        let frames = child.outputText().split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        let errors = child.errorText()
        return (exit == .exited(0) && errors.isEmpty, errors, frames)
    }

    /// Runs a tool to completion (60 s at most) and returns its stdout.
    public static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let child = try ChildProcess(executable: tool, arguments: arguments)
        defer { try? FileManager.default.removeItem(at: child.standardOutput.deletingLastPathComponent()) }
        guard let exit = child.wait(timeout: 60) else {
            child.stop()
            throw Failure(command: tool, message: "timed out")
        }
        guard exit == .exited(0) else {
            throw Failure(command: ([tool] + arguments).joined(separator: " "), message: "\(exit): \(child.errorText())")
        }
        return (try? Data(contentsOf: child.standardOutput)) ?? Data()
    }

    private static func int(_ value: Any?) -> Int? {
        if let value = value as? Int { return value }
        if let value = value as? String { return Int(value) }
        if let value = value as? Double { return Int(value) }
        return nil
    }

    private static func double(_ value: Any?) -> Double? {
        if let value = value as? Double { return value }
        if let value = value as? Int { return Double(value) }
        if let value = value as? String { return Double(value) }
        return nil
    }

    private static func rational(_ value: Any?) -> Double? {
        guard let text = value as? String else { return nil }
        let parts = text.split(separator: "/")
        guard parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]), d != 0 else { return Double(text) }
        return n / d
    }
}
