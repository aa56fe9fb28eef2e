import Foundation
import StudioCore
import EventStore
import Control

/// Fans each event out to the store (queued for its own thread), to control clients that subscribed,
/// and to the server log. Every path enqueues; none blocks the stage that emitted.
final class ServerEventSink: EventSink {
    private let store: EventStore
    private let control: ControlServer
    private let log: ServerLog
    /// The `recordings` rows, kept from the recording outputs' events.
    let recordings: RecordingRows

    init(store: EventStore, control: ControlServer, log: ServerLog) {
        self.store = store
        self.control = control
        self.log = log
        recordings = RecordingRows(store: store)
    }

    func emit(_ event: StudioEvent) {
        // Tally changes follow from the switch and preview events, which are stored: watchers only.
        guard event.kind != .tally else { return control.broadcast(event) }
        store.record(event)
        recordings.note(event)
        control.broadcast(event)
        log.info(Views.describe(event))
    }

    /// To `watch` and the log only: for what the store reports about itself (already stored, or not storable).
    func broadcast(_ event: StudioEvent) {
        control.broadcast(event)
        log.info(Views.describe(event))
    }
}
