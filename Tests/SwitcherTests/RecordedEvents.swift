import Synchronization
import StudioCore

/// Every event a switcher under test emitted, in order.
final class RecordedEvents: EventSink, Sendable {
    private let events = Mutex<[StudioEvent]>([])
    func emit(_ event: StudioEvent) { events.withLock { $0.append(event) } }
    var all: [StudioEvent] { events.withLock { $0 } }
    func all(_ kind: EventKind) -> [StudioEvent] { all.filter { $0.kind == kind } }
    func first(_ kind: EventKind) -> StudioEvent? { all.first { $0.kind == kind } }
    func last(_ kind: EventKind) -> StudioEvent? { all.last { $0.kind == kind } }
}
