/// What a run of mono samples holds: the frequency of its sine (upward zero crossings per second of
/// sound), how much of it is sound at all (10 ms blocks louder than -34 dBFS RMS with no gap: no run of
/// 1 ms of digital silence), and the RMS level of the sound. Gaps (a loaded machine's audio dropouts) count against `soundFraction`, not `frequency`.
public struct ToneAnalysis: Sendable {
    public var frequency: Double
    public var soundFraction: Double
    public var level: Float

    public init(samples: [Float], sampleRate: Int = 48_000) {
        let block = max(1, sampleRate / 100)
        var crossings = 0, voiced = 0, energy: Float = 0
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
                crossings += zip(chunk, chunk.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
            }
            start += block
        }
        frequency = voiced > 0 ? Double(crossings) / (Double(voiced) / Double(sampleRate)) : 0
        soundFraction = samples.count >= block ? Double(voiced) / Double(start) : 0
        level = voiced > 0 ? (energy / Float(voiced)).squareRoot() : 0
    }
}
