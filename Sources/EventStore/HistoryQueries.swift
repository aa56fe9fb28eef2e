import Foundation
import StudioCore

// Questions about past sessions: filtered events and sessions, and what was on program when. The program
// timeline is computed in one place, the `program_intervals` view (migrations 0004, 0006, 0007, docs/schema.md); these
// calls read it.

/// Which events `events(matching:)` returns. Every condition given must hold; nil or empty means "any".
public struct EventQuery: Sendable, Hashable {
    /// One session, or every session when nil.
    public var sessionID: Int64?
    /// Any of these kinds.
    public var kinds: [EventKind]
    /// Events about this camera (the name they were recorded with).
    public var camera: CameraID?
    /// Wall time: at or after `since`, before `until`.
    public var since: Date?
    public var until: Date?
    /// Program time in ms: at or after `fromProgramMilliseconds`, before `toProgramMilliseconds` (only events
    /// that have a program time match when either is given).
    public var fromProgramMilliseconds: Int64?
    public var toProgramMilliseconds: Int64?
    /// The latest `limit` matches (still returned oldest first).
    public var limit: Int?
    /// A page of the matches: those with an id above `afterID`, the first `pageSize` of them.
    public var afterID: Int64?
    public var pageSize: Int?

    public init(sessionID: Int64? = nil, kinds: [EventKind] = [], camera: CameraID? = nil, since: Date? = nil, until: Date? = nil,
                fromProgramMilliseconds: Int64? = nil, toProgramMilliseconds: Int64? = nil, limit: Int? = nil,
                afterID: Int64? = nil, pageSize: Int? = nil) {
        self.sessionID = sessionID
        self.kinds = kinds
        self.camera = camera
        self.since = since
        self.until = until
        self.fromProgramMilliseconds = fromProgramMilliseconds
        self.toProgramMilliseconds = toProgramMilliseconds
        self.limit = limit
        self.afterID = afterID
        self.pageSize = pageSize
    }
}

/// Which sessions `sessions(matching:)` returns (newest first).
public struct SessionQuery: Sendable, Hashable {
    /// Sessions that ran at some moment at or after `since` (still open, or ended at or after it).
    public var since: Date?
    /// Sessions that started before `until`.
    public var until: Date?
    /// Any of these `end_reason`s (`stopped`, `crashed`, `error`).
    public var endReasons: [String]
    /// The newest `limit` of them.
    public var limit: Int?

    public init(since: Date? = nil, until: Date? = nil, endReasons: [String] = [], limit: Int? = nil) {
        self.since = since
        self.until = until
        self.endReasons = endReasons
        self.limit = limit
    }
}

/// A row of `program_intervals`: one source on program, from one boundary to the next.
public struct ProgramInterval: Sendable, Hashable {
    public var sessionID: Int64
    /// 1, 2, ... in program order.
    public var sequence: Int
    /// The camera's or scene's name, or `slate` while the camera on program was lost or removed without a backup.
    public var source: String
    /// `camera`, `scene` or `slate`.
    public var sourceKind: String
    /// The camera (for `slate`: the lost or removed one); nil for a scene.
    public var camera: CameraID?
    public var fromMilliseconds: Int64
    public var toMilliseconds: Int64
    public var durationMilliseconds: Int64
    /// `cut`, `transition`, `backup`, `loss`, `removed`, `returned`, `added`, `session end`; nil while still on air.
    public var endedBy: String?
    /// The kind of the transition that ended it.
    public var via: String?
    /// That transition's first frame (it ends at `toMilliseconds`).
    public var transitionFromMilliseconds: Int64?

    public init(sessionID: Int64, sequence: Int, source: String, sourceKind: String, camera: CameraID?, fromMilliseconds: Int64,
                toMilliseconds: Int64, durationMilliseconds: Int64, endedBy: String?, via: String?, transitionFromMilliseconds: Int64?) {
        self.sessionID = sessionID
        self.sequence = sequence
        self.source = source
        self.sourceKind = sourceKind
        self.camera = camera
        self.fromMilliseconds = fromMilliseconds
        self.toMilliseconds = toMilliseconds
        self.durationMilliseconds = durationMilliseconds
        self.endedBy = endedBy
        self.via = via
        self.transitionFromMilliseconds = transitionFromMilliseconds
    }
}

/// A row of `session_program_time`: how far a session's program ran.
public struct SessionProgramTime: Sendable, Hashable {
    public var sessionID: Int64
    public var fromMilliseconds: Int64
    public var toMilliseconds: Int64
    public var isOpen: Bool
    public var durationMilliseconds: Int64 { toMilliseconds - fromMilliseconds }
}

/// What the history holds, for error messages that say what exists.
public struct HistoryExtent: Sendable, Hashable {
    public var sessionCount: Int
    public var oldestSessionID: Int64?
    public var newestSessionID: Int64?
    public var newestStartedAt: Date?
}

extension EventStore {
    /// Events matching `query`, oldest first.
    public func events(matching query: EventQuery) throws -> [EventRecord] {
        try perform("events") { try $0.events(matching: query) }
    }

    /// Events matching `query`, oldest first, handed to `body` one by one on the store thread as they are
    /// read (nothing else runs on it meanwhile; keep `body` quick: print, never wait on the store).
    public func forEachEvent(matching query: EventQuery, _ body: @escaping @Sendable (EventRecord) throws -> Void) throws {
        try perform("events") { try $0.forEachEvent(matching: query, body) }
    }

    /// Whether the history knows this camera (`cameraNamesInHistory` contains it), without reading every event.
    public func knowsCamera(_ camera: CameraID) throws -> Bool {
        try perform("knowsCamera") { try $0.knowsCamera(camera) }
    }

    /// Sessions matching `query`, newest first, with their switch and event counts.
    public func sessions(matching query: SessionQuery) throws -> [SessionRecord] {
        try perform("sessions") { try $0.sessions(matching: query) }
    }

    /// The session's program timeline (`program_intervals`), in order; empty when nothing was ever on program.
    public func programIntervals(sessionID: Int64) throws -> [ProgramInterval] {
        try perform("programIntervals") { try $0.programIntervals(sessionID: sessionID) }
    }

    /// How far the session's program ran (`session_program_time`); nil when nothing was ever on program.
    public func programTime(sessionID: Int64) throws -> SessionProgramTime? {
        try perform("programTime") { try $0.programTime(sessionID: sessionID) }
    }

    /// Every camera name the history knows (the `cameras` table and the names events were recorded with).
    public func cameraNamesInHistory() throws -> [CameraID] {
        try perform("cameraNamesInHistory") { try $0.cameraNamesInHistory() }
    }

    /// Whether any stored event has this kind (for kinds written by a newer binary).
    public func hasEvents(ofKind kind: EventKind) throws -> Bool {
        try perform("hasEvents") { try $0.hasEvents(ofKind: kind) }
    }

    /// How many sessions there are, the oldest and newest ids, and when the newest started.
    public func historyExtent() throws -> HistoryExtent {
        try perform("historyExtent") { try $0.historyExtent() }
    }
}
