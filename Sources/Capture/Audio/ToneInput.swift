import Synchronization
import StudioCore

/// The test tone (or silence) as one input of an `AudioInputSet`: each block computed from its sample
/// index (`TestToneSource.sampleValue`), so it has no clock of its own and no drift. Always "playing",
/// with no source, no buffer and no stream; the stalled time of a whole-process stall is silence.
public final class ToneInput: ClockedAudioInput {
    public let signal: TestToneSource.Signal
    private let counters = Mutex(AudioInputStatus())

    public init(_ signal: TestToneSource.Signal) { self.signal = signal }

    /// Silence: an input that gives every span its length (`ProgramAudio`'s slot 0).
    public static var silence: ToneInput { ToneInput(.silence) }

    public var description: String { signal == .silence ? "silence" : "tone" }

    public var status: AudioInputStatus { counters.withLock { $0 } }

    public func begin(first: Int64, origin: UInt64) {
        counters.withLock { $0 = AudioInputStatus(nextSample: first, state: "playing") }
    }

    public func fill(_ block: inout AudioChunk) {
        let first = block.firstSample, count = block.frameCount
        let rate = block.format.sampleRate, channels = max(1, block.format.channels)
        if signal != .silence {
            let signal = self.signal
            block.samples.withUnsafeMutableBufferPointer { buffer in
                for frame in 0..<count {
                    let value = TestToneSource.sampleValue(at: first + Int64(frame), signal: signal, sampleRate: rate)
                    for channel in 0..<channels { buffer[frame * channels + channel] = value }
                }
            }
        }
        tally(block, captured: true)
    }

    public func stalled(_ silence: AudioChunk) { tally(silence, captured: false) }

    public func end() {}

    private func tally(_ span: AudioChunk, captured: Bool) {
        counters.withLock {
            $0.framesDelivered += Int64(span.frameCount)
            if captured { $0.framesCaptured += Int64(span.frameCount) }
            $0.nextSample = span.firstSample + Int64(span.frameCount)
        }
    }
}
