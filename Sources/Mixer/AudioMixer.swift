import Synchronization
import StudioCore
import StudioSystem

/// A change to the mixer, for a sample of the program's audio timeline.
public enum MixerChange: Sendable, Equatable {
    /// An input's settings (its strip is made if it has none).
    case input(String, MixerInputSettings)
    case master(MixerMasterSettings)
    /// What is on air from the change's sample on: the program's camera, its scene's name and the
    /// cameras that scene shows. An input that follows one of these names is up, the others down.
    case onAir(Set<String>)
    /// The input left the program for good (its source was removed): its strip goes, with its meter,
    /// its delay line and its compensation. A later input of that name gets a new strip.
    case remove(String)
}

/// The mixer's side that control threads use: changes posted for a program sample, and the meters.
/// Thread-safe: a short lock around a small array (posting) and around the last reading (meters).
public final class MixerControls: Sendable {
    struct Posted {
        var sample: Int64
        var order: Int
        var change: MixerChange
    }
    private let mailbox = Mutex<(posted: [Posted], count: Int)>(([], 0))
    private let reading = Mutex(MixerMeters.silent)
    private let late = Atomic<Int>(0)

    /// `change` takes effect at program sample `sample` exactly (at the first sample of the next block
    /// when that sample is already mixed: counted in `lateChanges`). Changes for one sample apply in the
    /// order they were posted.
    public func post(_ change: MixerChange, at sample: Int64) {
        mailbox.withLock { box in
            box.posted.append(Posted(sample: sample, order: box.count, change: change))
            box.count += 1
        }
    }

    /// The latest meter readings (updated every `AudioMixer.meterInterval` of audio).
    public var meters: MixerMeters { reading.withLock { $0 } }

    /// Changes that arrived after their sample was mixed (applied at the next block's first sample).
    public var lateChanges: Int { late.load(ordering: .relaxed) }

    func take() -> [Posted] {
        mailbox.withLock { box in
            // Nearly every block finds nothing: no copy of the (empty) buffer to hand out then.
            guard !box.posted.isEmpty else { return [] }
            defer { box.posted.removeAll(keepingCapacity: true) }
            return box.posted
        }
    }

    func publish(_ meters: MixerMeters) { reading.withLock { $0 = meters } }
    func countLate() { late.add(1, ordering: .relaxed) }
}

/// The program's audio mixer: per input a delay line, fader, pan, mute and audio-follow-video; then the
/// master gain and a brickwall limiter; meters per input (post-fader) and for the program, with its
/// EBU R128 loudness.
///
/// Runs on one audio thread: `mix` is not thread-safe and must always be called from the same thread
/// (the class is not `Sendable`). Other threads talk to it through `controls` only.
///
/// Timing: each change applies at its sample exactly: the frame at that sample index is the first one
/// that moves, on a declick ramp of `declickFrames` (5 ms) for a fader, pan or delay change, and of the
/// input's fade (at least 5 ms) for mute and follow. The limiter delays the program by
/// `latency` frames (2 ms); `mix` returns each block already placed on the inputs' timeline, so sample
/// N of the output is sample N of the inputs.
///
/// Capture latency: a mixer made with a `readAhead` is handed each input that many frames ahead of the
/// program (its caller holds the program back that long anyway), so it can place an input up to
/// `readAhead` frames earlier than it arrived (`setCompensation`): an input whose samples reach the
/// program clock late (a microphone's jitter buffer) is put back at its capture time. Without a
/// compensation an input is read `readAhead` behind, as if it had none.
public final class AudioMixer {
    public let format: AudioFormat
    public let controls = MixerControls()
    /// Frames of a fader/pan/delay change's ramp: 5 ms.
    public let declickFrames: Int
    /// The program is delayed this many frames behind the inputs by the limiter's look-ahead (2 ms).
    public static let latency = Limiter.latency
    /// How much audio passes between two meter readings: 100 ms.
    public static let meterInterval = 0.1
    /// The longest run the strips process at once (changes split runs further).
    static let slice = 1024

    /// Frames the inputs handed to `mix` are ahead of the program (see the type's doc).
    public let readAhead: Int
    /// The most `readAhead` may be: 8192 frames (171 ms at 48 kHz).
    public static let maximumReadAhead = ChannelStrip.maximumReadAhead
    private var strips: [ChannelStrip] = []
    private var stripIndex: [String: Int] = [:]
    /// Compensations set for inputs that have no strip yet.
    private var compensations: [String: Int] = [:]
    private var pending: [MixerControls.Posted] = []
    private var onAir: Set<String> = []
    private var master = MixerMasterSettings.standard
    private var masterGain: Ramp
    private var limiter: Limiter
    private var programMeter: AudioLevelMeter
    private let loudnessMeter: LoudnessMeter?
    private var bus: [Float] = []
    private var nextMeterReading: Int64?
    /// The sample after the last call's span: where the next call should start.
    private var nextSample: Int64?
    /// The program's first sample: nothing before it is returned (the limiter's start-up delay, a caller's
    /// pre-roll). Nil until set, or until the first call, which sets it to that call's `first`.
    public var origin: Int64?

    public init(format: AudioFormat = .program, readAhead: Int = 0) {
        precondition(format.channels == 2, "the mixer makes stereo program audio")
        precondition((0...Self.maximumReadAhead).contains(readAhead), "read-ahead beyond the delay lines")
        self.format = format
        self.readAhead = readAhead
        declickFrames = max(1, format.sampleRate / 200)
        masterGain = Ramp(1)
        limiter = Limiter(ceiling: Float(linearGain(decibels: master.ceilingDBFS)), sampleRate: format.sampleRate)
        programMeter = AudioLevelMeter(sampleRate: format.sampleRate, channels: 2)
        loudnessMeter = LoudnessMeter(format: format)
    }

    /// The names of the inputs that have a strip, in the order they got one.
    public var inputNames: [String] { strips.map(\.name) }

    /// Frames the limiter has reduced since the start.
    public var limitedFrames: Int { limiter.limitedFrames }
    /// Samples the limiter's last-resort clamp cut by more than float rounding (0 when it works).
    public var clampedSamples: Int { limiter.clampedSamples }

    /// Places input `name` `frames` earlier than it arrives (clamped to 0...readAhead), from the next
    /// call's first frame on, cross-faded like a delay change: its capture latency, so its audio sits at
    /// its capture time. Call on the mixer's thread.
    public func setCompensation(_ name: String, frames: Int) {
        if let index = stripIndex[name] {
            strips[index].setCompensation(frames, declick: declickFrames)
        } else {
            compensations[name] = frames
        }
    }

    /// Frames input `name` is placed earlier than it arrives (see `setCompensation`).
    public func compensation(of name: String) -> Int {
        stripIndex[name].map { strips[$0].compensation } ?? min(max(compensations[name] ?? 0, 0), readAhead)
    }

    /// Mixes the program's samples `first..<first + frames` (program timeline) from `inputs`: for each
    /// input by name, its interleaved stereo samples for the same span, already on the program's clock
    /// (with a `readAhead`: for `first + readAhead ..< first + readAhead + frames`).
    /// An input not in `inputs` (or a shorter array: its tail; or a sample that is NaN or infinite) is
    /// silence in its own strip only; an
    /// input with no strip gets one at unity. Returns the program for `first - latency ..< first + frames
    /// - latency`, nothing before `origin` (by default the first call's `first`: the limiter's start-up
    /// delay is cut).
    /// Calls follow each other on the timeline (the audio clock makes a stall silence, not a gap); a
    /// call that does not start where the last one ended clears the delay lines (nothing of the skipped
    /// span is played) and its returned chunk begins with the 2 ms the limiter still held.
    public func mix(_ inputs: [String: [Float]], from first: Int64, frames: Int) -> AudioChunk {
        let channels = 2, frames = max(0, frames)
        if bus.count < frames * channels { bus = [Float](repeating: 0, count: frames * channels) }
        let inbox = controls.take()
        if !inbox.isEmpty {
            pending.append(contentsOf: inbox)
            pending.sort { ($0.sample, $0.order) < ($1.sample, $1.order) }
        }
        // Settings due now first, so an input set up for this block starts with them (no ramp from unity).
        applyDue(at: first, blockStart: first)
        if inputs.keys.contains(where: { stripIndex[$0] == nil }) {
            // In name order, so the strips (and the order the bus sums them in) are the same every run.
            for name in inputs.keys.sorted() where stripIndex[name] == nil { addStrip(name, settings: .unity) }
        }
        var metersClosed = false
        let end = first + Int64(frames)
        if first != nextSample {
            // The first call, or a jump on the timeline: the delay lines hold nothing of the new span.
            if nextSample != nil { for strip in strips { strip.clearDelayLine() } }
            nextMeterReading = first + Int64(Self.meterInterval * Double(format.sampleRate))
        }
        nextSample = end
        bus.withUnsafeMutableBufferPointer { bus in
            var position = first
            while position < end {
                applyDue(at: position, blockStart: first)
                var stop = min(end, position + Int64(Self.slice))
                if let next = pending.first?.sample, next > position { stop = min(stop, next) }
                if let reading = nextMeterReading, reading > position { stop = min(stop, reading) }
                let offset = Int(position - first), count = Int(stop - position)
                let slice = UnsafeMutableBufferPointer(rebasing: bus[(offset * channels)..<((offset + count) * channels)])
                slice.update(repeating: 0)
                for strip in strips {
                    if let samples = inputs[strip.name] {
                        samples.withUnsafeBufferPointer { buffer in
                            let available = max(0, min(count, buffer.count / channels - offset))
                            if available > 0 {
                                let part = UnsafeBufferPointer(rebasing: buffer[(offset * channels)..<((offset + available) * channels)])
                                strip.mix(part, start: position, frames: available, into: slice)
                            }
                            if available < count {
                                let rest = UnsafeMutableBufferPointer(rebasing: slice[(available * channels)...])
                                strip.mix(nil, start: position + Int64(available), frames: count - available, into: rest)
                            }
                        }
                    } else {
                        strip.mix(nil, start: position, frames: count, into: slice)
                    }
                }
                applyMaster(slice)
                limiter.process(slice)
                position = stop
                if let reading = nextMeterReading, position >= reading {
                    for strip in strips { strip.closeMeterBlock(end: position) }
                    metersClosed = true
                    nextMeterReading = reading + Int64(Self.meterInterval * Double(format.sampleRate))
                }
            }
        }
        var output = Array(bus[0..<(frames * channels)])
        var start = first - Int64(Self.latency)
        if origin == nil { origin = first }
        if let origin, start < origin {
            let skipped = Int(min(origin - start, Int64(frames)))
            output.removeFirst(skipped * channels)
            start += Int64(skipped)
        }
        let chunk = AudioChunk(format: format, samples: output, pts: MediaTime(count: start, rate: Rational(Int32(format.sampleRate))),
                               firstSample: start)
        programMeter.add(AudioLevelBlock(chunk))
        loudnessMeter?.add(chunk.samples)
        if metersClosed { publishMeters(end: end) }
        return chunk
    }

    /// Applies every pending change due at or before `position` (a change for a sample already mixed
    /// is late: applied now, at `blockStart`'s block).
    private func applyDue(at position: Int64, blockStart: Int64) {
        var due = 0
        while due < pending.count, pending[due].sample <= position {
            if pending[due].sample < blockStart { controls.countLate() }
            apply(pending[due].change)
            due += 1
        }
        if due > 0 { pending.removeFirst(due) }
    }

    private func apply(_ change: MixerChange) {
        switch change {
        case .input(let name, let settings):
            if let index = stripIndex[name] {
                strips[index].apply(settings, isOpen: isOpen(settings), declick: declickFrames, sampleRate: format.sampleRate)
            } else {
                addStrip(name, settings: settings)
            }
        case .master(let settings):
            master = settings
            masterGain.set(Float(linearGain(decibels: settings.gainDB)), over: declickFrames)
            limiter.ceiling = Float(linearGain(decibels: settings.ceilingDBFS))
        case .remove(let name):
            compensations[name] = nil
            guard let index = stripIndex.removeValue(forKey: name) else { return }
            strips.remove(at: index)
            for (position, strip) in strips.enumerated() { stripIndex[strip.name] = position }
        case .onAir(let names):
            onAir = names
            for strip in strips where strip.settings.follow != nil {
                strip.setOpen(isOpen(strip.settings), declick: declickFrames, sampleRate: format.sampleRate)
            }
        }
    }

    private func isOpen(_ settings: MixerInputSettings) -> Bool {
        !settings.muted && (settings.follow.map { onAir.contains($0) } ?? true)
    }

    private func addStrip(_ name: String, settings: MixerInputSettings) {
        stripIndex[name] = strips.count
        let strip = ChannelStrip(name: name, settings: settings, isOpen: isOpen(settings), sampleRate: format.sampleRate, readAhead: readAhead)
        if let frames = compensations.removeValue(forKey: name) { strip.setCompensation(frames, declick: 0) }
        strips.append(strip)
    }

    private func applyMaster(_ slice: UnsafeMutableBufferPointer<Float>) {
        if !masterGain.isMoving {
            let gain = masterGain.value
            if gain != 1 { for index in slice.indices { slice[index] *= gain } }
            return
        }
        for frame in 0..<(slice.count / 2) {
            let gain = masterGain.next()
            slice[2 * frame] *= gain
            slice[2 * frame + 1] *= gain
        }
    }

    private func publishMeters(end: Int64) {
        var inputs: [String: AudioLevels] = [:]
        for strip in strips { inputs[strip.name] = strip.meter.levels }
        controls.publish(MixerMeters(inputs: inputs, program: programMeter.levels,
                                     loudness: loudnessMeter?.loudness ?? ProgramLoudness(), end: end))
    }
}
