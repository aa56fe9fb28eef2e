import Foundation
import StudioCore
import StudioSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The studio's SQLite event store: sessions, events, stable camera names and recordings.
///
/// All database work happens on the store's own thread ("studio.store"), fed FIFO by a bounded queue:
/// - `record(_:)` never blocks: it offers the event to the queue and, if the queue is full (or the store
///   closed), counts it in `statistics.eventsDropped`. Each wake-up of the store thread writes everything
///   queued in one transaction.
/// - Every other call is synchronous for its caller but runs on the store thread behind everything enqueued
///   before it, so it sees all earlier `record`s committed. Don't call them from the media path.
///
/// The schema comes from `migrations/*.sql`, compiled in by the EmbedMigrations plugin and applied at open
/// (see docs/schema.md). Errors are `EventStoreError`.
public final class EventStore: Sendable {
    public let path: String
    public let isReadOnly: Bool
    private let queue: BoundedQueue<StoreCommand>
    private let thread: NamedThread
    private let shared: SharedState
    private let closed = Mutex(false)

    public static let defaultQueueCapacity = 4096

    /// Opens (creating if needed) the database at `path` for writing, creating its parent directory, and
    /// applies pending migrations. Throws a clear `EventStoreError` if the place is not writable, the file
    /// is not an event database (`notAnEventDatabase`: a non-empty SQLite database without
    /// `schema_migrations`, or not SQLite at all; the file is left untouched), or a landed migration was
    /// changed.
    ///
    /// While the database refuses writes (another process holds its lock, the disk is full), events wait on
    /// the store thread, in order, up to `limits.backlogCapacity`, and are retried until it takes them;
    /// `notify` hears once when writes start failing, when events start being lost and when they recover.
    public convenience init(path: String, queueCapacity: Int = EventStore.defaultQueueCapacity,
                            limits: EventStoreLimits = EventStoreLimits(),
                            notify: @escaping @Sendable (EventStoreNotice) -> Void = { _ in }) throws {
        try Self.prepareDirectory(for: path)
        try Self.refuseForeignDatabase(at: path)
        try self.init(opening: path, readOnly: false, queueCapacity: queueCapacity, limits: limits, notify: notify)
    }

    /// Looks at an existing non-empty file read-only before the store thread opens it for writing (which
    /// switches it to WAL before migrating), so an unrelated database is refused without being changed.
    /// The migrator checks again under its own connection.
    static func refuseForeignDatabase(at path: String) throws {
        var info = stat()
        do {
            try syscall("stat") { stat(path, &info) }
        } catch {
            return  // not there yet (or not visible): the open below says what is wrong
        }
        guard info.st_size > 0 else { return }
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            defer { connection.close() }
            try Migrator.requireEventDatabaseOrEmpty(connection)
        } catch let error as SQLiteError {
            throw EventStoreError.sqlite(error)
        }
    }

    /// Opens an existing database read-only (for the CLI when no server runs; also safe while one runs).
    /// Throws `databaseMissing` if there is no file, `schemaOutdated` if it needs migrations first.
    public static func openReadOnly(path: String) throws -> EventStore {
        var info = stat()
        do {
            try syscall("stat") { stat(path, &info) }
        } catch {
            if error.errno == ENOENT { throw EventStoreError.databaseMissing(path: path) }
            throw EventStoreError.cannotRead(path: path, reason: "\(error)")
        }
        // SQLite would say "disk I/O error" of a directory.
        if info.st_mode & S_IFMT == S_IFDIR { throw EventStoreError.cannotRead(path: path, reason: "it is a directory") }
        return try EventStore(opening: path, readOnly: true, queueCapacity: 64)
    }

    private init(opening path: String, readOnly: Bool, queueCapacity: Int, limits: EventStoreLimits = EventStoreLimits(),
                 notify: @escaping @Sendable (EventStoreNotice) -> Void = { _ in }) throws {
        let queue = BoundedQueue<StoreCommand>(capacity: max(1, queueCapacity))
        let shared = SharedState()
        let opened = Completion<Void>()
        let thread = NamedThread.start(name: "studio.store") {
            let worker: StoreWorker
            do {
                worker = try StoreWorker(path: path, readOnly: readOnly, shared: shared, limits: limits, notify: notify)
            } catch {
                opened.fulfil(.failure(error))
                return
            }
            opened.fulfil(.success(()))
            worker.run(queue)
        }
        if case .failure(let error) = opened.wait() {
            thread.join()
            throw Self.publicError(error)
        }
        self.path = path
        self.isReadOnly = readOnly
        self.queue = queue
        self.thread = thread
        self.shared = shared
    }

    deinit { close() }

    /// Commits what is queued, closes the database and ends the store thread. Idempotent. Does not end the
    /// session: call `endSession(reason:)` first, or the next start will find it orphaned.
    public func close() {
        let wasOpen = closed.withLock { isClosed -> Bool in
            defer { isClosed = true }
            return !isClosed
        }
        if wasOpen { queue.close() }
        thread.join()
    }

    // MARK: Writing

    /// Queues an event for the current session. Never blocks; counts a drop if the queue is full.
    /// Events recorded while no session is open are counted in `statistics.eventsWithoutSession`, not stored.
    /// Commands (events among them) its queue holds; an event offered to a full queue is dropped and counted.
    public var queueCapacity: Int { queue.capacity }

    public func record(_ event: StudioEvent) {
        if !queue.offer(.event(event)) {
            shared.values.withLock { $0.statistics.eventsDropped += 1 }
        }
    }

    /// Waits until everything enqueued before this call is committed, or has been tried once and is kept
    /// for a retry (see `statistics.eventsQueued`), or has failed (see `statistics`).
    public func flush() {
        _ = try? perform("flush") { _ in }
    }

    /// Starts a session (and records its `session_started` event). `configSnapshot` must be JSON text.
    /// Call `recoverOrphanedSessions()` before, so a crashed predecessor is closed first.
    public func startSession(configSnapshot: String) throws -> Int64 {
        try perform("startSession") { try $0.startSession(configSnapshot: configSnapshot) }
    }

    /// Commits everything recorded so far, then writes the `session_ended` event (details `reason`) and
    /// sets the session's `ended_at` and `end_reason`. Reasons: `stopped`, `error` (see docs/schema.md).
    public func endSession(reason: String) throws {
        try perform("endSession") { try $0.endSession(reason: reason) }
    }

    /// Closes sessions left open by a process that is gone (killed, crashed, machine rebooted): sets
    /// `end_reason = 'crashed'` and `ended_at` = its last sign of life (the later of its last event and its
    /// last heartbeat, set every `EventStoreLimits.heartbeatIntervalSeconds`), and appends a
    /// `session_ended` event with details `reason=crashed`. Returns their ids, oldest first. Sessions whose
    /// process still runs (same boot, pid and process start time) are left alone.
    public func recoverOrphanedSessions() throws -> [Int64] {
        try perform("recoverOrphanedSessions") { try $0.recoverOrphanedSessions() }
    }

    /// The stable name for a camera device, updating its backend, display name and `last_seen`.
    /// - The same `identity` gets the same name across restarts.
    /// - A new identity gets the lowest free `camN` (N >= 1).
    /// - `pinnedName` (from the config) wins. If another identity had that name, that other camera is
    ///   renamed to the lowest free `camN` (computed after this camera gave up its old name); its events keep
    ///   the name they were recorded with. Two devices pinned to one name take it from each other in turn:
    ///   the configuration should forbid that.
    public func cameraName(forIdentity identity: String, backend: BackendName, displayName: String,
                           pinnedName: CameraID?) throws -> CameraID {
        try perform("cameraName") {
            try $0.cameraName(identity: identity, backend: backend, displayName: displayName, pinnedName: pinnedName)
        }
    }

    /// `camN` with the smallest N no camera has: where a camera goes whose stored name a scene now holds.
    public func freeCameraName() throws -> CameraID {
        try perform("freeCameraName") { CameraID(try $0.lowestFreeName(in: "cameras", prefix: "cam")) }
    }

    /// The stable name of an audio input (a PipeWire Audio/Source), as `cameraName` for cameras: the same
    /// identity keeps its name across restarts, a new one gets the lowest free `micN`, and `pinnedName`
    /// (from the config) wins, the input that had it moving to the lowest free `micN`.
    public func audioInputName(forIdentity identity: String, displayName: String, pinnedName: String?) throws -> String {
        try perform("audioInputName") { try $0.audioInputName(identity: identity, displayName: displayName, pinnedName: pinnedName) }
    }

    /// Every audio input ever seen, by name.
    public func audioInputs() throws -> [AudioInputRecord] {
        try perform("audioInputs") { try $0.audioInputs() }
    }

    /// Keeps the current session's program loudness in its row (call before `endSession`).
    public func recordLoudness(integratedLUFS: Double?, peakDBFS: Double?) throws {
        try perform("recordLoudness") { try $0.recordLoudness(integratedLUFS: integratedLUFS, peakDBFS: peakDBFS) }
    }

    /// Registers a recording file in the current session (`cameraID` nil for the program feed).
    public func addRecording(cameraID: CameraID?, path: String) throws -> Int64 {
        try perform("addRecording") { try $0.addRecording(camera: cameraID, path: path) }
    }

    /// Sets the recording's `ended_at` (once; later calls keep the first time).
    public func finishRecording(id: Int64) throws {
        try perform("finishRecording") { try $0.finishRecording(id: id) }
    }

    /// A recording file got its first media at `time`: a row in the current session. Queued behind the
    /// events recorded before it and never blocks (the output thread reports it); a failure is kept in
    /// `statistics.lastWriteError`.
    public func recordingStarted(cameraID: CameraID?, path: String, at time: Date) {
        enqueue("recordingStarted") { _ = try $0.addRecording(camera: cameraID, path: path, startedAt: time) }
    }

    /// The file `path` of the current session was closed at `time`, `bytes` long: its row ends (once).
    /// Queued like `recordingStarted`.
    public func recordingStopped(path: String, bytes: Int64?, at time: Date) {
        enqueue("recordingStopped") { try $0.finishRecording(path: path, bytes: bytes, endedAt: time) }
    }

    /// Ends the current session's recording rows still open (their file was not reported closed);
    /// returns how many.
    @discardableResult
    public func finishOpenRecordings() throws -> Int {
        try perform("finishOpenRecordings") { try $0.finishOpenRecordings() }
    }

    // MARK: Reading

    /// Sessions, newest first, with their switch and event counts.
    public func sessions(limit: Int? = nil) throws -> [SessionRecord] {
        try perform("sessions") { try $0.sessions(limit: limit) }
    }

    /// One session; `nil` means this store's open session, else the newest open one, else the newest.
    public func session(id: Int64?) throws -> SessionRecord? {
        try perform("session") { try $0.session(id: id) }
    }

    /// A session's events in the order they were recorded.
    public func events(sessionID: Int64) throws -> [EventRecord] {
        try perform("events") { try $0.events(sessionID: sessionID) }
    }

    /// Every camera ever seen, ordered by name (cam2 before cam10).
    public func cameras() throws -> [CameraRecord] {
        try perform("cameras") { try $0.cameras() }
    }

    public func recordings(sessionID: Int64) throws -> [RecordingRecord] {
        try perform("recordings") { try $0.recordings(sessionID: sessionID) }
    }

    /// The rows of `schema_migrations`, by version.
    public func appliedMigrations() throws -> [AppliedMigration] {
        try perform("appliedMigrations") { try $0.appliedMigrations() }
    }

    /// `PRAGMA integrity_check`: "ok" for a sound database, else its findings, one per line.
    public func integrityCheck() throws -> String {
        try perform("integrityCheck") { try $0.integrityCheck() }
    }

    /// This store's open session, if any.
    public var currentSessionID: Int64? { shared.values.withLock { $0.currentSessionID } }

    public var statistics: EventStoreStatistics { shared.values.withLock { $0.statistics } }

    // MARK: Plumbing

    /// Runs `body` on the store thread after everything queued before it, and waits for its result.
    /// Jobs are appended past the queue's capacity (only `record` is subject to it): each waiting caller adds
    /// at most one. Internal so tests can hold the store thread.
    func perform<T: Sendable>(_ operation: String, _ body: @escaping @Sendable (StoreWorker) throws -> T) throws -> T {
        let completion = Completion<T>()
        let command = StoreCommand.job { worker in completion.fulfil(Result { try body(worker) }) }
        // Checked and appended under `closed`, so a job is either refused or queued before the end of stream
        // (and therefore run: the store thread drains the queue before it stops).
        let accepted = closed.withLock { isClosed -> Bool in
            guard !isClosed else { return false }
            queue.modify { $0.append(command) }
            return true
        }
        guard accepted else { throw EventStoreError.closed(operation: operation) }
        switch completion.wait() {
        case .success(let value): return value
        case .failure(let error): throw Self.publicError(error)
        }
    }

    /// Runs `body` on the store thread after everything queued before it, without waiting. Rare calls
    /// only (each is appended past the queue's capacity, like `perform`'s jobs).
    func enqueue(_ operation: String, _ body: @escaping @Sendable (StoreWorker) throws -> Void) {
        let shared = self.shared
        let command = StoreCommand.job { worker in
            do { try body(worker) } catch {
                let message = "\(operation): \(Self.publicError(error))"
                shared.values.withLock { $0.statistics.lastWriteError = message }
            }
        }
        closed.withLock { isClosed in
            if !isClosed { queue.modify { $0.append(command) } }
        }
    }

    private static func publicError(_ error: any Error) -> any Error {
        if let error = error as? SQLiteError { return EventStoreError.sqlite(error) }
        return error
    }

    /// Creates the parent directory (like mkdir -p) and checks that it and the file can be written.
    static func prepareDirectory(for path: String) throws {
        guard !path.isEmpty else { throw EventStoreError.invalidArgument("the event database path is empty") }
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        do { try makeDirectories(directory, mode: 0o755) } catch {
            throw EventStoreError.cannotCreateDirectory(path: path, reason: "\(error)")
        }
        var info = stat()
        do {
            try syscall("stat") { stat(directory, &info) }
        } catch {
            throw EventStoreError.cannotCreateDirectory(path: path, reason: "\(directory): \(error)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw EventStoreError.cannotCreateDirectory(path: path, reason: "\(directory) exists and is not a directory")
        }
        do {
            try syscall("access") { access(directory, W_OK | X_OK) }
        } catch {
            throw EventStoreError.notWritable(path: path, reason: "directory \(directory): \(error)")
        }
        if (try? syscall("stat") { stat(path, &info) }) != nil {
            if info.st_mode & S_IFMT == S_IFDIR {
                throw EventStoreError.notWritable(path: path, reason: "it is a directory")
            }
            do {
                try syscall("access") { access(path, R_OK | W_OK) }
            } catch {
                throw EventStoreError.notWritable(path: path, reason: "\(error)")
            }
        }
    }
}

extension EventStore: EventSink {
    /// Same as `record(_:)`, so the store can be handed to stages as their `EventSink`.
    public func emit(_ event: StudioEvent) { record(event) }
}

/// A one-shot result handed from the store thread to a waiting caller.
///
/// `@unchecked Sendable`: `result` is only touched under `lock`.
final class Completion<Value: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var result: Result<Value, any Error>?

    func fulfil(_ value: Result<Value, any Error>) {
        lock.withLock { result = value }
        lock.broadcast()
    }

    func wait() -> Result<Value, any Error> {
        lock.withLock {
            while result == nil { lock.wait() }
            return result!
        }
    }
}
