#if canImport(Glibc)
import Glibc
#endif

/// Program audio levels, per channel, in dBFS (0 dBFS: a sample of magnitude 1.0): what a meter shows.
/// Silence, and anything quieter than `floor`, reads `floor` (-96 dBFS, the range of 16-bit audio), so
/// every value is a finite number (JSON has no -inf).
public struct AudioLevels: Sendable, Equatable {
    /// The lowest level reported.
    public static let floor = -96.0
    /// The highest sample magnitude over the last `AudioLevelMeter.window`.
    public var peakDBFS: [Double]
    /// The root mean square over the same window (a full-scale sine: -3 dBFS).
    public var rmsDBFS: [Double]
    /// The highest peak over the last `AudioLevelMeter.holdWindow` (the meter's peak-hold tick).
    public var peakHoldDBFS: [Double]

    public init(peakDBFS: [Double], rmsDBFS: [Double], peakHoldDBFS: [Double]) {
        self.peakDBFS = peakDBFS
        self.rmsDBFS = rmsDBFS
        self.peakHoldDBFS = peakHoldDBFS
    }

    /// Every channel at the floor (no audio measured yet).
    public static func silent(channels: Int) -> AudioLevels {
        let floors = [Double](repeating: floor, count: max(channels, 0))
        return AudioLevels(peakDBFS: floors, rmsDBFS: floors, peakHoldDBFS: floors)
    }

    /// `magnitude` (a linear amplitude, 1.0 = full scale) in dBFS, never below `floor`.
    public static func dbfs(_ magnitude: Double) -> Double {
        guard magnitude > 0 else { return floor }
        return max(floor, 20 * log10(magnitude))
    }

    /// The levels of interleaved samples measured in one go (no hold: it equals the peak).
    public static func measure(_ samples: [Float], channels: Int) -> AudioLevels {
        AudioLevelBlock(samples, channels: channels, end: 0).levels
    }
}

/// One run of samples reduced to what a meter needs: per channel, the highest magnitude and the sum of
/// squares. Cheap to compute on the audio thread (one pass, no allocation beyond two small arrays).
public struct AudioLevelBlock: Sendable, Equatable {
    public var peak: [Float]
    public var sumOfSquares: [Double]
    public var frames: Int
    /// Index (on the program's audio timeline) of the sample after the block's last one.
    public var end: Int64

    public init(_ samples: [Float], channels: Int, end: Int64) {
        let channels = max(channels, 1)
        var peak = [Float](repeating: 0, count: channels)
        var squares = [Double](repeating: 0, count: channels)
        let frames = samples.count / channels
        samples.withUnsafeBufferPointer { buffer in
            for channel in 0..<channels {
                var high: Float = 0, sum: Double = 0
                var index = channel
                for _ in 0..<frames {
                    let value = buffer[index]
                    high = max(high, abs(value))
                    sum += Double(value) * Double(value)
                    index += channels
                }
                peak[channel] = high
                squares[channel] = sum
            }
        }
        self.peak = peak
        self.sumOfSquares = squares
        self.frames = frames
        self.end = end
    }

    /// The chunk's levels: `end` is the sample after its last one.
    public init(_ chunk: AudioChunk) {
        self.init(chunk.samples, channels: chunk.format.channels, end: chunk.firstSample + Int64(chunk.frameCount))
    }

    var levels: AudioLevels {
        let peaks = peak.map { AudioLevels.dbfs(Double($0)) }
        return AudioLevels(peakDBFS: peaks,
                           rmsDBFS: sumOfSquares.map { AudioLevels.dbfs(frames > 0 ? ($0 / Double(frames)).squareRoot() : 0) },
                           peakHoldDBFS: peaks)
    }
}

/// A program meter: peak and RMS over the last `window` seconds and the highest peak over the last
/// `holdWindow` seconds, from the blocks measured as audio passes. Time is the audio timeline's sample
/// index (no clock): a block counts while its end lies within the window of the latest block's end.
public struct AudioLevelMeter: Sendable {
    /// Peak and RMS window (100 ms, about what a PPM-style meter integrates).
    public static let window = 0.1
    /// Peak-hold window.
    public static let holdWindow = 1.5

    public let sampleRate: Int
    public let channels: Int
    private var blocks: [AudioLevelBlock] = []

    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = max(sampleRate, 1)
        self.channels = max(channels, 1)
        blocks.reserveCapacity(256)
    }

    /// Adds a block measured on the audio thread; forgets blocks past the hold window.
    public mutating func add(_ block: AudioLevelBlock) {
        guard block.peak.count == channels else { return }
        blocks.append(block)
        let oldest = block.end - Int64(Self.holdWindow * Double(sampleRate))
        if let keep = blocks.firstIndex(where: { $0.end > oldest }), keep > 0 { blocks.removeFirst(keep) }
    }

    /// The levels now (every channel at the floor before any audio).
    public var levels: AudioLevels {
        guard let latest = blocks.last?.end else { return .silent(channels: channels) }
        let windowStart = latest - Int64(Self.window * Double(sampleRate))
        var peak = [Float](repeating: 0, count: channels), hold = peak
        var squares = [Double](repeating: 0, count: channels), frames = 0
        for block in blocks {
            let inWindow = block.end > windowStart
            if inWindow { frames += block.frames }
            for channel in 0..<channels {
                hold[channel] = max(hold[channel], block.peak[channel])
                if inWindow {
                    peak[channel] = max(peak[channel], block.peak[channel])
                    squares[channel] += block.sumOfSquares[channel]
                }
            }
        }
        return AudioLevels(peakDBFS: peak.map { AudioLevels.dbfs(Double($0)) },
                           rmsDBFS: squares.map { AudioLevels.dbfs(frames > 0 ? ($0 / Double(frames)).squareRoot() : 0) },
                           peakHoldDBFS: hold.map { AudioLevels.dbfs(Double($0)) })
    }
}
