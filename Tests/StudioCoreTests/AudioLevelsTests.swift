import Foundation
import Testing
import StudioCore

@Suite struct AudioLevelsTests {
    /// `frames` stereo frames of a sine at `amplitude` on the left and `amplitude * rightGain` on the right.
    static func stereoSine(frames: Int, amplitude: Float, rightGain: Float = 1, frequency: Double = 1000, rate: Int = 48000,
                           from first: Int = 0) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let value = amplitude * Float(sin(2 * Double.pi * frequency * Double(first + frame) / Double(rate)))
            samples[frame * 2] = value
            samples[frame * 2 + 1] = value * rightGain
        }
        return samples
    }

    @Test func aFullScaleSinePeaksAtZeroWithAnRMSOfMinusThree() {
        let levels = AudioLevels.measure(Self.stereoSine(frames: 4800, amplitude: 1), channels: 2)
        for channel in 0..<2 {
            #expect(abs(levels.peakDBFS[channel]) < 0.01, "\(levels)")
            #expect(abs(levels.rmsDBFS[channel] - (-3.0103)) < 0.01, "\(levels)")
        }
    }

    @Test func silenceReadsTheFloor() {
        let levels = AudioLevels.measure([Float](repeating: 0, count: 960), channels: 2)
        #expect(levels == AudioLevels.silent(channels: 2))
        #expect(levels.peakDBFS == [-96, -96] && levels.rmsDBFS == [-96, -96])
        // Quieter than the floor reads the floor too, never -inf.
        #expect(AudioLevels.dbfs(1e-9) == AudioLevels.floor && AudioLevels.dbfs(0) == AudioLevels.floor)
    }

    @Test func eachChannelIsMeasuredOnItsOwn() {
        // Left at -20 dBFS peak, right 20 dB lower.
        let levels = AudioLevels.measure(Self.stereoSine(frames: 4800, amplitude: 0.1, rightGain: 0.1), channels: 2)
        #expect(abs(levels.peakDBFS[0] - (-20)) < 0.01 && abs(levels.peakDBFS[1] - (-40)) < 0.01, "\(levels)")
        #expect(abs(levels.rmsDBFS[0] - (-23.01)) < 0.02 && abs(levels.rmsDBFS[1] - (-43.01)) < 0.02, "\(levels)")
    }

    @Test func theMeterForgetsPeaksPastItsWindowButHoldsThemLonger() {
        var meter = AudioLevelMeter(sampleRate: 48000, channels: 2)
        #expect(meter.levels == .silent(channels: 2))
        // 10 ms chunks: a loud 50 ms burst, then quiet.
        var sample: Int64 = 0
        func feed(_ seconds: Double, amplitude: Float) {
            for _ in 0..<Int((seconds / 0.01).rounded()) {
                let samples = Self.stereoSine(frames: 480, amplitude: amplitude, from: Int(sample))
                sample += 480
                meter.add(AudioLevelBlock(samples, channels: 2, end: sample))
            }
        }
        feed(0.05, amplitude: 1)
        #expect(abs(meter.levels.peakDBFS[0]) < 0.01)
        feed(0.5, amplitude: 0.01)  // -40 dBFS
        let quiet = meter.levels
        #expect(abs(quiet.peakDBFS[0] - (-40)) < 0.1 && abs(quiet.rmsDBFS[1] - (-43.01)) < 0.1, "\(quiet)")
        #expect(abs(quiet.peakHoldDBFS[0]) < 0.01, "the burst is held: \(quiet)")
        feed(1.5, amplitude: 0.01)
        #expect(abs(meter.levels.peakHoldDBFS[0] - (-40)) < 0.1, "the hold lets go after 1.5 s: \(meter.levels)")
    }

    @Test func aChunkIsMeasuredWithItsChannelsAndTimeline() {
        let chunk = AudioChunk(format: .program, samples: Self.stereoSine(frames: 480, amplitude: 0.5, rightGain: 0),
                               pts: .zero, firstSample: 960)
        let block = AudioLevelBlock(chunk)
        #expect(block.end == 1440 && block.frames == 480 && block.peak.count == 2)
        #expect(block.peak[1] == 0 && abs(block.peak[0] - 0.5) < 0.001)
    }
}
