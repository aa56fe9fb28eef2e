import StudioConfig
import EventStore

extension StudioServer {
    /// An audio source's stable name: kept in the database per identity (`micN`, as cameras' `camN`),
    /// its pin's (`audio.inputs`) when it has one; a name another input of this session holds, or a
    /// database that cannot answer, gives the first `micN` neither taken nor pinned.
    static func audioNaming(_ settings: AudioSettings, store: EventStore, log: ServerLog) -> @Sendable (String, String, Set<String>) -> String {
        { identity, displayName, taken in
            let pinned = settings.pin(forIdentity: identity, displayName: displayName)?.name
            do {
                let name = try store.audioInputName(forIdentity: identity, displayName: displayName, pinnedName: pinned)
                if !taken.contains(name) { return name }
            } catch {
                log.info("audio input \(identity): no stable name from the database (\(error))")
            }
            if let pinned, !taken.contains(pinned) { return pinned }
            return ProgramAudio.nextName(identity: identity, displayName: displayName, taken: taken.union(settings.inputs.map(\.name)))
        }
    }
}
