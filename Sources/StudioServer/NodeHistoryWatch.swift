import Foundation
import Synchronization
import StudioCore
import StudioSystem
import EventStore
import Control
import StudioViews
import TallyOut

/// The switcher's record of its capture nodes' own history (docs/nodes.md, "One history for the
/// editor"): when a node's camera connects, every `refreshSeconds` while the session runs (so a node's new
/// session or files are seen) and when the session ends, the thread `nodes.history` asks the node's HTTP
/// API (`network.srt.nodes`' `api` and `token`, through `HTTPExchange`) for its current session and its
/// `recordings`, and keeps the answer in the session's `node_sessions` and `node_recordings` rows. Each
/// ask is bounded (`NodeForwarding`'s 5 s); a node that does not answer is a row (`unreachable`, with
/// why) and a log line when that changes, never a failure of the show. A node with no `api`: `unknown`,
/// said once. Nothing else waits for this thread: the event sink only marks a node to be asked. An ISO
/// file that ended while its node ran on (in the same node session) is said here too: a
/// `node_recording_stopped` event and a warning.
final class NodeHistoryWatch: Sendable {
    static let refreshSeconds = 10.0
    /// The last asks, when the session ends, share this many seconds.
    static let finalSeconds = 5.0

    private let nodes: [SRTListenerSpec.Node]
    private let spec: SRTListenerSpec?
    private let store: EventStore
    private let log: ServerLog
    private let emit: @Sendable (StudioEvent) -> Void
    private let clock: any Clock
    private let worker = WorkerThread()
    private struct State {
        /// Nodes to ask now (a camera of theirs connected).
        var pending: Set<String> = []
        /// Nodes seen this session, and what was last kept of each (to keep and log only changes).
        var seen: [String: NodeSessionRecord] = [:]
    }
    private let state = Mutex(State())

    init?(_ spec: SRTListenerSpec?, store: EventStore, log: ServerLog, emit: @escaping @Sendable (StudioEvent) -> Void,
          clock: any Clock = .monotonic) {
        guard let spec, !spec.nodes.isEmpty else { return nil }
        self.spec = spec
        self.nodes = spec.nodes
        self.store = store
        self.log = log
        self.emit = emit
        self.clock = clock
    }

    /// From the event sink (any thread; never blocks): a node camera that connects marks its node.
    func note(_ event: StudioEvent) {
        guard event.kind == .cameraAdded || event.kind == .cameraReturned, let camera = event.camera,
              let (node, _) = spec?.nodeCamera(camera) else { return }
        state.withLock { _ = $0.pending.insert(node.name) }
    }

    func start() {
        worker.start(name: "nodes.history") { [self] in
            var nextRefresh = clock.now() + UInt64(Self.refreshSeconds * 1e9)
            while !worker.isStopRequested {
                clock.sleep(until: clock.now() + 100_000_000, unless: { [self] in
                    worker.isStopRequested || state.withLock { !$0.pending.isEmpty }
                })
                if worker.isStopRequested { break }
                var due = state.withLock { state -> Set<String> in
                    defer { state.pending.removeAll() }
                    return state.pending
                }
                if clock.now() >= nextRefresh {
                    due.formUnion(state.withLock { Set($0.seen.keys) })
                    nextRefresh = clock.now() + UInt64(Self.refreshSeconds * 1e9)
                }
                for node in nodes where due.contains(node.name) { ask(node, seconds: NodeForwarding.seconds, isCancelled: { worker.isStopRequested }) }
            }
        }
    }

    /// Stops the thread, then asks every node seen this session once more (all within `finalSeconds`),
    /// before the session ends.
    func stop() {
        worker.stop()
        let seen = state.withLock { Set($0.seen.keys).union($0.pending) }
        let deadline = MonotonicClock.now() + UInt64(Self.finalSeconds * 1e9)
        for node in nodes where seen.contains(node.name) {
            let left = Double(deadline > MonotonicClock.now() ? deadline - MonotonicClock.now() : 0) / 1e9
            guard left > 0.2 else {
                keep(NodeSessionRecord(node: node.name, nodeSession: nil, state: .unreachable, reason: "not asked at the session's end: out of time",
                                       askedAt: Date()), force: true)
                continue
            }
            ask(node, seconds: min(NodeForwarding.seconds, left), force: true)
        }
    }

    /// Asks `node` and keeps what it answered (or why not).
    private func ask(_ node: SRTListenerSpec.Node, seconds: Double, force: Bool = false, isCancelled: () -> Bool = { false }) {
        let now = Date()
        guard let address = node.api else {
            keep(NodeSessionRecord(node: node.name, nodeSession: nil, state: .unknown,
                                   reason: "no api in network.srt.nodes' entry for \(node.name)", askedAt: now), force: force)
            return
        }
        do {
            let (session, reply, offset) = try Self.recordings(of: node, at: address, seconds: seconds, isCancelled: isCancelled)
            keep(NodeSessionRecord(node: node.name, nodeSession: session, state: .answered, askedAt: now, recordings: reply.recordings.map {
                NodeRecordingRecord(nodeSession: session, camera: $0.camera, kind: $0.kind, path: $0.path, startedAt: $0.startedAt,
                                    endedAt: $0.endedAt, bytes: $0.bytes.map(Int64.init), origin: $0.origin)
            }, clockOffsetMicroseconds: offset), force: force)
        } catch {
            // Cut short by the stop: the last ask, made next, says how the node is.
            guard !isCancelled() else { return }
            keep(NodeSessionRecord(node: node.name, nodeSession: nil, state: .unreachable, reason: error.message, askedAt: now), force: force)
        }
    }

    /// Node `node`'s current session and its clock's offset against this switcher's (from its `status`:
    /// `switcher_clock`, in whole milliseconds as µs, nil while not measured) and that session's
    /// `recordings`, over its API.
    static func recordings(of node: SRTListenerSpec.Node, at address: ListenAddress, seconds: Double,
                           isCancelled: () -> Bool = { false }) throws(ControlError) -> (Int64, RecordingsReply, Int64?) {
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        let status = try NodeAPI(node: node, address: address).get("/api/v1/status", seconds: seconds, isCancelled: isCancelled)
        guard let session = status["session"]?.intValue.map(Int64.init) else {
            throw ControlError(.internal, "node \(node.name)'s status has no session")
        }
        let left = max(0.2, Double(deadline > MonotonicClock.now() ? deadline - MonotonicClock.now() : 0) / 1e9)
        let json = try NodeAPI(node: node, address: address).get("/api/v1/sessions/\(session)/recordings", seconds: left, isCancelled: isCancelled)
        // Whole milliseconds: the estimate moves by microseconds, and an unchanged answer is not written again.
        let clock = status["switcher_clock"]
        let offset = clock?["measured"] == .bool(true) ? clock?["offset_ms"]?.doubleValue.map { Int64($0.rounded()) * 1000 } : nil
        do { return (session, try json.decode(RecordingsReply.self), offset) } catch {
            throw ControlError(.internal, "node \(node.name)'s recordings cannot be read: \(error)")
        }
    }

    /// The ISO files open in the node's last answer and ended in this one, the node's session the same
    /// (a node that restarted ended its files by stopping; its camera's loss says that).
    private func noteStoppedFiles(was previous: NodeSessionRecord, now record: NodeSessionRecord) {
        guard record.state == .answered, previous.state == .answered, record.nodeSession == previous.nodeSession else { return }
        let open = Set(previous.recordings.filter { $0.endedAt == nil }.map(\.path))
        for file in record.recordings where file.kind == "iso" && file.endedAt != nil && open.contains(file.path) {
            let camera = CameraID("\(record.node)/\(file.camera)")
            log.info("warning: node \(record.node)'s ISO file of \(camera.name) stopped while the node runs on (\(file.path), "
                     + "\(file.bytes.map { "\($0) bytes" } ?? "size unknown")): its history says why (its disk full?)")
            emit(StudioEvent(kind: .nodeRecordingStopped, camera: camera, details: [
                "node": record.node, "path": file.path, "bytes": file.bytes.map(String.init) ?? "",
            ]))
        }
    }

    /// Keeps the answer when it differs from the last one kept (or `force`), and logs a change of state.
    private func keep(_ record: NodeSessionRecord, force: Bool) {
        let previous = state.withLock { state -> NodeSessionRecord? in
            defer { state.seen[record.node] = record }
            return state.seen[record.node]
        }
        var compared = record
        compared.askedAt = previous?.askedAt ?? record.askedAt
        guard force || previous != compared else { return }
        store.noteNode(record)
        if let previous { noteStoppedFiles(was: previous, now: record) }
        guard previous?.state != record.state || previous?.reason != record.reason || previous?.nodeSession != record.nodeSession else { return }
        switch record.state {
        case .answered:
            log.info("node \(record.node): session \(record.nodeSession.map(String.init) ?? "?"), \(record.recordings.count) recording(s) kept in this session's history")
        case .unreachable:
            log.info("warning: node \(record.node)'s history could not be asked: \(record.reason ?? "")")
        case .unknown:
            log.info("node \(record.node): its session and ISO files are unknown to the switcher (\(record.reason ?? "")): set api and token there")
        }
    }
}
