import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture
import Mixer
import StudioConfig

/// The program's audio: every input on one clock (`AudioInputSet`, thread `cap.audio`), mixed there
/// (`AudioMixer`: gain, mute, pan, delay, audio-follow-video, master, limiter, meters) and handed to the
/// AAC encoder. Nothing here waits on disk, network or the database: the audio thread takes each span,
/// mixes the span `lag` older than the newest and submits it.
///
/// The inputs: `tone` (named `tone`), `silence` (none: the program is silence), `pipewire` or
/// `pipewire:NODE` (one microphone, `mic1`), `pipewire:all` (every PipeWire Audio/Source discovery finds,
/// present, lost and back, each under a stable name: `mic1`, `mic2`...), `microphones` (every microphone
/// the backends' discoveries find, the desktop's default one up and the others muted: `standby`). The
/// microphones come from the backends (`MicrophoneDiscovery`, `SourceBackends.microphoneDiscoveries`):
/// nothing here knows PipeWire. A source's own sound (a network camera's) is ProgramAudio+SourceAudio.swift.
///
/// Timing: a change (`studio audio`, a cut for audio-follow-video) is posted to the mixer for a sample of
/// the program's audio timeline. The mixer runs `lag` behind the clock, so a change for "now" (the
/// newest sample the clock delivered) or for a cut's pts (posted by the program thread as it sends the
/// frame out) is never late: it applies at its sample exactly.
final class ProgramAudio: Sendable {
    /// How far the mixer runs behind the audio clock (seconds): room for a change to arrive before its
    /// sample is mixed, a cut's included (the program thread posts it once its frame is out, later than
    /// its pts by the frame's work and, on a loaded machine, by the wait for a core).
    static let lag = 0.1

    struct Input: Sendable {
        var name: String
        /// What it captures, as its input says (`tone`, `pipewire:NODE`, `pipewire:default`).
        var source: String
        /// The backend's name for the microphone it captures (a PipeWire node; nil: the default, or no microphone).
        var node: String?
        /// A microphone (not the tone).
        var isMicrophone: Bool
        /// Its block in each span of the set.
        var slot: Int
        var identity: String?
        var displayName: String?
        var usbDevice: String?
        var present: Bool
        /// `audio_input_found` was said (then `lost` and `back`).
        var announced = false
        /// A source's own sound (`attach(sourceAudio:of:)`): the feed in the set, so the same feed
        /// reported again is not added twice.
        var feed: ObjectIdentifier?
    }

    struct State: Sendable {
        var inputs: [Input]
        var settings: [String: MixerInputSettings]
        var master: MixerMasterSettings
    }

    let format: AudioFormat
    /// `tone`, `silence`, `microphones`, `pipewire`, `pipewire:NODE` or `pipewire:all`.
    let source: AudioSource
    // The set, the mixer's controls and stage, and the shared state: also used by the source-audio
    // extension (ProgramAudio+SourceAudio.swift).
    let set: AudioInputSet
    let controls: MixerControls
    let stage: MixerStage
    /// The stingers' sound, an input (`stinger`) while a loaded stinger has some (ProgramAudio+Stinger.swift).
    let stinger: StingerSound
    /// The backends' microphone discoveries it watches (`pipewire:all`, `microphones`), or the one its
    /// single microphone comes from (`pipewire:NODE`, not watched).
    private let discoveries: [any MicrophoneDiscovery]
    private let watching: Bool
    private let relay: DiscoveryRelay
    let shared: ProgramAudioShared
    let events: any EventSink
    let log: ServerLog
    /// The input names are `namePrefix` + a number (`mic1`).
    static let namePrefix = "mic"
    /// How `microphones` starts every microphone but the default one (unless the config's pins say
    /// otherwise): listed, at 0 dB, muted, ready to raise.
    static let standby = { var settings = MixerInputSettings.unity; settings.muted = true; return settings }()

    /// - Parameters:
    ///   - microphones: the discoveries `source` takes its microphones from (none for `tone` or `silence`).
    ///   - settings: each input's settings by name (the config's pins), applied from the start.
    ///   - naming: the stable name of a source (identity, display name), given the names taken.
    ///   - deliver: called on the audio thread with each mixed chunk; must not block.
    init(source: AudioSource, microphones: [any MicrophoneDiscovery] = [], format: AudioFormat = .program, settings: [String: MixerInputSettings] = [:],
         master: MixerMasterSettings = .standard, events: any EventSink, log: ServerLog,
         naming: @escaping @Sendable (_ identity: String, _ displayName: String, _ taken: Set<String>) -> String = ProgramAudio.nextName,
         deliver: @escaping @Sendable (AudioChunk) -> Void) {
        self.format = format
        self.source = source
        self.events = events
        self.log = log
        var settings = settings
        // Slot 0 is silence that belongs to no input: it gives every span its length, inputs or none.
        var sources: [any ClockedAudioInput] = [ToneInput.silence]
        var inputs: [Input] = []
        func add(_ name: String, _ input: any ClockedAudioInput, _ found: FoundMicrophone? = nil, isMicrophone: Bool = true, present: Bool) {
            inputs.append(Input(name: name, source: found?.label ?? input.description, node: found?.node, isMicrophone: isMicrophone, slot: sources.count,
                                identity: found?.identity, displayName: found?.displayName, usbDevice: found?.usbDevice, present: present))
            sources.append(input)
        }
        let relay = DiscoveryRelay()
        self.relay = relay
        discoveries = microphones
        watching = source == .pipewireAll || source == .microphones
        switch source {
        case .tone: add("tone", ToneInput(.standard), isMicrophone: false, present: true)
        case .silence: break
        case .pipewire(let node):
            guard let discovery = microphones.first else { break }
            let node = node.trimmingCharacters(in: .whitespaces)
            let chosen = discovery.microphone(named: node.isEmpty ? nil : node)
            // Not watched: its input says itself whether it is there.
            add(chosen.node == nil ? Self.namePrefix + "1" : naming(chosen.identity, chosen.displayName, []),
                Self.microphone(chosen, from: discovery, slot: sources.count, format: format, log: log), present: true)
            inputs[inputs.count - 1].node = chosen.node
        case .pipewireAll, .microphones:
            // The microphones present now become the set's first inputs; `relay` holds their reports
            // (and any later ones) until this object exists.
            for (index, discovery) in microphones.enumerated() {
                discovery.watch(onFound: { relay.found($0, by: index) }, onLost: { relay.lost($0) })
            }
            // Known once each has had its first look.
            let defaultIdentity = microphones.lazy.compactMap(\.defaultIdentity).first
            var taken = Set<String>()
            for discovery in microphones {
                for found in discovery.microphones {
                    let name = naming(found.identity, found.displayName, taken)
                    taken.insert(name)
                    add(name, Self.microphone(found, from: discovery, slot: sources.count, format: format, log: log), found, present: false)
                    if source == .microphones, settings[name] == nil, found.identity != defaultIdentity { settings[name] = Self.standby }
                }
            }
        }
        nameSource = naming
        let lagFrames = Int64(Self.lag * Double(format.sampleRate))
        let mixer = AudioMixer(format: format, readAhead: Int(min(lagFrames, Int64(AudioMixer.maximumReadAhead))))
        controls = mixer.controls
        stinger = StingerSound(Self.stingerInput, format: format, latency: mixer.readAhead)
        shared = ProgramAudioShared(State(inputs: inputs, settings: settings, master: master))
        // From the first sample the mixer mixes: the read-ahead's pre-roll before the clock's sample 0
        // (`MixerStage`), so no strip starts at unity and ramps to its setting.
        let start = -Int64(mixer.readAhead)
        for (input, value) in settings.sorted(by: { $0.key < $1.key }) where value != .unity { controls.post(.input(input, value), at: start) }
        if master != .standard { controls.post(.master(master), at: start) }
        let stage = MixerStage(mixer: mixer, lagFrames: lagFrames, deliver: deliver)
        self.stage = stage
        let shared = self.shared
        set = AudioInputSet(inputs: sources, format: format, deliver: { blocks in
            stage.take(blocks, names: shared.state.withLock { $0.inputs.map { ($0.slot, $0.name) } })
        })
        stage.captureStatus = { [weak set] in set?.status ?? [] }
        relay.attach(self)
    }

    private let nameSource: @Sendable (String, String, Set<String>) -> String

    /// The one place a microphone becomes an input (its backend's, on the set's clock), its log lines
    /// prefixed with its block's number and source (`audio input 2 (pipewire:NODE): ...`).
    static func microphone(_ found: FoundMicrophone, from discovery: any MicrophoneDiscovery, slot: Int, format: AudioFormat,
                           log: ServerLog) -> any ClockedAudioInput {
        discovery.makeInput(for: found, format: format, report: { log.info("audio input \(slot + 1) (\(found.label)): \($0)") })
    }

    /// `mic1`, `mic2`...: the first number not taken.
    static func nextName(identity: String, displayName: String, taken: Set<String>) -> String {
        var number = 1
        while taken.contains(namePrefix + String(number)) { number += 1 }
        return namePrefix + String(number)
    }

    func start(origin: UInt64) { set.start(origin: origin) }

    /// Stops the inputs, then mixes the spans still waiting for the mixer (the last `lag` of audio) and
    /// hands them on: the program's audio ends with its video.
    func stop() {
        if watching { for discovery in discoveries { discovery.stop() } }
        set.stop()
        // The set's thread is joined: this thread is now the only one touching the mixer.
        stage.flush()
    }

    // MARK: What the operator sees

    var inputs: [Input] { shared.state.withLock { $0.inputs } }
    var settings: [String: MixerInputSettings] { shared.state.withLock { $0.settings } }
    var master: MixerMasterSettings { shared.state.withLock { $0.master } }
    var meters: MixerMeters { controls.meters }
    var lateChanges: Int { controls.lateChanges }
    /// Each input's capture status, by name.
    var status: [String: AudioInputStatus] {
        let all = set.status
        return Dictionary(uniqueKeysWithValues: inputs.compactMap { input in input.slot < all.count ? (input.name, all[input.slot]) : nil })
    }

    /// Seconds from an input's capture to the encoder's input now (see `AudioReply.InputView.latencyMS`):
    /// its buffer, the clock's block and the mixer's `lag`; nil while a captured input does not play.
    func latency(of status: AudioInputStatus?) -> Double? {
        let fixed = set.chunkDuration + Self.lag
        guard let status else { return fixed }
        guard status.state == "playing" else { return nil }
        return (status.node == nil ? 0 : status.bufferSeconds) + fixed
    }

    /// Seconds input `name`'s audio is placed earlier on the program timeline than it reached the
    /// program clock: its capture latency, compensated (see `MixerStage`).
    func compensation(of name: String) -> Double {
        Double(stage.compensations.withLock { $0[name] } ?? 0) / Double(format.sampleRate)
    }

    /// Why the program's audio is silence, for the operator (`studio audio`, `studio status`, the
    /// console); nil while it has an input. Said for the microphones (`microphones`, `pipewire:all`):
    /// none found, or no daemon to ask.
    var silenceReason: String? {
        switch source {
        case .silence: return "audio.source is silence"
        case .microphones, .pipewireAll:
            guard !inputs.contains(where: \.present) else { return nil }
            if let unreachable = discoveries.lazy.compactMap(\.unreachable).first { return "no microphone: \(unreachable)" }
            let finders = discoveries.map(\.finder)
            guard let last = finders.last else { return "no microphone: no backend finds microphones" }
            let who = finders.count == 1 ? "\(last) has" : finders.dropLast().joined(separator: ", ") + " and \(last) have"
            return "no microphone: \(who) no audio source (one plugged in is taken as it appears)"
        case .tone, .pipewire: return nil
        }
    }

    /// The newest sample the clock delivered (the program's audio "now").
    var now: Int64 { stage.heard.load(ordering: .relaxed) }

    /// The audio sample of a program time.
    func sample(at time: MediaTime) -> Int64 {
        let scaled = time.microseconds * Int64(format.sampleRate)
        return scaled >= 0 ? (scaled + 500_000) / 1_000_000 : -((-scaled + 500_000) / 1_000_000)
    }

    func programTime(ofSample sample: Int64) -> MediaTime { MediaTime(count: sample, rate: Rational(Int32(format.sampleRate))) }

    /// The camera an input belongs to (a webcam's own microphone), from what the devices say: the same
    /// USB device (a V4L2 camera's bus info, when its identity carries it), or the same USB name (ALSA's
    /// `alsa_input.usb-VENDOR_MODEL_SERIAL-NN.profile` and udev's `/dev/v4l/by-id/usb-VENDOR_MODEL_SERIAL-video-index0`).
    static func camera(of input: Input, among cameras: [(name: String, identity: String)]) -> String? {
        if let usb = input.usbDevice, let camera = cameras.first(where: { $0.identity.hasPrefix("v4l2:\(usb):") }) { return camera.name }
        guard let node = input.node, node.hasPrefix("alsa_input.usb-") else { return nil }
        var device = node.dropFirst("alsa_input.".count)
        // The profile (`.analog-stereo`), then the interface number (`-02`).
        if let dot = device.lastIndex(of: ".") { device = device[..<dot] }
        if let dash = device.lastIndex(of: "-"), device[device.index(after: dash)...].first?.isNumber == true { device = device[..<dash] }
        return cameras.first { $0.identity.hasPrefix("v4l2:by-id:\(device)-video") }?.name
    }

    // MARK: Changes

    /// Sets input `name`'s settings from the program's audio now on; answers the sample they apply at
    /// (nil for an unknown input name).
    func set(_ name: String, to settings: MixerInputSettings) -> Int64? {
        shared.state.withLock { state -> Int64? in
            guard state.inputs.contains(where: { $0.name == name }) else { return nil }
            let sample = now
            state.settings[name] = settings
            controls.post(.input(name, settings), at: sample)
            return sample
        }
    }

    /// Sets the master from now on; answers the sample it applies at.
    func setMaster(_ master: MixerMasterSettings) -> Int64 {
        shared.state.withLock { state in
            let sample = now
            state.master = master
            controls.post(.master(master), at: sample)
            return sample
        }
    }

    /// What is on air from program time `time` on (a camera, or a scene's name and its cameras).
    func onAir(_ names: Set<String>, at time: MediaTime) {
        controls.post(.onAir(names), at: sample(at: time))
    }

    // MARK: Discovery (pipewire:all, microphones)

    /// `source`, reported by discovery `index` of `discoveries`, is there: found, back, or (at the start)
    /// the input made for it is announced.
    fileprivate func found(_ source: FoundMicrophone, by index: Int) {
        enum Said { case found, back, nothing }
        let (name, said, addedSlot) = shared.state.withLock { state -> (String, Said, Bool) in
            if let index = state.inputs.firstIndex(where: { $0.identity == source.identity }) {
                var input = state.inputs[index]
                let said: Said = !input.announced ? .found : input.present ? .nothing : .back
                input.present = true
                input.announced = true
                input.displayName = source.displayName
                input.usbDevice = source.usbDevice
                state.inputs[index] = input
                return (input.name, said, false)
            }
            let name = nameSource(source.identity, source.displayName, Set(state.inputs.map(\.name)))
            // `microphones`: one found mid-show starts muted unless it is the default and none is up yet.
            let anyUp = state.inputs.contains { $0.present && !(state.settings[$0.name]?.muted ?? false) }
            if self.source == .microphones, state.settings[name] == nil, anyUp || source.identity != discoveries[index].defaultIdentity {
                state.settings[name] = Self.standby
                controls.post(.input(name, Self.standby), at: now)
            }
            state.inputs.append(Input(name: name, source: source.label, node: source.node, isMicrophone: true, slot: -1, identity: source.identity,
                                      displayName: source.displayName, usbDevice: source.usbDevice, present: true, announced: true))
            return (name, .found, true)
        }
        if addedSlot { attachLate(name, source, from: discoveries[index]) }
        var details = ["input": name, "identity": source.identity, "display_name": source.displayName]
        if let node = source.node { details["node"] = node }
        if let usb = source.usbDevice { details["usb_device"] = usb }
        switch said {
        case .found: events.emit(StudioEvent(kind: .audioInputFound, programTime: programTime(ofSample: now), details: details))
        case .back: events.emit(StudioEvent(kind: .audioInputBack, programTime: programTime(ofSample: now), details: details))
        case .nothing: break
        }
    }

    fileprivate func lost(_ source: FoundMicrophone) {
        let name = shared.state.withLock { state -> String? in
            guard let index = state.inputs.firstIndex(where: { $0.identity == source.identity && $0.present }) else { return nil }
            state.inputs[index].present = false
            return state.inputs[index].name
        }
        guard let name else { return }
        events.emit(StudioEvent(kind: .audioInputLost, programTime: programTime(ofSample: now),
                                details: ["input": name, "identity": source.identity, "node": source.node ?? ""]))
    }

    /// A source found after the start: one more input of the set, captured from the next span on.
    private func attachLate(_ name: String, _ source: FoundMicrophone, from discovery: any MicrophoneDiscovery) {
        // `set.nextSlot` numbers its log lines (the block it will most likely get: a report replayed by the
        // relay at the start may race one from discovery); the slot kept is the one `add` answers.
        let slot = set.add(Self.microphone(source, from: discovery, slot: set.nextSlot, format: format, log: log))
        shared.state.withLock { state in
            if let index = state.inputs.firstIndex(where: { $0.name == name }) { state.inputs[index].slot = slot }
        }
    }
}

/// The inputs and settings, shared by control threads and the audio thread (a short lock).
final class ProgramAudioShared: Sendable {
    let state: Mutex<ProgramAudio.State>
    init(_ state: ProgramAudio.State) { self.state = Mutex(state) }
}

/// Holds discovery's reports until the `ProgramAudio` they are for exists, then forwards them (in order).
private final class DiscoveryRelay: Sendable {
    private enum Report { case found(FoundMicrophone, by: Int), lost(FoundMicrophone) }
    private let box = Mutex<(target: ProgramAudio?, early: [Report])>((nil, []))

    func found(_ source: FoundMicrophone, by discovery: Int) { forward(.found(source, by: discovery)) }
    func lost(_ source: FoundMicrophone) { forward(.lost(source)) }

    func attach(_ target: ProgramAudio) {
        let early = box.withLock { box in
            box.target = target
            defer { box.early = [] }
            return box.early
        }
        for report in early { deliver(report, to: target) }
    }

    private func forward(_ report: Report) {
        guard let target = box.withLock({ box -> ProgramAudio? in
            if box.target == nil { box.early.append(report) }
            return box.target
        }) else { return }
        deliver(report, to: target)
    }

    private func deliver(_ report: Report, to target: ProgramAudio) {
        switch report {
        case .found(let source, let index): target.found(source, by: index)
        case .lost(let source): target.lost(source)
        }
    }
}
