import Foundation
import StudioCore

/// Program-like media made up in tests: solid-colour I420 frames and sine-tone audio chunks, with the
/// program's timestamps (frame n at `MediaTime(count: n, rate: fps)`, sample k at k/48000 s).
public enum SyntheticMedia {
    /// Y, U, V of a few well-separated colours (BT.601 limited range).
    public static let red: (UInt8, UInt8, UInt8) = (81, 90, 240)
    public static let green: (UInt8, UInt8, UInt8) = (145, 54, 34)
    public static let blue: (UInt8, UInt8, UInt8) = (41, 240, 110)
    public static let grey: (UInt8, UInt8, UInt8) = (128, 128, 128)

    /// A solid-colour I420 frame with a small moving bright square (so the encoder has motion to code).
    public static func frame(width: Int, height: Int, yuv: (UInt8, UInt8, UInt8), index: Int = 0,
                             pool: FramePool? = nil) -> VideoFrame {
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, sequence: UInt64(index))
        let values = [yuv.0, yuv.1, yuv.2]
        for plane in 0..<3 {
            let layout = frame.planes[plane]
            memset(frame.plane(plane), Int32(values[plane]), layout.byteCount)
        }
        let square = max(2, height / 8) & ~1
        let x = (index * 4) % max(1, width - square), y = height / 3
        let luma = frame.plane(0).assumingMemoryBound(to: UInt8.self)
        for row in y..<min(height, y + square) {
            for column in x..<(x + square) { luma[row * frame.planes[0].stride + column] = 235 }
        }
        return frame
    }

    /// `count` interleaved stereo samples of a 440 Hz tone starting at sample index `firstSample`.
    public static func audio(firstSample: Int64, count: Int, format: AudioFormat = .program, frequency: Double = 440) -> AudioChunk {
        var samples = [Float](repeating: 0, count: count * format.channels)
        for i in 0..<count {
            let t = Double(firstSample + Int64(i)) / Double(format.sampleRate)
            let value = Float(0.25 * sin(2 * Double.pi * frequency * t))
            for channel in 0..<format.channels { samples[i * format.channels + channel] = value }
        }
        return AudioChunk(format: format, samples: samples,
                          pts: MediaTime(count: firstSample, rate: Rational(Int32(format.sampleRate))), firstSample: firstSample)
    }
}
