import Foundation

/// Test and benchmark audio: interleaved stereo Float32 at 48 kHz unless said otherwise; the level of a
/// tone in a run of samples (Goertzel); WAV files for the ffmpeg CLI and its EBU R128 reading.
public enum AudioSignals {
    /// A sine of `peak` (linear) at `frequency`, `frames` frames starting at sample `start` (the phase
    /// follows the sample index, so consecutive blocks join without a click), on both channels
    /// (or only `channel` 0 or 1).
    public static func tone(frequency: Double, peak: Double, frames: Int, start: Int64 = 0, sampleRate: Int = 48_000,
                            channel: Int? = nil) -> [Float] {
        var samples = [Float](repeating: 0, count: 2 * frames)
        for index in 0..<frames {
            let time = Double((start + Int64(index)) % Int64(sampleRate)) / Double(sampleRate)
            let value = Float(peak * sin(2 * Double.pi * frequency * time))
            if channel != 1 { samples[2 * index] = value }
            if channel != 0 { samples[2 * index + 1] = value }
        }
        return samples
    }

    /// A constant value on both channels.
    public static func constant(_ value: Float, frames: Int) -> [Float] { [Float](repeating: value, count: 2 * frames) }

    /// Speech-like sound for a benchmark: bursts of noise (a few hundred ms, random gaps) shaped by a
    /// syllable-rate envelope, over a quiet tone, from a seeded generator (the same every run).
    public static func speechLike(frames: Int, seed: UInt64, tone: Double, sampleRate: Int = 48_000) -> [Float] {
        var state = seed | 1
        func random() -> Double {  // xorshift64*
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return Double((state &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
        }
        var samples = [Float](repeating: 0, count: 2 * frames)
        var index = 0, lowPass = 0.0
        while index < frames {
            let burst = Int((0.2 + 0.6 * random()) * Double(sampleRate)), gap = Int((0.05 + 0.4 * random()) * Double(sampleRate))
            let level = 0.05 + 0.25 * random()
            for offset in 0..<burst where index + offset < frames {
                let envelope = 0.5 - 0.5 * cos(2 * Double.pi * 4 * Double(offset) / Double(sampleRate))
                lowPass += 0.3 * ((random() * 2 - 1) - lowPass)
                let value = Float(level * envelope * lowPass * 2)
                samples[2 * (index + offset)] = value
                samples[2 * (index + offset) + 1] = value
            }
            index += burst + gap
        }
        for frame in 0..<frames {
            let value = Float(0.02 * sin(2 * Double.pi * tone * Double(frame) / Double(sampleRate)))
            samples[2 * frame] += value
            samples[2 * frame + 1] += value
        }
        return samples
    }

    /// One channel (0 left, 1 right) of interleaved stereo.
    public static func channel(_ channel: Int, of samples: [Float]) -> [Float] {
        stride(from: channel, to: samples.count, by: 2).map { samples[$0] }
    }

    /// The peak amplitude of the `frequency` component of mono `samples` (a Goertzel filter at that bin:
    /// exact for a sine that makes a whole number of cycles in the run).
    public static func goertzelAmplitude(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Int = 48_000) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 2 * max(power, 0).squareRoot() / Double(max(samples.count, 1))
    }

    public static func goertzelAmplitude(_ samples: [Float], frequency: Double, sampleRate: Int = 48_000) -> Double {
        goertzelAmplitude(samples[...], frequency: frequency, sampleRate: sampleRate)
    }

    /// Writes interleaved Float32 `samples` as a WAV file (IEEE float, `channels` channels).
    public static func writeWAV(_ samples: [Float], to url: URL, channels: Int = 2, sampleRate: Int = 48_000) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        let bytes = samples.count * 4
        data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + bytes))
        data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); append(UInt32(16))
        append(UInt16(3)); append(UInt16(channels)); append(UInt32(sampleRate))
        append(UInt32(sampleRate * channels * 4)); append(UInt16(channels * 4)); append(UInt16(32))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(bytes))
        samples.withUnsafeBufferPointer { data.append(UnsafeBufferPointer(start: UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: UInt8.self), count: bytes)) }
        try data.write(to: url)
    }

    /// What ffmpeg's EBU R128 filter (`-af ebur128=peak=true`) reads for a file: its summary's integrated
    /// loudness (LUFS), loudness range (LU) and true peak (dBFS).
    public struct FFmpegLoudness: Sendable {
        public var integratedLUFS: Double
        public var rangeLU: Double
        public var truePeakDBFS: Double?
    }

    public static func ffmpegLoudness(of file: URL) throws -> FFmpegLoudness {
        let child = try ChildProcess(executable: MediaProbe.ffmpeg, arguments: [
            "-nostdin", "-hide_banner", "-nostats", "-i", file.path, "-af", "ebur128=peak=true", "-f", "null", "-"])
        defer { try? FileManager.default.removeItem(at: child.standardOutput.deletingLastPathComponent()) }
        guard let exit = child.wait(timeout: 60), exit == .exited(0) else {
            child.stop()
            throw MediaProbe.Failure(command: "ffmpeg ebur128", message: child.errorText())
        }
        // The summary comes last: "I:  -23.0 LUFS", "LRA:  0.0 LU", "Peak:  -22.9 dBFS".
        let summary = child.errorText().components(separatedBy: "Summary:").last ?? ""
        func value(_ label: String) -> Double? {
            for line in summary.split(separator: "\n") {
                let words = line.split(separator: " ")
                if words.first == Substring(label + ":"), words.count >= 2 { return Double(words[1]) }
            }
            return nil
        }
        guard let integrated = value("I"), let range = value("LRA") else {
            throw MediaProbe.Failure(command: "ffmpeg ebur128", message: "no summary in: \(summary)")
        }
        return FFmpegLoudness(integratedLUFS: integrated, rangeLU: range, truePeakDBFS: value("Peak"))
    }
}
