import Foundation
import Mixer
import StudioCore
import TestSupport

/// Drives an `AudioMixer` as the audio thread does: blocks of `block` frames from sample 0, each input's
/// samples cut from a whole signal (nil in a block: the input is missing there), changes posted just
/// before the block that contains their sample (or earlier, as a control thread would). With a
/// `readAhead`, each block's inputs are cut from that many frames further on, as `ProgramAudio` hands them.
struct MixerRun {
    let mixer: AudioMixer
    let readAhead: Int
    var block = 480
    /// Each input's whole signal (interleaved stereo from sample 0).
    var signals: [String: [Float]] = [:]
    /// Blocks (by their first sample) in which an input is missing.
    var missing: (String, Int64) -> Bool = { _, _ in false }
    /// Called before each block's `mix` with the block's first sample (on the mixer's thread).
    var beforeBlock: (Int64, AudioMixer) -> Void = { _, _ in }

    init(readAhead: Int = 0) {
        mixer = AudioMixer(readAhead: readAhead)
        self.readAhead = readAhead
    }

    /// The program from sample 0 for `frames` frames (the mixer is run `latency` frames further so the
    /// last ones are out of the limiter), interleaved stereo; checks that the chunks join up.
    mutating func run(frames: Int) -> [Float] {
        var output: [Float] = []
        output.reserveCapacity(2 * frames)
        var start: Int64 = 0
        let total = Int64(frames + AudioMixer.latency)
        while start < total {
            let count = Int(min(Int64(block), total - start))
            var inputs: [String: [Float]] = [:]
            for (name, signal) in signals where !missing(name, start) {
                let from = min(signal.count, (Int(start) + readAhead) * 2), to = min(signal.count, (Int(start) + readAhead + count) * 2)
                inputs[name] = Array(signal[from..<to])
            }
            beforeBlock(start, mixer)
            let chunk = mixer.mix(inputs, from: start, frames: count)
            precondition(chunk.firstSample == Int64(output.count / 2), "the mixer's chunks do not join up")
            output += chunk.samples
            start += Int64(count)
        }
        return Array(output.prefix(2 * frames))
    }
}

/// Decibels of a linear amplitude.
func decibels(_ amplitude: Double) -> Double { 20 * log10(amplitude) }
