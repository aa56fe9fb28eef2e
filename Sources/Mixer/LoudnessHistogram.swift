#if canImport(Glibc)
import Glibc
#endif

/// The blocks of a show's loudness in constant memory, as libebur128's histogram mode keeps them (EBU
/// Tech 3341/3342): 1000 bins of 0.1 LU from -70 LUFS (the absolute gate: quieter blocks are not kept)
/// to +30, each block counted in its bin and weighed by the bin's centre. `integrated` is the gated
/// loudness of 400 ms blocks (BS.1770-4: relative gate 10 LU below their mean), `range` the loudness
/// range of 3 s blocks (Tech 3342: relative gate 20 LU below, the 10th to the 95th percentile), both
/// worked out as libebur128 1.2.6 does from its histograms, so the readings are libebur128's own.
struct LoudnessHistogram {
    static let binCount = 1000
    /// Bin i holds energies from `boundaries[i]` up to `boundaries[i + 1]` (-70 + i/10 LUFS up).
    static let boundaries: [Double] = (0...binCount).map { energy(loudness: Double($0) / 10 - 70) }
    /// The energy a block in bin i counts for: the bin's centre (-69.95 + i/10 LUFS).
    static let centres: [Double] = (0..<binCount).map { energy(loudness: Double($0) / 10 - 69.95) }

    private var counts = [Int](repeating: 0, count: binCount)
    /// Blocks kept (at or above the absolute gate).
    private(set) var blocks = 0

    /// BS.1770's loudness of a mean energy, and back (libebur128's formula: -0.691 for the K-filter's gain at 1 kHz).
    static func loudness(energy: Double) -> Double { 10 * (log(energy) / log(10.0)) - 0.691 }
    static func energy(loudness: Double) -> Double { pow(10, (loudness + 0.691) / 10) }

    /// Counts one block of mean energy `energy` (nothing below the absolute gate, -70 LUFS).
    mutating func add(energy: Double) {
        guard energy >= Self.boundaries[0] else { return }
        counts[Self.bin(of: energy)] += 1
        blocks += 1
    }

    /// The bin of an energy at or above the absolute gate (the top bin for anything louder than +30 LUFS).
    static func bin(of energy: Double) -> Int {
        var low = 0, high = binCount
        while high - low > 1 {
            let middle = (low + high) / 2
            if energy >= boundaries[middle] { low = middle } else { high = middle }
        }
        return low
    }

    /// The first bin counted after a relative gate `factor` (linear) below the blocks' mean energy.
    private func gatedStart(factor: Double) -> Int? {
        guard blocks > 0 else { return nil }
        var sum = 0.0
        for bin in 0..<Self.binCount where counts[bin] > 0 { sum += Double(counts[bin]) * Self.centres[bin] }
        let threshold = sum / Double(blocks) * factor
        guard threshold >= Self.boundaries[0] else { return 0 }
        let bin = Self.bin(of: threshold)
        return threshold > Self.centres[bin] ? bin + 1 : bin
    }

    /// The gated loudness of the blocks (integrated loudness, for 400 ms blocks); nil with none above the gates.
    var integrated: Double? {
        guard let start = gatedStart(factor: 0.1) else { return nil }
        var sum = 0.0, count = 0
        for bin in start..<Self.binCount where counts[bin] > 0 {
            sum += Double(counts[bin]) * Self.centres[bin]
            count += counts[bin]
        }
        return count > 0 ? Self.loudness(energy: sum / Double(count)) : nil
    }

    /// The loudness range of the blocks (for 3 s blocks), LU: 0 with none above the gates.
    var range: Double {
        guard let start = gatedStart(factor: 0.01) else { return 0 }
        let gated = counts[start...].reduce(0, +)
        guard gated > 0 else { return 0 }
        let low = Int(Double(gated - 1) * 0.1 + 0.5), high = Int(Double(gated - 1) * 0.95 + 0.5)
        var seen = 0, bin = start
        while seen <= low {
            seen += counts[bin]
            bin += 1
        }
        let lowEnergy = Self.centres[bin - 1]
        while seen <= high {
            seen += counts[bin]
            bin += 1
        }
        return Self.loudness(energy: Self.centres[bin - 1]) - Self.loudness(energy: lowEnergy)
    }
}
