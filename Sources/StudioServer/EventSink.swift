import Foundation
import Synchronization
import StudioCore
import StudioSystem
import EventStore
import Control
import HTTPConsole

/// Fans each event out to the store (queued for its own thread), to control clients that subscribed,
/// to the HTTP API's event streams (the same line), and to the server log. Every path enqueues; none blocks the stage that emitted.
final class ServerEventSink: EventSink {
    private let store: EventStore
    private let control: ControlServer
    private let log: ServerLog
    private let http: HTTPEventStream
    /// The `recordings` rows, kept from the recording outputs' events.
    let recordings: RecordingRows
    /// Sees each `switch` event as it is emitted, on the program thread (audio-follow-video); must not block.
    private let switchWatch = Mutex<(@Sendable (StudioEvent) -> Void)?>(nil)
    /// Told of each `tally` event as it is emitted, on the program thread (the tally outputs); must not block.
    private let tallyWatch = Mutex<(@Sendable () -> Void)?>(nil)
    /// Sees each stored event after the flap filter (a switcher's node history marks a node whose camera connected); must not block.
    private let storedWatch = Mutex<(@Sendable (StudioEvent) -> Void)?>(nil)
    /// Holds back the transitions of a flapping camera or audio input (`FlapFilter`); its thread writes what
    /// becomes due while nothing else happens.
    private let flaps: FlapFilter
    private let flapTicks = WorkerThread()
    private let clock: any Clock

    init(store: EventStore, control: ControlServer, http: HTTPEventStream, log: ServerLog, clock: any Clock = .monotonic) {
        self.store = store
        self.control = control
        self.http = http
        self.log = log
        self.clock = clock
        flaps = FlapFilter(clock: clock)
        recordings = RecordingRows(store: store)
    }

    func emit(_ event: StudioEvent) {
        if event.kind == .switchProgram, let watch = switchWatch.withLock({ $0 }) { watch(event) }
        // Tally changes follow from the switch and preview events, which are stored: watchers only.
        guard event.kind != .tally else {
            tallyWatch.withLock { $0 }?()
            return watchers(event)
        }
        for passed in flaps.pass(event) { write(passed) }
    }

    private func write(_ event: StudioEvent) {
        store.record(event)
        recordings.note(event)
        storedWatch.withLock { $0 }?(event)
        watchers(event)
        log.info(Views.describe(event))
    }

    /// Starts the thread that writes what the flap filter has due (once a second).
    func startFlapTicks() {
        flapTicks.start(name: "studio.flaps") { [self] in
            while !flapTicks.isStopRequested {
                guard clock.sleep(until: clock.now() + 1_000_000_000, unless: { flapTicks.isStopRequested }) else { break }
                for event in flaps.due() { write(event) }
            }
        }
    }

    /// Stops that thread and writes whatever the filter holds: the session ends in its cameras' real states.
    func stopFlapTicks() {
        flapTicks.stop()
        for event in flaps.flush() { write(event) }
    }

    func watchSwitches(_ watch: @escaping @Sendable (StudioEvent) -> Void) { switchWatch.withLock { $0 = watch } }

    func watchTally(_ watch: @escaping @Sendable () -> Void) { tallyWatch.withLock { $0 = watch } }

    func watchStored(_ watch: @escaping @Sendable (StudioEvent) -> Void) { storedWatch.withLock { $0 = watch } }

    /// To `watch` and the log only: for what the store reports about itself (already stored, or not storable).
    func broadcast(_ event: StudioEvent) {
        watchers(event)
        log.info(Views.describe(event))
    }

    /// `subscribe`d control clients and the HTTP event streams: the same JSON line to both.
    private func watchers(_ event: StudioEvent) {
        // An event holds strings, integers and a date: encoding it cannot fail.
        let view = (try? JSONValue(encoding: EventView(event))) ?? .null
        control.broadcast(view)
        http.publish(ControlReply.eventLine(view))
    }
}
