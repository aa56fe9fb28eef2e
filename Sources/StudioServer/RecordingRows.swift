import Foundation
import Synchronization
import StudioCore
import EventStore

/// The session's `recordings` rows, kept from the recording outputs' own events: a row when a file got
/// its first media on disk (`recording_started`, which every part after a write failure and every new
/// generation sends too), ended with the file's size when it is closed (`recording_stopped`). The
/// outputs know nothing of the store; the server tells this which output records what (`register`).
/// Called on the thread that emitted (an output's): it only queues work for the store thread.
final class RecordingRows: Sendable {
    private let store: EventStore
    /// Output name -> the camera it records (nil: the program).
    private let owners = Mutex<[String: CameraID?]>([:])

    init(store: EventStore) { self.store = store }

    /// The output `name` writes the program's recording (`camera` nil) or a camera's ISO files.
    func register(output name: String, camera: CameraID?) {
        owners.withLock { $0[name] = .some(camera) }
    }

    /// Turns a registered output's `recording_started`/`recording_stopped` into a row or its end.
    func note(_ event: StudioEvent) {
        guard event.kind == .recordingStarted || event.kind == .recordingStopped,
              let output = event.details["output"], let path = event.details["path"],
              let camera = owners.withLock({ $0[output] }) else { return }
        if event.kind == .recordingStarted {
            store.recordingStarted(cameraID: camera, path: path, at: event.wallTime)
        } else {
            store.recordingStopped(path: path, bytes: event.details["bytes"].flatMap { Int64($0) }, at: event.wallTime)
        }
    }
}
