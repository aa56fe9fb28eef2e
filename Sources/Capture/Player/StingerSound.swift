import Synchronization
import StudioCore

/// The stingers' sound as one program audio input (the server names it `stinger`): silent until a
/// stinger starts, then that clip's sound (`StingerClip.sound`, decoded ahead with its pictures) from
/// the transition's first frame to the clip's end, and silent again. Computed from the sample index, as
/// the tone is: nothing is captured, buffered or resampled here, so the sound lands on the sample of
/// the frame it belongs to.
///
/// The program thread says when a sting starts (`play`, which only takes a short lock) as it sends
/// the transition's first frame out, a little after that frame's time: so the input is `latency`
/// frames behind the program (the block it fills at sample `k` carries the program's sample
/// `k - latency`) and says so in its status (`bufferDelay`, with a `node`), which the mixer compensates
/// as it does a captured input's buffer (`MixerStage`): the sound sits at its program time, and a
/// start announced up to `latency` late loses nothing.
public final class StingerSound: ClockedAudioInput {
    public let description: String
    public let format: AudioFormat
    /// Frames the input runs behind the program (at most the mixer's read-ahead, which it compensates).
    public let latency: Int

    private struct Play {
        var sound: [Float]
        /// The program's sample of the sound's first frame.
        var start: Int64
    }
    private let playing = Mutex<Play?>(nil)
    private let counters: Mutex<AudioInputStatus>

    public init(_ description: String = "stinger", format: AudioFormat = .program, latency: Int) {
        self.description = description
        self.format = format
        self.latency = max(0, latency)
        counters = Mutex(Self.fresh(description, latency: self.latency, rate: format.sampleRate, first: 0))
    }

    /// `clip`'s sound from the program's sample `start` (its first frame's) on; a sting playing stops
    /// there. A clip without sound stops any.
    public func play(_ clip: StingerClip, at start: Int64) {
        playing.withLock { $0 = clip.sound.map { Play(sound: $0, start: start) } }
    }

    public var status: AudioInputStatus { counters.withLock { $0 } }

    public func begin(first: Int64, origin: UInt64) {
        counters.withLock { $0 = Self.fresh(description, latency: latency, rate: format.sampleRate, first: first) }
    }

    public func fill(_ block: inout AudioChunk) {
        let channels = max(1, format.channels), count = block.frameCount
        // The program's samples this block carries.
        let first = block.firstSample - Int64(latency)
        let play = playing.withLock { play -> Play? in
            guard let current = play else { return nil }
            // Over once the block is past its end.
            if first >= current.start + Int64(current.sound.count / channels) { play = nil }
            return current
        }
        var heard = 0
        if let play {
            let frames = play.sound.count / channels
            let from = max(0, play.start - first), to = min(Int64(count), play.start + Int64(frames) - first)
            if from < to {
                block.samples.withUnsafeMutableBufferPointer { out in
                    play.sound.withUnsafeBufferPointer { sound in
                        let offset = Int(first - play.start)
                        for frame in Int(from)..<Int(to) {
                            for channel in 0..<channels { out[frame * channels + channel] = sound[(offset + frame) * channels + channel] }
                        }
                    }
                }
                heard = Int(to - from)
            }
        }
        counters.withLock {
            $0.framesDelivered += Int64(count)
            $0.framesCaptured += Int64(heard)
            $0.nextSample = block.firstSample + Int64(count)
        }
    }

    public func stalled(_ silence: AudioChunk) {
        counters.withLock {
            $0.framesDelivered += Int64(silence.frameCount)
            $0.nextSample = silence.firstSample + Int64(silence.frameCount)
        }
    }

    public func end() {}

    /// Always playing (silence between stings), `latency` behind the program.
    private static func fresh(_ name: String, latency: Int, rate: Int, first: Int64) -> AudioInputStatus {
        var status = AudioInputStatus(nextSample: first, state: "playing")
        status.node = name
        status.bufferTarget = latency
        status.bufferDelay = Double(latency) / Double(rate)
        status.bufferSeconds = status.bufferDelay
        return status
    }
}
