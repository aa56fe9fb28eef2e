import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture

/// The server's cameras by name. Discovery adds to it; the control plane and the watch read it.
final class CameraSet: Sendable {
    private let cameras = Mutex<[CameraID: any Camera]>([:])

    func add(_ camera: any Camera) { cameras.withLock { $0[camera.id] = camera } }
    func remove(_ id: CameraID) { cameras.withLock { _ = $0.removeValue(forKey: id) } }
    func camera(named id: CameraID) -> (any Camera)? { cameras.withLock { $0[id] } }
    var all: [any Camera] { cameras.withLock { $0.values.sorted { $0.id < $1.id } } }
}

/// Watches every camera's newest frame and reports `camera_lost` / `camera_returned` when a camera
/// stops or resumes delivering. Same rule as the switcher's slate: no frame for `lossTimeout`.
final class CameraWatch: Sendable {
    private let cameras: CameraSet
    private let events: any EventSink
    private let lossTimeout: UInt64
    private let worker = WorkerThread()
    private let lost = Mutex<Set<CameraID>>([])

    init(cameras: CameraSet, events: any EventSink, lossTimeoutSeconds: Double) {
        self.cameras = cameras
        self.events = events
        self.lossTimeout = UInt64(lossTimeoutSeconds * 1e9)
    }

    func isLost(_ id: CameraID) -> Bool { lost.withLock { $0.contains(id) } }

    func start() {
        let started = MonotonicClock.now()
        worker.start(name: "studio.watch") { [self] in
            while !worker.isStopRequested {
                MonotonicClock.sleep(seconds: 0.05)
                let now = MonotonicClock.now()
                for camera in cameras.all {
                    let (frame, _) = camera.frames.latest()
                    let last = frame?.captureTime ?? started
                    let silent = now > last && now - last > lossTimeout
                    let wasLost = lost.withLock { $0.contains(camera.id) }
                    if silent && !wasLost {
                        lost.withLock { _ = $0.insert(camera.id) }
                        events.emit(StudioEvent(kind: .cameraLost, camera: camera.id,
                                                details: ["silent_ms": String((now - last) / 1_000_000)]))
                    } else if !silent && wasLost {
                        lost.withLock { _ = $0.remove(camera.id) }
                        events.emit(StudioEvent(kind: .cameraReturned, camera: camera.id))
                    }
                }
            }
        }
    }

    func stop() { worker.stop() }
}
