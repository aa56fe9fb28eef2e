import Foundation
import Synchronization
import StudioCore
import Switcher
import Control
import StudioConfig
import Capture

/// Live configuration: `studio reload` and SIGHUP re-read the config file the server was started with
/// (`--config`, with the same command-line flags on top) and apply what can change while the show runs
/// (`StudioConfiguration.reloadKeys`: scenes, the default transition, the pins' backups).
///
/// A reload is all or nothing: a file that does not parse (its error names file:line), a change to a
/// key that only a restart applies (each named: "program.format cannot change while the server runs;
/// restart to apply"), a scene on program or preview that the new file removes, or a scene named as a
/// connected camera (a stored name the file alone cannot know: cameras and scenes share one namespace)
/// refuses the whole reload, and nothing changes. Scenes showing cameras that are not connected are
/// warnings in the reply and the log (their layers show the slate). Applying only the live part would leave the file saying one thing and
/// the server doing another with nobody noticing; refusing keeps the two in step the moment a reload
/// succeeds. Every reload is an event: `config_reloaded` (what changed) or `config_reload_failed` (why).
final class ConfigReloader: Sendable {
    /// The configuration in force: the start's, then each reload's.
    private let current: Mutex<StudioConfiguration>
    /// One reload at a time (a SIGHUP and a `studio reload` may come together).
    private let serial = Mutex(())

    init(_ configuration: StudioConfiguration) { current = Mutex(configuration) }

    var configuration: StudioConfiguration { current.withLock { $0 } }

    func replace(with configuration: StudioConfiguration) { current.withLock { $0 = configuration } }

    func serialized<T: Sendable, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try serial.withLock { _ throws(E) -> T in try body() }
    }
}


extension StudioServer {
    /// Applies the parts of `configuration` that change live. The one place for them: the start applies
    /// the config through it too. Each setter validates before it changes anything, scenes first, so a
    /// refusal (only a bug: the config checked these) leaves the switcher as it was.
    /// The stingers' clips are decoded first (`StingerLoader`, on this thread: a clip that cannot be used
    /// refuses the start or the reload, naming it, before anything changed); a clip without alpha is a
    /// warning in `log`.
    static func applyLive(_ configuration: StudioConfiguration, to switcher: ProgramSwitcher, log: (String) -> Void) throws(SwitchError) {
        let stingers: [StingerClip]
        do {
            stingers = try StingerLoader.load(configuration.transitions, width: switcher.format.width, height: switcher.format.height, log: log)
        } catch { throw .invalidTransition(error.description) }
        try switcher.setScenes(configuration.scenes)
        try switcher.setOverlays(configuration.overlays)
        switcher.setStingers(stingers)
        try switcher.setDefaultTransition(configuration.transition)
        switcher.setBackups(configuration.backups)
    }

    /// The mixer settings a reload changed (a pin's, the master's), from the program's audio now on,
    /// each an `audio_changed` event with `by: reload`; settings the file did not change keep what
    /// `studio audio` set live.
    private func applyAudio(from old: AudioSettings, to new: AudioSettings) {
        let before = old.inputSettings
        let names = Set(audio.inputs.map(\.name))
        for (name, settings) in new.inputSettings.sorted(by: { $0.key < $1.key }) where before[name] != settings && names.contains(name) {
            let current = audio.settings[name] ?? .unity
            if let sample = audio.set(name, to: settings) {
                _ = announce(input: name, changes: AudioChanges.input(current, settings), sample: sample, by: "reload")
            }
        }
        if old.master != new.master {
            let current = audio.master
            _ = announce(input: "master", changes: AudioChanges.master(current, new.master), sample: audio.setMaster(new.master), by: "reload")
        }
    }

    /// Re-reads the config file and applies it, or changes nothing and says why (`by`: `reload`, `SIGHUP`).
    func reloadConfiguration(by trigger: String) throws(ControlError) -> ReloadReply {
        guard let path = options.configPath, let reread = options.rereadConfiguration else {
            let reason = "the server was started without --config: there is no config file to reload (restart it with --config FILE)"
            events.emit(StudioEvent(kind: .configReloadFailed, details: ["reason": reason, "by": trigger]))
            throw ControlError(.unavailable, reason)
        }
        return try reloader.serialized { () throws(ControlError) -> ReloadReply in
            func refuse(_ reason: String) -> ControlError {
                events.emit(StudioEvent(kind: .configReloadFailed, details: ["file": path, "reason": reason, "by": trigger]))
                return ControlError(.unavailable, reason + "; nothing was changed")
            }
            let new: StudioConfiguration
            do { new = try reread() } catch { throw refuse(String(describing: error)) }
            let old = reloader.configuration
            let changes = old.changes(to: new)
            if !changes.fixed.isEmpty {
                throw refuse(changes.fixed.map { "\($0) cannot change while the server runs; restart to apply" }.joined(separator: "; "))
            }
            // The players' files again (one replaced or removed since the start is named, nothing changes).
            do { try PlayerBackend.checkItems(new.players) } catch { throw refuse(String(describing: error)) }
            let status = switcher.status
            // One namespace: a connected camera keeps its name (the file alone cannot know a stored one).
            if let clash = new.scenes.first(where: { status.sources.contains(CameraID($0.name)) }) {
                throw refuse("scene \(clash.name): a connected camera has that name; a scene needs its own")
            }
            let kept = Set(new.scenes.map(\.name))
            let onAir = [("program", status.program), ("preview", status.preview),
                         ("program", status.transition.map { ProgramSource.scene($0.to) }),
                         ("program", status.transition?.from.map { ProgramSource.scene($0) })]
            for (bus, source) in onAir {
                if case .scene(let name)? = source, status.scenes.contains(name), !kept.contains(name) {
                    throw refuse("scene \(name) is on \(bus) and the new file removes it: cut away from it first")
                }
            }
            do { try Self.applyLive(new, to: switcher, log: { log.info($0) }) } catch { throw refuse("\(error)") }
            audio.update(stingers: switcher.stingers)
            // A pin's changed picture settings go to its camera now (unchanged ones keep what
            // `studio picture` set live); cameras that appear later take them from the pin.
            let sources = Set(status.sources)
            for pin in new.cameras.pins where sources.contains(pin.name)
                && old.cameras.pins.first(where: { $0.name == pin.name })?.picture != pin.picture {
                try? switcher.setPicture(pin.picture, for: pin.name)
            }
            applyAudio(from: old.audio, to: new.audio)
            reloader.replace(with: new)
            events.emit(StudioEvent(kind: .configReloaded, details: [
                "file": path, "by": trigger, "changed": changes.live.isEmpty ? "nothing" : changes.live.joined(separator: ","),
            ]))
            let warnings = new.sceneWarnings(cameras: status.sources)
            for warning in warnings { log.info("warning: \(warning)") }
            return ReloadReply(file: path, changed: changes.live, warnings: warnings)
        }
    }
}

extension ServerCommands {
    enum Reload: SignedCommand {
        typealias Signature = StatusSignatures.Reload
        static let execution = ControlExecution.worker
        static func run(_ arguments: NoArguments, in server: StudioServer) throws -> ReloadReply {
            try server.reloadConfiguration(by: "reload")
        }
    }
}
