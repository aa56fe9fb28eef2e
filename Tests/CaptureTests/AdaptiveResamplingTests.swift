import Foundation
import Testing
@testable import Capture
import TestSupport

/// The resampler and the clock estimate on their own: exact arithmetic, simulated time.
@Suite struct AdaptiveResamplingTests {
    private func sine(_ frequency: Double, frames: Range<Int>, channels: Int = 2) -> [Float] {
        frames.flatMap { index in
            [Float](repeating: Float(0.5 * sin(2 * Double.pi * frequency * Double(index) / 48_000)), count: channels)
        }
    }

    /// At step 1 the output is the input, sample for sample, to within 0.5 % (the filter's half length
    /// is held back as lookahead, not added to the timeline).
    @Test func atUnityStepTheOutputIsTheInputDelayed() {
        var resampler = AdaptiveResampler(channels: 2)
        let input = sine(1000, frames: 0..<4800)
        input.withUnsafeBufferPointer { resampler.append($0) }
        var output = [Float](repeating: 0, count: 4000 * 2)
        #expect(resampler.framesNeeded(toProduce: 4000, step: 1) == 0)
        resampler.produce(frames: 4000, step: 1, into: &output, offset: 0)
        var worst: Float = 0
        for k in 0..<4000 { worst = max(worst, abs(output[2 * k] - input[2 * k]), abs(output[2 * k + 1] - input[2 * k + 1])) }
        #expect(worst < 0.0025, "largest difference \(worst)")
    }

    /// Reading 300 ppm faster consumes 300 ppm more input, keeps the sound (a 1 kHz sine stays one,
    /// lowered in pitch by 300 ppm's worth on output, as the input clock was fast), with no clicks.
    @Test func aStepAboveOneConsumesThatMuchMoreInputWithoutClicks() {
        var resampler = AdaptiveResampler(channels: 2)
        let step = 1 + 300e-6
        var output: [Float] = [], consumed = 0, produced = 0
        var fed = 0
        for _ in 0..<1000 {  // 10 s in 10 ms blocks
            let needed = resampler.framesNeeded(toProduce: 480, step: step)
            let input = sine(1000, frames: fed..<(fed + needed))
            input.withUnsafeBufferPointer { resampler.append($0) }
            fed += needed
            var block = [Float](repeating: 0, count: 480 * 2)
            resampler.produce(frames: 480, step: step, into: &block, offset: 0)
            output += block
            produced += 480
        }
        consumed = fed - Int(resampler.bufferedFrames.rounded())
        let expected = Double(produced) * step
        #expect(abs(Double(consumed) - expected) < 20, "consumed \(consumed), expected \(expected)")
        let left = stride(from: 0, to: output.count, by: 2).map { output[$0] }
        // The sine's amplitude holds (no dips), and sample-to-sample steps stay those of a 1 kHz sine.
        let tail = Array(left.suffix(48_000))
        #expect(abs(AudioSignals.goertzelAmplitude(tail, frequency: 1000 * step) - 0.5) < 0.01)
        let largestStep = zip(left.dropFirst(100), left.dropFirst(101)).map { abs($1 - $0) }.max() ?? 1
        #expect(largestStep < Float(0.5 * 2 * Double.pi * 1000 / 48_000) * 1.01, "largest step \(largestStep)")
    }

    /// Stereo runs its own inner loop (both channels in one pass): each channel comes out exactly as a
    /// mono resampler makes it from that channel alone, at a step off unity, across blocks of varying size.
    @Test func stereoGivesEachChannelWhatMonoGivesIt() {
        var stereo = AdaptiveResampler(channels: 2)
        var left = AdaptiveResampler(channels: 1), right = AdaptiveResampler(channels: 1)
        let step = 1 - 250e-6
        var fed = 0, worst: Float = 0
        for block in 0..<50 {
            let frames = 440 + 17 * (block % 5)
            let needed = stereo.framesNeeded(toProduce: frames, step: step)
            #expect(left.framesNeeded(toProduce: frames, step: step) == needed)
            let l = (fed..<(fed + needed)).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
            let r = (fed..<(fed + needed)).map { Float(0.3 * sin(2 * Double.pi * 3_000 * Double($0) / 48_000 + 1)) }
            fed += needed
            let interleaved = zip(l, r).flatMap { [$0, $1] }
            interleaved.withUnsafeBufferPointer { stereo.append($0) }
            l.withUnsafeBufferPointer { left.append($0) }
            r.withUnsafeBufferPointer { right.append($0) }
            var both = [Float](repeating: 0, count: 2 * frames + 6), l1 = [Float](repeating: 0, count: frames), r1 = l1
            stereo.produce(frames: frames, step: step, into: &both, offset: 6)
            left.produce(frames: frames, step: step, into: &l1, offset: 0)
            right.produce(frames: frames, step: step, into: &r1, offset: 0)
            #expect(both[0..<6].allSatisfy { $0 == 0 }, "nothing written before the offset")
            for k in 0..<frames { worst = max(worst, abs(both[6 + 2 * k] - l1[k]), abs(both[6 + 2 * k + 1] - r1[k])) }
        }
        #expect(worst < 1e-6, "largest difference \(worst)")
        #expect(abs(stereo.bufferedFrames - left.bufferedFrames) < 1e-9)
    }

    /// The level's median (asked for on every block): the middle of three in any order, the mean of two,
    /// as sorting gives them.
    @Test func theMedianIsTheMiddleValue() {
        let values = [-3.5, 0.25, 7.0]
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            #expect(ClockRatioEstimator.median(order.map { values[$0] }) == 0.25)
        }
        #expect(ClockRatioEstimator.median([2, 2, -1]) == 2 && ClockRatioEstimator.median([5, -1]) == 2)
        #expect(ClockRatioEstimator.median([0.1, 0.7]) == (0.1 + 0.7) / 2 && ClockRatioEstimator.median([0.7, 0.1]) == (0.1 + 0.7) / 2)
        #expect(ClockRatioEstimator.median([42]) == 42)
    }

    /// A simulated input whose clock runs `ppm` fast or slow, delivering 1024-frame quanta on its own
    /// clock while the program takes 480 frames every 10 ms: the estimate converges to the truth and
    /// the buffer stays at its target (no growth, no underrun).
    @Test(arguments: [300.0, -300.0, 120.0, 0.0])
    func theEstimateConvergesAndTheBufferHoldsItsTarget(ppm: Double) {
        var estimator = ClockRatioEstimator()
        let rate = 48_000.0, target = 2048.0, quantum = 1024.0
        // Playing starts with the target reached, a quantum's worth in excess at most (as in the capture).
        var buffered = target + 700, nextQuantum = 0.0, time = 0.0
        var fills: [Double] = [], underruns = 0
        for block in 0..<12_000 {  // 120 s
            time = Double(block + 1) * 0.01
            // Quanta due by now on the input's clock.
            while nextQuantum * quantum / (rate * (1 + ppm / 1e6)) <= time {
                buffered += quantum
                nextQuantum += 1
            }
            let (step, excess) = estimator.update(fill: buffered, frames: 480, target: target, quantum: Int(quantum), rate: rate)
            buffered -= 480 * step + Double(excess)
            if buffered < 0 { underruns += 1 }
            fills.append(estimator.fill ?? 0)
        }
        #expect(abs(estimator.estimatedPPM - ppm) < 10, "estimated \(estimator.estimatedPPM) ppm for \(ppm)")
        #expect(underruns == 0)
        // After 60 s the smoothed fill stays within 1 ms of the target (no drift of the delay).
        let settled = fills.suffix(6000)
        #expect(settled.allSatisfy { abs($0 - target) < rate / 1000 }, "fill \(settled.min()!)...\(settled.max()!)")
    }

    /// Quanta of a source 300 ppm fast (or slow), a quarter of them late by up to 80 ms (a busy machine),
    /// and every seventh second late all through by 30 ms (starved): the ratio to within 5 ppm in 30 s.
    @Test(arguments: [300.0, -300.0])
    func theArrivalClockMeasuresTheSourceDespiteLateArrivals(ppm: Double) {
        var clock = ArrivalClock()
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        let rate = 48_000.0, quantum = 1024
        var nextSecond = 1.0
        #expect(clock.ratio == nil)
        for k in 1...(30 * 47) {
            let due = Double(k * quantum) / (rate * (1 + ppm / 1e6))
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let late = random >> 62 == 0 ? Double(random >> 40 & 0xFFFF) / 65_536 * 0.08 : Double(random >> 40 & 0xFF) / 256 * 0.0005
            let starved = Int(due) % 7 == 3 ? 0.03 : 0
            clock.arrived(frames: quantum, at: 100 + due + late + starved, rate: rate)
            if due >= nextSecond {
                clock.closeSecond()
                nextSecond += 1
            }
        }
        let measured = (clock.ratio ?? .nan) * 1e6
        #expect(abs(measured - ppm) < 5, "measured \(measured) ppm for \(ppm)")
    }

    /// A starved machine: every 15 s the source stalls (the buffer runs dry: a restart) and then catches
    /// up with a burst of 15 ms (cut once the mean fill shows it, the rest left to the proportional
    /// part while the integral rests). The estimate stays within 50 ppm of the clock.
    @Test func restartsFollowedByBurstsDoNotPullTheEstimateOffTheClock() {
        var estimator = ClockRatioEstimator()
        let rate = 48_000.0, target = 2048.0, quantum = 1024.0, ppm = 300.0
        var buffered = target + 300, nextQuantum = 0.0
        for block in 0..<18_000 {  // 180 s
            let time = Double(block + 1) * 0.01
            while nextQuantum * quantum / (rate * (1 + ppm / 1e6)) <= time {
                buffered += quantum
                nextQuantum += 1
            }
            if block % 1500 == 1000 { estimator.restart() }    // an underrun: the capture starts over
            if block % 1500 == 1060 { buffered += 0.015 * rate } // the catch-up burst after the alignment
            buffered -= Double(estimator.burst(target: target, rate: rate))
            let (step, excess) = estimator.update(fill: buffered, frames: 480, target: target, quantum: Int(quantum), rate: rate)
            buffered -= 480 * step + Double(excess)
        }
        #expect(abs(estimator.estimatedPPM - ppm) < 50, "estimated \(estimator.estimatedPPM) ppm for \(ppm)")
    }
}
