import Foundation
import StudioSystem
import Synchronization

/// What the store thread is fed through its bounded queue, in FIFO order.
enum StoreCommand: Sendable {
    /// From `record`: batched with its neighbours into one transaction.
    case event(StudioEvent)
    /// A synchronous call: runs on the store thread after everything enqueued before it is committed.
    case job(@Sendable (StoreWorker) -> Void)
}

/// Counters and the current session id, written by the store thread and read by callers.
final class SharedState: Sendable {
    struct Values: Sendable {
        var statistics = EventStoreStatistics()
        var currentSessionID: Int64?
    }
    let values = Mutex(Values())
}

/// The store thread's side: owns the connection (so it is only ever used on that thread) and the current
/// session. Created on the store thread and never leaves it.
final class StoreWorker {
    let path: String
    /// The open database; while the store switches files (see `ensureCurrentFile`) a connection that throws
    /// `cannotOpen` with the reason.
    var connection: SQLiteConnection
    /// The identity of the file `connection` has open (writers only; nil while switching files).
    var fileWatch: DatabaseFileWatch?
    /// The switch in progress since the path stopped naming the open file; nil while it does.
    var pendingSwitch: PendingSwitch?
    /// The open session's configuration snapshot, for the session that continues it in another file.
    var sessionSnapshot: String?
    /// Events of the open session committed to the current file (said in `database_replaced`).
    var sessionEventsInFile = 0
    /// The open session's recordings not yet finished, by the id `addRecording` returned: registered again
    /// in the file a switch carries on in.
    var openRecordings: [Int64: OpenRecording] = [:]
    /// For those re-registered under another id (that id was taken in the new file): the id in the current file.
    var recordingIDs: [Int64: Int64] = [:]
    let isReadOnly: Bool
    let shared: SharedState
    let process = ProcessIdentity.current()
    var currentSessionID: Int64? {
        didSet {
            let id = currentSessionID
            shared.values.withLock { $0.currentSessionID = id }
        }
    }

    let limits: EventStoreLimits
    let notify: @Sendable (EventStoreNotice) -> Void
    /// Events taken from the queue and not yet committed, oldest first, with the session they belong to.
    var backlog: [(event: StudioEvent, sessionID: Int64)] = []
    /// Events lost since the last `events_lost` event (backlog overflow; queue drops are added at write).
    var loss = Loss()
    private var failingSince: Date?
    /// Monotonic time of the open session's next heartbeat.
    var nextHeartbeat: UInt64 = 0

    struct Loss {
        var count = 0
        var first: Date?
        var last: Date?
        var sessionID: Int64?
        /// `statistics.eventsDropped` already reported in an `events_lost` event.
        var reportedDrops = 0
    }

    /// Opens the database, sets the pragmas and applies (or, read-only, checks) the migrations.
    init(path: String, readOnly: Bool, shared: SharedState, limits: EventStoreLimits = EventStoreLimits(),
         notify: @escaping @Sendable (EventStoreNotice) -> Void = { _ in }) throws {
        self.path = path
        self.isReadOnly = readOnly
        self.shared = shared
        self.limits = limits
        self.notify = notify
        connection = try Self.open(path: path, readOnly: readOnly, limits: limits)
        if !readOnly { fileWatch = try Self.watch(path) }
    }

    /// The file's identity, taken right after its connection opened it.
    static func watch(_ path: String) throws -> DatabaseFileWatch {
        do { return try DatabaseFileWatch(path: path) } catch {
            throw EventStoreError.cannotRead(path: path, reason: "\(error)")
        }
    }

    /// Opens a connection, sets the pragmas and applies (or, read-only, checks) the migrations.
    static func open(path: String, readOnly: Bool, limits: EventStoreLimits) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, readOnly: readOnly)
        try connection.setBusyTimeout(milliseconds: limits.busyTimeoutMilliseconds)
        try connection.execute("PRAGMA foreign_keys = ON", what: "enabling foreign keys on \(path)")
        if readOnly {
            try Migrator.requireCurrent(connection)
        } else {
            // WAL: readers (the CLI) never block the writer; with synchronous=NORMAL a commit survives the
            // process being killed (only a power loss may lose the last commits), and the file stays intact.
            let mode = try connection.query("PRAGMA journal_mode = WAL") { try $0.text("journal_mode") }.first ?? ""
            if mode.lowercased() != "wal" {
                throw EventStoreError.sqlite(SQLiteError(code: .error, message: "journal_mode is \(mode), expected wal",
                                                         context: "switching \(path) to WAL"))
            }
            try connection.execute("PRAGMA synchronous = NORMAL", what: "setting synchronous=NORMAL on \(path)")
            try Migrator.migrate(connection)
        }
        return connection
    }

    /// The thread's loop: one wake-up takes everything queued; consecutive events share a transaction, a
    /// job first commits the events queued before it. While writes fail, the events stay in `backlog` and
    /// are retried every `retryIntervalSeconds` (each attempt also waits the busy timeout). Returns at end
    /// of stream after a last attempt, closing the connection.
    func run(_ queue: BoundedQueue<StoreCommand>) {
        defer { closeFile() }
        while true {
            let retrying = !backlog.isEmpty || loss.count > 0 || pendingSwitch != nil
            var timeout: Double? = retrying ? limits.retryIntervalSeconds : nil
            if currentSessionID != nil {
                let now = MonotonicClock.now()
                let untilBeat = nextHeartbeat > now ? Double(nextHeartbeat - now) / 1e9 : 0
                timeout = min(timeout ?? untilBeat, untilBeat)
            }
            defer { beatIfDue() }
            switch queue.pop(timeoutSeconds: timeout) {
            case .endOfStream:
                writeBacklog()
                if !backlog.isEmpty {
                    let count = backlog.count
                    backlog.removeAll()
                    shared.values.withLock {
                        $0.statistics.eventsFailed += count
                        $0.statistics.eventsQueued = 0
                    }
                }
                return
            case .timedOut:
                writeBacklog()
                if pendingSwitch != nil { ensureCurrentFile() }
            case .item(let first):
                for command in [first] + queue.drain() {
                    switch command {
                    case .event(let event):
                        take(event)
                    case .job(let job):
                        writeBacklog()
                        ensureCurrentFile()
                        job(self)
                    }
                }
                writeBacklog()
            }
        }
    }

    /// Sets the open session's `heartbeat_at` when its interval has passed. A failure (the database is
    /// locked) is left for the next beat: the events' own retry says what is wrong.
    private func beatIfDue() {
        guard currentSessionID != nil, MonotonicClock.now() >= nextHeartbeat else { return }
        nextHeartbeat = MonotonicClock.now() + UInt64(limits.heartbeatIntervalSeconds * 1e9)
        // Also when idle, the file is looked at every beat: a deleted or replaced database is noticed
        // within the heartbeat interval.
        ensureCurrentFile()
        guard let sessionID = currentSessionID else { return }
        try? connection.run("UPDATE sessions SET heartbeat_at = ? WHERE id = ?",
                            [.integer(Date().unixMilliseconds), .integer(sessionID)])
    }

    // MARK: Writing events

    private static let insertEventSQL =
        "INSERT INTO events (session_id, wall_time, program_ms, kind, camera, details) VALUES (?, ?, ?, ?, ?, ?)"

    /// Appends an event to the backlog, or counts it lost if the backlog is full.
    private func take(_ event: StudioEvent) {
        if isReadOnly {
            shared.values.withLock { $0.statistics.eventsDropped += 1 }
            return
        }
        guard let sessionID = currentSessionID else {
            shared.values.withLock { $0.statistics.eventsWithoutSession += 1 }
            return
        }
        guard backlog.count < limits.backlogCapacity else {
            if loss.count == 0 { notify(.eventsLost(backlogCapacity: limits.backlogCapacity)) }
            loss.count += 1
            loss.first = loss.first ?? event.wallTime
            loss.last = event.wallTime
            loss.sessionID = sessionID
            shared.values.withLock { $0.statistics.eventsFailed += 1 }
            return
        }
        backlog.append((event, sessionID))
    }

    /// Writes the backlog, and the `events_lost` event if some were lost, in one transaction. On an error a
    /// retry may fix (busy, locked, I/O, full, read-only file), keeps them for the next attempt.
    private func writeBacklog() {
        let drops = shared.values.withLock { $0.statistics.eventsDropped }
        let lostAtQueue = isReadOnly ? 0 : drops - loss.reportedDrops
        guard !backlog.isEmpty || loss.count > 0 || (lostAtQueue > 0 && currentSessionID != nil) else { return }
        ensureCurrentFile()
        var lostEvent: StudioEvent?
        let lost = loss.count + lostAtQueue
        if lost > 0 {
            var details = ["lost": "\(lost)", "bound": "\(limits.backlogCapacity)"]
            if let first = loss.first, let last = loss.last {
                details["first_lost_ms"] = "\(first.unixMilliseconds)"
                details["last_lost_ms"] = "\(last.unixMilliseconds)"
            }
            if lostAtQueue > 0 { details["dropped_at_queue"] = "\(lostAtQueue)" }
            if let error = shared.values.withLock({ $0.statistics.lastWriteError }) { details["error"] = error }
            lostEvent = StudioEvent(kind: .eventsLost, wallTime: Date(), details: details)
        }
        let lossSession = currentSessionID ?? loss.sessionID
        do {
            try connection.transaction("writing \(backlog.count) event(s)") {
                for entry in backlog { try insert(entry.event, sessionID: entry.sessionID) }
                if let lostEvent, let lossSession { try insert(lostEvent, sessionID: lossSession) }
            }
        } catch {
            let message = "\(error)"
            let retryable = (error as? SQLiteError).map { Self.retryableCodes.contains($0.code.primary) } ?? false
            let count = backlog.count
            if !retryable { backlog.removeAll() }
            let startedFailing = failingSince == nil && retryable
            if startedFailing { failingSince = Date() }
            let since = failingSince
            shared.values.withLock {
                $0.statistics.lastWriteError = message
                $0.statistics.eventsQueued = retryable ? count : 0
                $0.statistics.failingSince = since
                if !retryable { $0.statistics.eventsFailed += count }
            }
            if startedFailing { notify(.writesFailing(error: message)) }
            return
        }
        let count = backlog.count + (lostEvent == nil || lossSession == nil ? 0 : 1)
        sessionEventsInFile += backlog.count(where: { $0.sessionID == currentSessionID })
        backlog.removeAll(keepingCapacity: true)
        loss = Loss(reportedDrops: drops)
        let recoveredFrom = failingSince
        failingSince = nil
        shared.values.withLock {
            $0.statistics.eventsWritten += count
            $0.statistics.eventsQueued = 0
            $0.statistics.failingSince = nil
        }
        if let recoveredFrom {
            notify(.writesRecovered(failedForSeconds: Date().timeIntervalSince(recoveredFrom), lostEvent: lostEvent))
        } else if let lostEvent {
            notify(.writesRecovered(failedForSeconds: 0, lostEvent: lostEvent))
        }
    }

    /// Primary result codes after which the same write may succeed later.
    private static let retryableCodes: Set<SQLiteResult> = [.busy, .locked, .ioError, .full, .readOnly, .cannotOpen]

    @discardableResult
    func insert(_ event: StudioEvent, sessionID: Int64) throws -> Int64 {
        try connection.run(Self.insertEventSQL, [
            .integer(sessionID), .integer(event.wallTime.unixMilliseconds), .optional(event.programTime?.milliseconds),
            .text(event.kind.rawValue), .optional(event.camera?.name), .text(Self.encodeDetails(event.details)),
        ])
        return connection.lastInsertRowID
    }

    static func encodeDetails(_ details: [String: String]) -> String {
        guard !details.isEmpty else { return "{}" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding [String: String] cannot fail.
        return (try? String(decoding: encoder.encode(details), as: UTF8.self)) ?? "{}"
    }

    /// Lenient: a non-string value (from a hand-edited row) is shown as its JSON text.
    static func decodeDetails(_ text: String) -> [String: String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return [:] }
        var details: [String: String] = [:]
        for (key, value) in object {
            if let string = value as? String {
                details[key] = string
            } else if let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) {
                details[key] = String(decoding: data, as: UTF8.self)
            }
        }
        return details
    }

    func requireWritable(_ operation: String) throws {
        if isReadOnly { throw EventStoreError.readOnly(operation: operation) }
    }

    // MARK: Maintenance

    func integrityCheck() throws -> String {
        try connection.query("PRAGMA integrity_check") { try $0.text("integrity_check") }.joined(separator: "\n")
    }

    func appliedMigrations() throws -> [AppliedMigration] {
        try Migrator.appliedMigrations(connection)
    }
}
