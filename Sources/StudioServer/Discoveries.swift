import StudioCore
import StudioConfig
import Capture
import EventStore

/// Which discoveries a server runs: test-pattern cameras when asked for (`--demo`, `--cameras N`),
/// plus one discovery per real camera backend enabled in `cameras.backends` (or `--backends`).
/// Each backend is created here from the configuration; the hub starts them.
enum Discoveries {
    /// Everything a backend needs to find and name its cameras.
    struct Context: Sendable {
        var options: ServerOptions
        var namer: CameraNamer
        var events: any EventSink
        var log: ServerLog
    }

    static func make(_ context: Context) throws -> [any CameraDiscovery] {
        let options = context.options
        var discoveries: [any CameraDiscovery] = []
        if options.testCameraCount > 0 {
            var format = TestPatternCamera.defaultFormat
            if let size = options.testCameraSize { (format.width, format.height) = size }
            discoveries.append(try TestPatternDiscovery(count: options.testCameraCount, format: format, namer: context.namer))
        }
        for backend in options.configuration.cameras.backends.sorted() {
            switch backend {
            case .v4l2:
                // /dev/video* capture nodes, hot-plug through inotify; each camera picks the mode nearest the program.
                let log = context.log
                let settings = options.configuration.cameras
                discoveries.append(V4L2Discovery(namer: context.namer, program: options.program, log: { log.info($0) },
                                                 prepare: { camera in applyPinnedSettings(settings, to: camera, log: log) }))
            case .pipewire:
                // The daemon at PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR; none there: said once
                // in the log, retried every few seconds, cameras added when it appears. With V4L2 on too,
                // PipeWire's own views of /dev/video devices are left to the V4L2 backend (one webcam,
                // one camera).
                let program = options.program, log = context.log
                discoveries.append(PipeWireDiscovery(
                    namer: context.namer,
                    wanted: CameraFormat(pixelFormat: .i420, width: program.width, height: program.height, frameRate: program.frameRate),
                    skipsV4L2Devices: options.configuration.cameras.backends.contains(.v4l2),
                    report: { log.info($0) }))
            }
        }
        return discoveries
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
    static func namer(store: EventStore, settings: CameraSettings) -> CameraNamer {
        { identity in
            try store.cameraName(forIdentity: identity.identity, backend: identity.backend, displayName: identity.displayName,
                                 pinnedName: settings.pin(forIdentity: identity.identity, displayName: identity.displayName)?.name)
        }
    }
}
