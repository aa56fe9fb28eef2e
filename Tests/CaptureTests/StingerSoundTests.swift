import Testing
import StudioCore
import Capture

/// The stingers' input: silent until `play`, then the clip's sound on the program's samples from the
/// start it was given (each block `latency` behind the program), silent after its end.
@Suite struct StingerSoundTests {
    static func clip(sound: [Float]?) -> StingerClip {
        let frame = VideoFrame.allocate(format: .i420, width: 16, height: 16)
        return StingerClip(path: "sting.mov", pictures: [.init(frame: frame, alpha: nil)],
                           timing: StingerTiming(times: [0], length: 33_333_333), sound: sound)
    }

    /// Fills the input's blocks for program samples `0..<frames` (block index = program sample + latency).
    static func program(_ input: StingerSound, frames: Int, block: Int = 480) -> [Float] {
        let format = AudioFormat.program, channels = format.channels
        var out: [Float] = []
        var first = Int64(input.latency)
        input.begin(first: first, origin: 0)
        while out.count < frames * channels {
            var chunk = AudioChunk(format: format, samples: [Float](repeating: 0, count: block * channels), pts: .zero, firstSample: first)
            input.fill(&chunk)
            out += chunk.samples
            first += Int64(block)
        }
        return Array(out.prefix(frames * channels))
    }

    @Test func theClipsSoundLandsOnTheSamplesFromItsStartAndNowhereElse() {
        let input = StingerSound(latency: 4_800)
        // Frame k of the sound is k + 1 in both channels (never 0).
        let sound = (0..<1_000).flatMap { [Float($0 + 1), Float($0 + 1)] }
        input.play(Self.clip(sound: sound), at: 1_234)
        let out = Self.program(input, frames: 4_000)
        let heard = stride(from: 0, to: out.count, by: 2).filter { out[$0] != 0 }.map { $0 / 2 }
        #expect(heard.first == 1_234 && heard.last == 2_233 && heard.count == 1_000, "\(heard.first ?? -1)...\(heard.last ?? -1)")
        #expect(out[2 * 1_234] == 1 && out[2 * 2_233 + 1] == 1_000)
        #expect(input.status.framesCaptured == 1_000 && input.status.state == "playing")
        // Its delay, for the mixer to compensate: the latency.
        #expect(input.status.node == "stinger" && input.status.bufferDelay == 0.1)
    }

    @Test func aClipWithoutSoundStopsTheOnePlayingAndPlaysNothing() {
        let input = StingerSound(latency: 480)
        input.play(Self.clip(sound: [Float](repeating: 1, count: 2_000)), at: 0)
        input.play(Self.clip(sound: nil), at: 0)
        #expect(Self.program(input, frames: 2_000).allSatisfy { $0 == 0 })
    }
}
