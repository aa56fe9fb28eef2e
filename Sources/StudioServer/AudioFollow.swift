import StudioCore
import Switcher

/// Audio-follow-video: the mixer learns what is on air (the camera cut to, or a scene and every camera
/// in it) from the sample of each cut's program time, and from the start. An input that follows a
/// camera or scene is up only while that is on air.
enum AudioFollow {
    /// Tells `audio` what is on program now and at every switch `events` reports from here on.
    static func attach(_ audio: ProgramAudio, to switcher: ProgramSwitcher, events: ServerEventSink, reloader: ConfigReloader) {
        // The scenes as last (re)loaded: a scene's cameras are on air with it.
        let onAir: @Sendable (ProgramSource?) -> Set<String> = { program in
            guard let program else { return [] }
            let scene = reloader.configuration.scenes.first { $0.name == program.name && program.camera == nil }
            return Set([program.name] + (scene?.cameraNames ?? []))
        }
        audio.onAir(onAir(switcher.status.program), at: MediaTime(microseconds: 0))
        events.watchSwitches { event in
            guard let time = event.programTime else { return }
            audio.onAir(onAir(event.camera.map { .camera($0) } ?? event.details["scene"].map { .scene($0) } ?? switcher.status.program), at: time)
        }
    }
}
