import StudioCore
import StudioConfig
import Capture
import EventStore
import Encoding

/// Which discoveries a server runs: one per backend of its table (`ServerOptions.backends`, normally
/// `SourceBackends.standard`) that is on: the selectable ones named in `cameras.backends` (or
/// `--backends`), and the others when their settings ask for cameras (test patterns: `--demo`,
/// `--cameras N`). Each backend makes its own from the context; the hub starts them.
enum Discoveries {
    /// Everything a backend needs to find and name its cameras.
    struct Context: Sendable {
        var options: ServerOptions
        var namer: CameraNamer
        var events: any EventSink
        var log: ServerLog
        /// Set once the program's origin is decided (after the cameras start).
        var programOrigin: ProgramOrigin
    }

    static func make(_ context: Context) throws -> [any CameraDiscovery] {
        let options = context.options, log = context.log
        let settings = options.configuration.cameras
        let backends = SourceBackends.enabled(options.backends, configured: settings.backends)
        let backendContext = BackendContext(
            program: options.program, namer: context.namer, log: { log.info($0) },
            prepare: { camera in applyPinnedSettings(settings, to: camera, log: log) },
            enabled: Set(backends.map(\.name)),
            testCameras: TestCameraRequest(count: options.testCameraCount, size: options.testCameraSize, noise: options.testCameraNoise),
            networkPulls: options.configuration.network.cameras, srtListener: options.configuration.network.srt,
            emit: { [events = context.events] in events.emit($0) },
            networkDecoding: options.configuration.network.cameras.isEmpty ? NetworkDecoding() : networkDecoding { log.info($0) },
            players: options.configuration.players, programOrigin: context.programOrigin)
        return try backends.compactMap { try $0.makeDiscovery(backendContext) }
    }

    /// How network cameras decode: on the first render node whose VAAPI driver decodes H.264 or HEVC
    /// (the encoder's probing), else in software, said once in the log with the reason.
    static func networkDecoding(log: (String) -> Void) -> NetworkDecoding {
        switch VAAPIProbe.probeDecode() {
        case .success(let found):
            let codecs = found.codecs.sorted().joined(separator: ", ")
            log("network cameras: \(codecs) decoded with VAAPI on \(found.renderNode) (\(found.driver)); other codecs in software")
            return NetworkDecoding(hardware: .vaapi(renderNode: found.renderNode, codecs: found.codecs))
        case .failure(let failure):
            log("network cameras: decoded in software (libavcodec, \(NetworkDecoding.defaultThreads) slice threads each): \(failure.description)")
            return NetworkDecoding(hardware: .unavailable(failure.description))
        }
    }

    /// A pin's `size`, `fps` and `controls` (config) for a device camera, applied before it starts and
    /// again whenever it returns. A setting the device refuses is logged; the camera runs anyway.
    static func applyPinnedSettings(_ settings: CameraSettings, to camera: any AdjustableCamera, log: ServerLog) {
        guard let pin = settings.pin(forIdentity: camera.identity, displayName: camera.displayName) else { return }
        if pin.size != nil || pin.fps != nil {
            let request = CameraModeRequest(width: pin.size?.width, height: pin.size?.height, frameRate: pin.fps)
            do {
                let granted = try camera.setMode(request)
                log.info("\(camera.id.name): config asks for \(request); the device granted \(granted)")
            } catch {
                log.info("\(camera.id.name): config mode \(request) not applied: \(error)")
            }
        }
        for (name, value) in pin.controls {
            do {
                let control = try camera.setControl(name, to: value)
                log.info("\(camera.id.name): config control \(name) = \(control.valueText ?? value)")
            } catch {
                log.info("\(camera.id.name): config control \(name)=\(value) not applied: \(error)")
            }
        }
    }

    /// The server's namer: names persist in the event store (identity -> `camN`), and a pin in the
    /// config (matched on identity, else on a part of the identity or the device's name) decides a
    /// device's name.
    ///
    /// A pin matched on a part (`match: C920`) can fit several devices, say two identical webcams: the
    /// first is named as the pin says (`wide`), the others `wide-2`, `wide-3`... with a warning in the log
    /// that says how to tell them apart. No camera is dropped, and each device keeps its name across
    /// restarts (a device that already holds a name of the pin's family keeps it).
    ///
    /// Cameras and scenes share one namespace: the config refuses a scene named as a pin or `camN`, but a
    /// device may hold a name from an older config (a pin since removed) that a scene now has. That camera
    /// moves to the lowest free `camN`, kept from then on, with a warning: `studio switch NAME` stays the scene.
    ///
    /// A network camera (`network.pull`) and a player (`players`) are named by their entry, as a pin names
    /// a device; a capture node's camera (`network.srt.nodes`) by its stream id (`pc2/cam1`).
    static func namer(store: EventStore, settings: CameraSettings, pulls: [NetworkPull] = [], srt: SRTListenerSpec? = nil,
                      players: [PlayerSpec] = [], sceneNames: @escaping @Sendable () -> Set<String>, log: ServerLog) -> CameraNamer {
        { identity in
            let pulled = pulls.first { $0.identity == identity.identity }?.name ?? players.first { $0.identity == identity.identity }?.name
                ?? srt?.nodeCamera(forIdentity: identity.identity)
            let name = try pulled.map {
                try store.cameraName(forIdentity: identity.identity, backend: identity.backend, displayName: identity.displayName, pinnedName: $0)
            } ?? pinnedName(store: store, settings: settings, log: log, identity: identity)
            guard sceneNames().contains(name.name) else { return name }
            let free = try store.freeCameraName()
            log.info("warning: \(identity.identity) (\(identity.displayName)) had the name \(name.name), which is a scene's now: the camera is named \(free.name) (pin it in cameras.pins to choose its name)")
            return try store.cameraName(forIdentity: identity.identity, backend: identity.backend, displayName: identity.displayName,
                                        pinnedName: free)
        }
    }

    /// The name the store and the pins give the device.
    private static func pinnedName(store: EventStore, settings: CameraSettings, log: ServerLog, identity: CameraIdentity) throws -> CameraID {
        let pin = settings.pin(forIdentity: identity.identity, displayName: identity.displayName)
        var pinned = pin?.name
        if let pin, pin.match != identity.identity {
            // The other devices this same pin fits, with the names they hold.
            let family = PinFamily(name: pin.name.name)
            let fitting = try store.cameras().filter { record in
                settings.pin(forIdentity: record.identity, displayName: record.displayName) == pin
            }
            let chosen = family.name(for: identity.identity, known: fitting.map { ($0.identity, $0.name.name) })
            if chosen != pin.name.name {
                let others = fitting.filter { $0.identity != identity.identity && family.contains($0.name.name) }
                    .map { "\($0.name.name) = \($0.identity)" }
                log.info("warning: the pin `match: \(pin.match)` fits several devices (\(others.joined(separator: ", "))); \(identity.identity) (\(identity.displayName)) is named \(chosen). To name each one yourself, pin its exact identity (`studio cameras` lists them: a serial or a /dev/v4l/by-id name)")
            }
            pinned = CameraID(chosen)
        }
        return try store.cameraName(forIdentity: identity.identity, backend: identity.backend, displayName: identity.displayName,
                                    pinnedName: pinned)
    }
}

/// The names a pin gives when its `match` fits several devices: its own name, then `NAME-2`, `NAME-3`...
struct PinFamily: Sendable {
    let name: String

    /// Whether `candidate` is one of this family's names.
    func contains(_ candidate: String) -> Bool {
        if candidate == name { return true }
        guard candidate.hasPrefix(name + "-"), let number = Int(candidate.dropFirst(name.count + 1)) else { return false }
        return number >= 2
    }

    /// The name for the device `identity`, given the devices the same pin fits and their names: the
    /// family name it already holds, else the first one none of the others holds.
    func name(for identity: String, known: [(identity: String, name: String)]) -> String {
        if let mine = known.first(where: { $0.identity == identity && contains($0.name) }) { return mine.name }
        let taken = Set(known.filter { $0.identity != identity }.map(\.name))
        if !taken.contains(name) { return name }
        var number = 2
        while taken.contains("\(name)-\(number)") { number += 1 }
        return "\(name)-\(number)"
    }
}
