import StudioCore
import Capture
import Switcher

// A stinger's sound (`StingerClip.sound`) in the program audio: one input, `stinger`, present while a
// loaded stinger has sound, heard only while a stinger runs (it follows no source), with gain, mute and
// meters like any input.

extension ProgramAudio {
    /// The stingers' input's name.
    static let stingerInput = "stinger"

    /// Plays each stinger's sound from the sample of its first frame's pts (the program thread's notice,
    /// a short lock), and adds or removes the input for the clips `switcher` has now.
    func follow(stingersOf switcher: ProgramSwitcher) {
        let stinger = self.stinger
        switcher.watchStingers { [weak self] clip, start in
            guard let self else { return }
            stinger.play(clip, at: sample(at: start))
        }
        update(stingers: switcher.stingers)
    }

    /// The input while one of `clips` (the stingers loaded, at start or by a reload) has sound; none
    /// while none has (a clip without sound adds nothing; a sting playing then is cut off).
    func update(stingers clips: [StingerClip]) {
        if clips.contains(where: { $0.sound != nil }) {
            // A source of that name brings its own sound: it keeps the name, the stingers go unheard.
            let feed = ObjectIdentifier(stinger)
            if shared.state.withLock({ $0.inputs.contains { $0.name == Self.stingerInput && $0.feed != feed } }) {
                return log.info("warning: the stingers' sound is not played: a source named \(Self.stingerInput) has the input of that name (rename it)")
            }
            attach(sourceAudio: stinger, of: Self.stingerInput)
        } else {
            remove(sourceAudioOf: Self.stingerInput)
        }
    }
}
