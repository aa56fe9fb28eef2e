import Foundation
import Synchronization
import StudioCore
import EventStore

/// Says what the event store's notices mean, where users look: the log (loudly, once per change), `watch`,
/// and the event log itself. The store is opened before the event sink exists, so the sink is attached
/// later; notices before that only reach the log.
final class StoreHealth: Sendable {
    private let log: ServerLog
    private let sink = Mutex<ServerEventSink?>(nil)

    init(log: ServerLog) { self.log = log }

    func attach(_ events: ServerEventSink) { sink.withLock { $0 = events } }

    /// Called on the store thread: only enqueues (log lines, control broadcasts, store records).
    @Sendable func handle(_ notice: EventStoreNotice) {
        let events = sink.withLock { $0 }
        switch notice {
        case .writesFailing(let error):
            log.info("WARNING: the event database refuses writes; events are kept in memory and retried: \(error)")
            // Kept in the backlog with the rest, so the stored log shows when the outage began.
            events?.emit(StudioEvent(kind: .error, details: ["stage": "store", "during": "write", "error": error]))
        case .eventsLost(let capacity):
            log.info("WARNING: the event database still refuses writes and \(capacity) events are waiting: further events are LOST (counted) until it takes writes again")
            events?.broadcast(StudioEvent(kind: .error, details: [
                "stage": "store", "during": "write",
                "error": "events are being lost: \(capacity) waiting for the database, which refuses writes"]))
        case .writesRecovered(let seconds, let lostEvent):
            let lost = lostEvent?.details["lost"].map { ", \($0) event(s) LOST (see the events_lost event)" } ?? ", nothing lost"
            log.info("the event database takes writes again after \(String(format: "%.1f", seconds)) s\(lost)")
            if let lostEvent { events?.broadcast(lostEvent) }
        case .databaseFileChanged(let path, let what):
            log.info("WARNING: the event database \(path) was deleted or replaced while the show runs: \(what). "
                + "Nothing more is written to the old file; the store carries on in a database at \(path)")
            events?.emit(StudioEvent(kind: .error, details: ["stage": "store", "during": "write", "error": "the database file was changed under the server: \(what)"]))
        case .databaseFileRefused(let path, let reason):
            log.info("WARNING: \(path) now holds no database the server may write (\(reason)): it is left untouched and events are kept "
                + "in memory and retried; move that file away, or put a studio database there")
            events?.broadcast(StudioEvent(kind: .error, details: [
                "stage": "store", "during": "write", "error": "\(path) holds no studio database: \(reason); events are kept and retried"]))
        case .databaseFileReplaced(let path, let created, let previous, let session):
            let sessions = session.map { " as its session \($0), continuing session \(previous.map(String.init) ?? "?") of the old file" } ?? ""
            log.info("the event store carries on in \(created ? "a new database it created at" : "the database now at") \(path)\(sessions)")
        }
    }
}
