import Foundation
import Testing
import Capture
import StudioSystem
import TestSupport

/// The long drift run (scripts/bench-drift.sh sets STUDIO_DRIFT_BENCH_SECONDS; skipped otherwise):
/// microphones 300 ppm fast and 300 ppm slow captured for that long; every 30 s one line per input
/// with its buffer delay (the smoothed fill), target, estimated ppm and the last-resort counters; at
/// the end the delay's trend after the first minute (least squares), extrapolated to 8 hours.
/// STUDIO_DRIFT_BENCH_BLOCK_MS runs the program clock in blocks of that many ms instead of
/// `AudioInputSet.standardChunkDuration` (to weigh another block on a real rig).
@Suite struct AudioDriftBenchmark {
    static let seconds = ProcessInfo.processInfo.environment["STUDIO_DRIFT_BENCH_SECONDS"].flatMap(Double.init)
    static let block = ProcessInfo.processInfo.environment["STUDIO_DRIFT_BENCH_BLOCK_MS"].flatMap(Double.init).map { $0 / 1000 }

    @Test(.enabled(if: seconds != nil)) func driftOverALongRun() throws {
        let duration = Self.seconds ?? 0
        let block = Self.block ?? AudioInputSet.standardChunkDuration
        print(String(format: "drift-bench: program clock block %.1f ms", block * 1000))
        let (rig, inputs, producers) = try AudioInputDriftTests.startDriftingMicrophones(chunkDuration: block)
        defer {
            inputs.stop()
            rig.stop()
        }
        let started = MonotonicClock.now()
        var samples: [[(t: Double, fill: Double)]] = [[], []]
        var nextLine = 0.0
        let settledAt = 60.0
        var settled: [AudioInputStatus] = []
        while true {
            MonotonicClock.sleep(seconds: 1)
            let t = Double(MonotonicClock.now() - started) / 1e9
            let status = inputs.status
            if settled.isEmpty, t >= settledAt { settled = status }
            // A fill of 0 is a restart after an underrun (the buffer refilling), not a delay.
            for (index, input) in status.enumerated() where t >= settledAt && input.bufferFill > 0 { samples[index].append((t, input.bufferFill / 48)) }
            if t >= nextLine {
                nextLine += 30
                for (index, input) in status.enumerated() {
                    print(String(format: "drift-bench: t=%6.0f s %@ delay %.2f ms (target %.2f ms) estimated %+.1f ppm correction %+.1f ppm discarded %lld inserted %lld underruns %d",
                                 t, index == 0 ? "fast(+300)" : "slow(-300)", input.bufferFill / 48, Double(input.bufferTarget) / 48,
                                 input.estimatedPPM, input.compensationPPM, input.framesDiscarded, input.framesInserted, input.underruns))
                }
            }
            if t >= duration { break }
        }
        let end = inputs.status
        // What the rig's microphones said (a lost cycle trigger, with its time on their clock).
        for producer in producers {
            for line in producer.errorText().split(separator: "\n") { print("drift-bench: rig: \(line)") }
        }
        for (index, series) in samples.enumerated() {
            let n = Double(series.count), mt = series.map(\.t).reduce(0, +) / n, mf = series.map(\.fill).reduce(0, +) / n
            let slope = series.map { ($0.t - mt) * ($0.fill - mf) }.reduce(0, +) / series.map { ($0.t - mt) * ($0.t - mt) }.reduce(0, +)
            let spread = (series.map(\.fill).min() ?? 0, series.map(\.fill).max() ?? 0)
            print(String(format: "drift-bench: %@ after %.0f s: delay %.2f..%.2f ms (mean %.2f), trend %+.4f ms/hour -> %+.3f ms in 8 hours; estimated %+.1f ppm; after settling: discarded %lld inserted %lld underruns %d",
                         index == 0 ? "fast(+300)" : "slow(-300)", duration, spread.0, spread.1, mf, slope * 3600, slope * 8 * 3600, end[index].estimatedPPM,
                         end[index].framesDiscarded - settled[index].framesDiscarded, end[index].framesInserted - settled[index].framesInserted,
                         end[index].underruns - settled[index].underruns))
        }
    }
}
