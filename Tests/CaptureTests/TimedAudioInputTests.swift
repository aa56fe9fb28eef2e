import Foundation
import Testing
import Synchronization
import Capture
import Mixer
import StudioCore
import StudioSystem
import TestSupport

/// A backend that is no PipeWire: the test's thread pushes a 1 kHz tone (-20 dBFS peak) into a
/// `TimedAudioInput`, its chunks stamped on a source clock that runs `ppm` fast, on a `ManualClock`
/// that the same thread moves 1 ms at a time (each chunk pushed once the clock has passed its last
/// sample: a delivery up to 1 ms late). An `AudioInputSet` pulls it on that clock, its spans mixed by
/// an `AudioMixer` (on the test's thread: the set's thread only hands them over).
struct TimedSource {
    let ppm: Double
    /// Frames per chunk, in turn (a steady quantum has one).
    var chunkFrames: [Int] = [480]
    var seconds = 150.0
    let frequency = 1000.0, peak: Float = 0.1

    struct Result {
        var status: AudioInputStatus
        /// The mixer's output, left channel, over the last second; and its meters then.
        var lastSecond: [Float]
        var meters: MixerMeters
        /// The input's status at the run's middle (half of `seconds`: the counters then, to compare with the end's).
        var middle: AudioInputStatus
    }

    func run() throws -> Result {
        let clock = ManualClock()
        let rate = 48_000, channels = 2
        let input = TimedAudioInput("test:tone", clock: clock)
        let spans = Mutex<[AudioInputBlocks]>([])
        let set = AudioInputSet(inputs: [ToneInput.silence, input], clock: clock) { span in spans.withLock { $0.append(span) } }
        let mixer = AudioMixer()
        let origin = clock.now()
        set.start(origin: origin)
        defer { set.stop() }
        guard clock.waitForSleepers(1) else { throw TimedSourceError.clockThreadStuck }
        // The backend's connection: after the set began its inputs (their counters start over there).
        input.newStream()
        input.connected("test:tone")
        let sourceRate = Double(rate) * (1 + ppm / 1e6)
        var produced = 0, turn = 0, mixedLeft: [Float] = [], middle: AudioInputStatus?
        let end = origin + UInt64(seconds * 1e9)
        var chunk: [Float] = []
        while clock.now() < end {
            clock.advance(by: 1_000_000)
            guard clock.waitForSleepers(1) else { throw TimedSourceError.clockThreadStuck }
            // Every chunk whose last sample the source has captured by now, stamped then.
            while true {
                let frames = chunkFrames[turn % chunkFrames.count]
                let capturedAt = origin + UInt64((Double(produced + frames) / sourceRate * 1e9).rounded(.up))
                guard capturedAt <= clock.now() else { break }
                chunk.removeAll(keepingCapacity: true)
                for n in produced..<(produced + frames) {
                    let value = peak * Float(sin(2 * Double.pi * frequency * Double(n % rate) / Double(rate)))
                    for _ in 0..<channels { chunk.append(value) }
                }
                input.push(chunk, capturedAt: capturedAt)
                produced += frames
                turn += 1
            }
            for span in spans.withLock({ taken in defer { taken = [] }; return taken }) {
                let mixed = mixer.mix(["net1": span.blocks[1].samples], from: span.firstSample, frames: span.frameCount)
                mixedLeft.append(contentsOf: stride(from: 0, to: mixed.samples.count, by: 2).map { mixed.samples[$0] })
                if mixedLeft.count > 2 * rate { mixedLeft.removeFirst(mixedLeft.count - rate) }
            }
            if middle == nil, clock.now() >= origin + UInt64(seconds / 2 * 1e9) { middle = input.status }
        }
        return Result(status: input.status, lastSecond: Array(mixedLeft.suffix(rate)), meters: mixer.controls.meters, middle: middle ?? input.status)
    }
}

enum TimedSourceError: Error { case clockThreadStuck }

@Suite struct TimedAudioInputTests {
    /// The issue's proof: a source 300 ppm fast by its timestamps, mixed through the set and the mixer
    /// with no PipeWire: its clock estimate finds the 300 ppm, the resampling holds the buffer at its
    /// target with no last resort (nothing discarded, inserted or run dry after the start), and the
    /// tone comes out of the mixer at its level (-20 dBFS peak, -23 dBFS RMS).
    @Test(arguments: [300.0, -300.0])
    func aToneAtAKnownDriftIsMixedAtItsLevelAndItsClockIsFound(ppm: Double) throws {
        let result = try TimedSource(ppm: ppm).run()
        let status = result.status
        #expect(abs(status.estimatedPPM - ppm) < 30, "estimated \(status.estimatedPPM) ppm for \(ppm): \(status)")
        #expect(abs(status.compensationPPM - ppm) < 50, "compensation \(status.compensationPPM) ppm for \(ppm)")
        #expect(status.state == "playing" && status.node == "test:tone" && status.connections == 1)
        #expect(status.framesDiscarded == 0 && status.framesInserted == 0 && status.underruns == 0, "\(status)")
        // The level held at the target: within 2 ms (300 ppm unfollowed would move it 45 ms in 150 s).
        #expect(abs(status.bufferFill - Double(status.bufferTarget)) < 96, "fill \(status.bufferFill), target \(status.bufferTarget)")
        // Every span after the start's alignment was the source's.
        #expect(status.framesCaptured - result.middle.framesCaptured == status.framesDelivered - result.middle.framesDelivered)
        // In 100 ms windows (`toneLevel`): the source's tone is 1000.3 Hz on the program's clock, which a
        // whole second's Goertzel would read 1.3 dB low.
        let level = toneLevel(result.lastSecond, 1000)
        #expect(abs(level - 0.1) < 0.005, "the mixed tone's level \(level)")
        let rms = try #require(result.meters.inputs["net1"]?.rmsDBFS.first)
        #expect(abs(rms - -23.0) < 0.5, "the input's meter \(rms) dBFS")
    }

    /// Known issue: chunks of varying size. The estimator takes the last chunk as the source's quantum
    /// (the sawtooth's height, `ClockRatioEstimator.update`) and the target from the largest
    /// (`AudioCapture.target`): a backend whose chunks vary (a network stream's packets) reads as a level
    /// that jumps with each chunk's size. Measured here (chunks of 128 to 2048 frames, +300 ppm, 150 s):
    /// the drift is still found (311.7 ppm) and the tone plays at its level, but the target is twice the
    /// largest chunk (4096 frames, 85 ms) and the last resort cut 420 frames once settled. Written down
    /// as a known issue rather than hidden; a network backend will want a quantum that is not the last chunk.
    @Test func chunksOfVaryingSizeKnownIssue() throws {
        let result = try TimedSource(ppm: 300, chunkFrames: [256, 1024, 480, 2048, 128, 960]).run()
        let status = result.status
        let level = toneLevel(result.lastSecond, 1000)
        #expect(abs(level - 0.1) < 0.01, "the mixed tone's level \(level)")
        #expect(abs(status.estimatedPPM - 300) < 30, "estimated \(status.estimatedPPM) ppm: \(status)")
        withKnownIssue("chunks of varying size: the level jumps with each chunk's size, and the last resort cuts", isIntermittent: true) {
            #expect(status.framesDiscarded == 0 && status.framesInserted == 0 && status.underruns == 0, "\(status)")
        }
    }
}
