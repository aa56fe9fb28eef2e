import Foundation

/// What a run of mono samples holds: the frequency of its sine, how much of it is sound at all (10 ms
/// blocks louder than -34 dBFS RMS with no gap: no run of 1 ms of digital silence), and the RMS level
/// of the sound. The frequency is the sample rate over the median distance between upward zero
/// crossings inside sound, so gaps and the odd discontinuity (a loaded machine's dropouts) count
/// against `soundFraction`, not against `frequency`.
public struct ToneAnalysis: Sendable {
    public var frequency: Double
    public var soundFraction: Double
    public var level: Float

    public init(samples: [Float], sampleRate: Int = 48_000) {
        let block = max(1, sampleRate / 100)
        var voiced = 0, energy: Float = 0, intervals: [Int] = []
        var start = 0
        while start + block <= samples.count {
            let chunk = samples[start..<(start + block)]
            let sum = chunk.reduce(Float(0)) { $0 + $1 * $1 }
            var silentRun = 0, longestSilentRun = 0
            for sample in chunk {
                silentRun = abs(sample) < 1e-4 ? silentRun + 1 : 0
                longestSilentRun = max(longestSilentRun, silentRun)
            }
            if (sum / Float(block)).squareRoot() > 0.02, longestSilentRun < sampleRate / 1000 {
                voiced += block
                energy += sum
                var last: Int?
                for index in chunk.indices.dropFirst() where samples[index - 1] < 0 && samples[index] >= 0 {
                    if let last { intervals.append(index - last) }
                    last = index
                }
            }
            start += block
        }
        let median = intervals.sorted().dropFirst(intervals.count / 2).first
        frequency = median.map { Double(sampleRate) / Double($0) } ?? 0
        soundFraction = start > 0 ? Double(voiced) / Double(start) : 0
        level = voiced > 0 ? (energy / Float(voiced)).squareRoot() : 0
    }
}
