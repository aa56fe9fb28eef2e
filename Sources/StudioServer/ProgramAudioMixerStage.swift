import Synchronization
import StudioCore
import StudioSystem
import Capture
import Mixer

/// The mixer and the spans waiting for it, on the input set's thread only (its `deliver`): that one
/// thread is the invariant that makes the unsynchronised state safe, hence `@unchecked Sendable`
/// (`compensations` alone is read by control threads, under its lock).
///
/// Capture latency: each span's inputs reach the mixer `readAhead` (the `lag`, at most) before their
/// program time, so the mixer can place a captured input earlier by as much as it waited in its
/// jitter buffer (its status' `bufferSeconds`, or `bufferDelay` until the level is measured, followed
/// in `compensationStep`s): a microphone's audio
/// sits on the program timeline at its capture time, as a camera's picture does, whatever its buffer
/// holds (a target raised after underruns, a level off after a restart).
final class MixerStage: @unchecked Sendable {
    let mixer: AudioMixer
    let lagFrames: Int64
    let readAhead: Int64
    let deliver: @Sendable (AudioChunk) -> Void
    /// The sample after the newest span delivered by the clock (read by control threads).
    let heard = Atomic<Int64>(0)
    /// Each input's compensation now, in frames, by name (read by control threads).
    let compensations = Mutex<[String: Int]>([:])
    /// The inputs' capture status in slot order (set once, before the set starts).
    var captureStatus: (@Sendable () -> [AudioInputStatus])?
    /// A compensation follows the buffer once they differ by this much (seconds): small enough to keep
    /// audio and picture within a fraction of a frame, large enough not to chase the level's ripple.
    static let compensationStep = 0.004
    /// Seconds of audio between two readings of the inputs' buffers.
    static let measureInterval = 0.1
    private var waiting: [AudioInputBlocks] = []
    /// The input names by slot, as of the newest span.
    private var names: [(slot: Int, name: String)] = []
    /// The sample after the last span mixed.
    private var mixedUntil: Int64?
    private var framesSinceMeasure = 0

    init(mixer: AudioMixer, lagFrames: Int64, deliver: @escaping @Sendable (AudioChunk) -> Void) {
        self.mixer = mixer
        self.lagFrames = lagFrames
        readAhead = Int64(mixer.readAhead)
        self.deliver = deliver
    }

    func take(_ blocks: AudioInputBlocks, names: [(slot: Int, name: String)]) {
        let end = blocks.firstSample + Int64(blocks.frameCount)
        heard.store(end, ordering: .relaxed)
        // The program's audio starts with the clock's first span: the mixer hands on nothing before
        // it (the read-ahead's pre-roll, and the limiter's start-up delay).
        if mixer.origin == nil { mixer.origin = blocks.firstSample }
        waiting.append(blocks)
        // An input that joined has its latency followed from its first span (not up to a measure later).
        let joined = names.count != self.names.count || !zip(names, self.names).allSatisfy { $0.name == $1.name && $0.slot == $1.slot }
        self.names = names
        framesSinceMeasure += blocks.frameCount
        if joined || Double(framesSinceMeasure) >= Self.measureInterval * Double(mixer.format.sampleRate) {
            framesSinceMeasure = 0
            followCaptureLatency()
        }
        // A span's inputs are mixed `readAhead` before their own samples: the program's span
        // `first - readAhead`, due once the clock is `lag` past its end.
        mix(until: end - lagFrames + readAhead)
    }

    /// Mixes every span still waiting, then the program up to the newest sample heard (the inputs'
    /// read-ahead, with nothing after it): at the stop, once the set's thread is joined.
    func flush() {
        mix(until: .max)
        guard let from = mixedUntil else { return }
        let end = heard.load(ordering: .relaxed)
        if end > from { mixAndDeliver([:], first: from, frames: Int(end - from)) }
    }

    /// Mixes the waiting spans whose inputs end by `sample`, oldest first.
    private func mix(until sample: Int64) {
        while let oldest = waiting.first, oldest.firstSample + Int64(oldest.frameCount) <= sample {
            waiting.removeFirst()
            var inputs: [String: [Float]] = [:]
            for (slot, name) in names where slot >= 0 && slot < oldest.blocks.count { inputs[name] = oldest.blocks[slot].samples }
            mixAndDeliver(inputs, first: oldest.firstSample - readAhead, frames: oldest.frameCount)
        }
    }

    /// Mixes program samples `first..<first + frames` and hands on what the mixer returns (nothing
    /// before the program's origin).
    private func mixAndDeliver(_ inputs: [String: [Float]], first: Int64, frames: Int) {
        let chunk = mixer.mix(inputs, from: first, frames: frames)
        mixedUntil = first + Int64(frames)
        if chunk.frameCount > 0 { deliver(chunk) }
    }

    /// Sets each captured input's compensation to the time its samples wait in its buffer now, where
    /// that moved by a step or more (an input that does not play keeps its own).
    private func followCaptureLatency() {
        guard let all = captureStatus?() else { return }
        let rate = Double(mixer.format.sampleRate), step = Int(Self.compensationStep * rate)
        var changed: [String: Int] = [:]
        for (slot, name) in names where slot >= 0 && slot < all.count {
            let status = all[slot]
            guard status.node != nil, status.state == "playing" else { continue }
            // The buffer's smoothed level once its estimate has one (some seconds after a start), its
            // target until then (what the start's alignment brings it to).
            let waiting = status.bufferSeconds > 0 ? status.bufferSeconds : status.bufferDelay
            let measured = min(Int((waiting * rate).rounded()), Int(readAhead))
            if abs(measured - mixer.compensation(of: name)) >= step {
                mixer.setCompensation(name, frames: measured)
                changed[name] = mixer.compensation(of: name)
            }
        }
        if !changed.isEmpty { compensations.withLock { $0.merge(changed) { _, new in new } } }
    }
}
