import StudioCore
import Capture
import Mixer

// A source's own sound (`Camera.audio`: a network camera's stream, a clip, a test backend) in the program
// audio: one input named like the source, found, lost and back with it, and removed with it.

extension ProgramAudio {
    /// A source that brings its own sound: its audio becomes an input named like the source, so
    /// audio-follow-video, pins and meters know it by that name. The first time (and again after the
    /// source was removed) it is `audio_input_found`; after the source was lost and came back with a new
    /// feed, the new feed takes the name's place in the mix (`audio_input_back`) and the old feed's slot
    /// in the set is freed.
    func attach(sourceAudio input: any ClockedAudioInput, of source: String) {
        let feed = ObjectIdentifier(input), identity = Self.sourceIdentity(source)
        let known = shared.state.withLock { state in state.inputs.first { $0.identity == identity } }
        // The same feed again (a camera reported twice, or back with the same object): no second block.
        if let known, known.feed == feed, known.present { return }
        let slot = known?.feed == feed ? known?.slot ?? -1 : set.add(input)
        let said = shared.state.withLock { state -> EventKind in
            if let index = state.inputs.firstIndex(where: { $0.identity == identity }) {
                state.inputs[index].slot = slot
                state.inputs[index].present = true
                state.inputs[index].source = input.description
                state.inputs[index].feed = feed
                return .audioInputBack
            }
            state.inputs.append(Input(name: source, source: input.description, node: nil, isMicrophone: false, slot: slot,
                                      identity: identity, displayName: source, usbDevice: nil, present: true, announced: true,
                                      feed: feed))
            // Its settings (a pin, or what the operator set before it was removed) from now on: a
            // removed input's strip went with it.
            if let settings = state.settings[source] { controls.post(.input(source, settings), at: now) }
            return .audioInputFound
        }
        // A new feed took the name's place: the old one's slot is free for the next input.
        if let known, known.feed != feed, known.slot >= 0, known.slot != slot { set.remove(at: known.slot) }
        events.emit(StudioEvent(kind: said, programTime: programTime(ofSample: now),
                                details: ["input": source, "identity": identity, "source": input.description]))
    }

    /// The source of `attach(sourceAudio:of:)` went away: its input is lost (listed, silent) until it is back.
    func detach(sourceAudioOf source: String) {
        let identity = Self.sourceIdentity(source)
        let wasPresent = shared.state.withLock { state -> Bool in
            guard let index = state.inputs.firstIndex(where: { $0.identity == identity }),
                  state.inputs[index].present else { return false }
            state.inputs[index].present = false
            return true
        }
        guard wasPresent else { return }
        events.emit(StudioEvent(kind: .audioInputLost, programTime: programTime(ofSample: now),
                                details: ["input": source, "identity": identity]))
    }

    /// The source of `attach(sourceAudio:of:)` was removed from the show: its input leaves the list at
    /// once and the mix from the program's audio now on (its strip, meter and compensation go; its slot
    /// in the set is freed and its feed ended on the audio thread). Its settings stay, by name, for a
    /// source of that name added later. Answers whether it had an input.
    @discardableResult
    func remove(sourceAudioOf source: String) -> Bool {
        let identity = Self.sourceIdentity(source)
        let removed = shared.state.withLock { state -> Input? in
            guard let index = state.inputs.firstIndex(where: { $0.identity == identity }) else { return nil }
            // Under the lock the audio thread reads the names with: no span after this mixes it.
            controls.post(.remove(source), at: now)
            return state.inputs.remove(at: index)
        }
        guard let removed else { return false }
        if removed.slot >= 0 { set.remove(at: removed.slot) }
        stage.compensations.withLock { $0[source] = nil }
        return true
    }

    /// The identity of a source's own sound: `source:NAME` (no device's identity has that form).
    static func sourceIdentity(_ source: String) -> String { "source:" + source }
}
