import Foundation
import StudioCore

// What queries return: rows as values. Their JSON shapes for the control protocol and the CLI are the
// reply types of the control commands (module StudioServer), built from these.

/// One server run.
public struct SessionRecord: Sendable, Hashable {
    public var id: Int64
    public var startedAt: Date
    public var endedAt: Date?
    /// `stopped`, `crashed`, `error` (see docs/schema.md); nil while open.
    public var endReason: String?
    /// Number of `switch` events in the session.
    public var switchCount: Int
    /// Number of events in the session (including session_started/session_ended).
    public var eventCount: Int
    /// The configuration at start, as JSON text.
    public var configSnapshot: String
    public var hostname: String
    public var pid: Int32
    /// The program's integrated loudness (EBU R128, LUFS) and highest sample (dBFS), from the mixer's
    /// meters when the session stopped; nil while open, after a crash, or for a silent program.
    public var integratedLUFS: Double?
    public var peakDBFS: Double?

    public var isOpen: Bool { endedAt == nil }

    public init(id: Int64, startedAt: Date, endedAt: Date?, endReason: String?, switchCount: Int, eventCount: Int,
                configSnapshot: String, hostname: String, pid: Int32, integratedLUFS: Double? = nil, peakDBFS: Double? = nil) {
        self.integratedLUFS = integratedLUFS
        self.peakDBFS = peakDBFS
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.endReason = endReason
        self.switchCount = switchCount
        self.eventCount = eventCount
        self.configSnapshot = configSnapshot
        self.hostname = hostname
        self.pid = pid
    }
}

/// One stored event.
public struct EventRecord: Sendable, Hashable {
    public var id: Int64
    public var sessionID: Int64
    public var kind: EventKind
    public var camera: CameraID?
    public var wallTime: Date
    /// Program time in milliseconds (the FLV timestamp clock), where the event has one.
    public var programMilliseconds: Int64?
    public var details: [String: String]

    public init(id: Int64, sessionID: Int64, kind: EventKind, camera: CameraID?, wallTime: Date,
                programMilliseconds: Int64?, details: [String: String]) {
        self.id = id
        self.sessionID = sessionID
        self.kind = kind
        self.camera = camera
        self.wallTime = wallTime
        self.programMilliseconds = programMilliseconds
        self.details = details
    }

    public var programTime: MediaTime? { programMilliseconds.map { MediaTime.milliseconds($0) } }

    /// The event as stages emit it (wall time and program time at millisecond precision).
    public var studioEvent: StudioEvent {
        StudioEvent(kind: kind, camera: camera, wallTime: wallTime, programTime: programTime, details: details)
    }
}

/// A camera the server has seen, with its stable name.
public struct CameraRecord: Sendable, Hashable {
    /// Stable device identity (what `cameraName(forIdentity:...)` was given).
    public var identity: String
    public var name: CameraID
    /// The backend's name (`BackendName.rawValue`) as text: a database written by a binary with other
    /// backends still lists.
    public var backend: String
    public var displayName: String
    public var firstSeen: Date
    public var lastSeen: Date

    public var backendName: BackendName { BackendName(backend) }

    public init(identity: String, name: CameraID, backend: String, displayName: String, firstSeen: Date, lastSeen: Date) {
        self.identity = identity
        self.name = name
        self.backend = backend
        self.displayName = displayName
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// A local recording file.
public struct RecordingRecord: Sendable, Hashable {
    public var id: Int64
    public var sessionID: Int64
    /// nil for the program feed.
    public var camera: CameraID?
    public var path: String
    public var startedAt: Date
    public var endedAt: Date?
    /// The file's size when it was closed; nil while it is written (or when the server was killed).
    public var bytes: Int64?

    public init(id: Int64, sessionID: Int64, camera: CameraID?, path: String, startedAt: Date, endedAt: Date?, bytes: Int64? = nil) {
        self.id = id
        self.sessionID = sessionID
        self.camera = camera
        self.path = path
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.bytes = bytes
    }
}

/// Counters of the store's writer thread.
public struct EventStoreStatistics: Sendable, Hashable {
    /// Events committed to the database.
    public var eventsWritten: Int = 0
    /// Events taken by the store thread and waiting for the database (it was busy or failing).
    public var eventsQueued: Int = 0
    /// Events refused by `record` because the queue was full or the store closed/read-only.
    public var eventsDropped: Int = 0
    /// Events recorded while no session was open (not stored).
    public var eventsWithoutSession: Int = 0
    /// Events lost because the database kept failing while the backlog was full
    /// (`EventStoreLimits.backlogCapacity`), or because their batch failed in a way a retry cannot fix.
    public var eventsFailed: Int = 0
    /// Since when writes have been failing (and are retried); nil while the database takes them.
    public var failingSince: Date?
    public var lastWriteError: String?
    /// Times the database file was deleted or replaced under the store and it carried on in the file at its path.
    public var databaseReplacements: Int = 0
    /// While the store is not writing to a database at its path (it was deleted or replaced and the store
    /// could not switch yet, or the path holds a file it may not write): what is wrong. nil otherwise.
    public var databaseProblem: String?

    /// Every event recorded that will never reach the database: dropped at the queue, or failed.
    public var eventsLost: Int { eventsDropped + eventsFailed }
}

/// How long the store waits for a busy database, and how many events it keeps while it cannot write.
public struct EventStoreLimits: Sendable, Hashable {
    /// SQLite's busy timeout on the store's connection: each write attempt waits this long for a lock.
    public var busyTimeoutMilliseconds: Int32
    /// Events the store thread keeps (in order) while the database refuses writes; beyond it, new events
    /// are counted as lost and an `events_lost` event is written once the database is back.
    public var backlogCapacity: Int
    /// The pause between write attempts while failing (on top of the busy timeout).
    public var retryIntervalSeconds: Double

    /// How often the open session's `heartbeat_at` is set, so a crash is dated within this interval.
    public var heartbeatIntervalSeconds: Double

    public init(busyTimeoutMilliseconds: Int32 = 5000, backlogCapacity: Int = 100_000, retryIntervalSeconds: Double = 0.5,
                heartbeatIntervalSeconds: Double = 5) {
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.backlogCapacity = backlogCapacity
        self.retryIntervalSeconds = retryIntervalSeconds
        self.heartbeatIntervalSeconds = heartbeatIntervalSeconds
    }
}

/// What the store tells its owner about the database's health (once per change, not per retry). Called on
/// the store thread: hand it off, don't block.
public enum EventStoreNotice: Sendable {
    /// Writes started failing; they are retried and the events kept (up to the backlog capacity).
    case writesFailing(error: String)
    /// The first event lost in this outage (the backlog is full).
    case eventsLost(backlogCapacity: Int)
    /// The database takes writes again; `lostEvent` is the `events_lost` event just written, if any was lost.
    case writesRecovered(failedForSeconds: Double, lostEvent: StudioEvent?)
    /// The database file was deleted or replaced under the store (`what` says how, and where the old file
    /// is now). The store stops writing to it and switches to the file at `path`.
    case databaseFileChanged(path: String, what: String)
    /// The file now at `path` is not a studio event database (or cannot be opened): nothing is written
    /// there; events are kept (up to the backlog capacity) and the path is tried again.
    case databaseFileRefused(path: String, reason: String)
    /// The store carries on in the file at `path` (`created` when it made a new one); `session` continues
    /// `previousSession` there (both nil when no session was open).
    case databaseFileReplaced(path: String, created: Bool, previousSession: Int64?, session: Int64?)
}
