import Foundation

// What a switcher's session knows of its capture nodes' own history (migration 8, docs/schema.md): each
// node's session and its recording files, as the node's HTTP API answered them (docs/nodes.md).

/// A node as the switcher last asked it, with its files (those of every node session seen).
public struct NodeSessionRecord: Sendable, Hashable {
    /// `answered`, `unreachable` (`reason` says why) or `unknown` (no `api` configured for it).
    public enum State: String, Sendable, Hashable, CaseIterable {
        case answered, unreachable, unknown
    }

    public var node: String
    /// The node's own session id; nil while it never answered.
    public var nodeSession: Int64?
    public var state: State
    public var reason: String?
    public var askedAt: Date
    public var recordings: [NodeRecordingRecord]
    /// The node's clock against the switcher's as the node measured it: microseconds to add to its times
    /// (its files' `startedAt`) to read them on the switcher's clock; nil while not measured.
    public var clockOffsetMicroseconds: Int64?

    public init(node: String, nodeSession: Int64?, state: State, reason: String? = nil, askedAt: Date, recordings: [NodeRecordingRecord] = [],
                clockOffsetMicroseconds: Int64? = nil) {
        self.clockOffsetMicroseconds = clockOffsetMicroseconds
        self.node = node
        self.nodeSession = nodeSession
        self.state = state
        self.reason = reason
        self.askedAt = askedAt
        self.recordings = recordings
    }
}

/// One of a node's files: its camera as the node names it (`cam1`, or `program`), on the node's disk.
public struct NodeRecordingRecord: Sendable, Hashable {
    public var nodeSession: Int64
    public var camera: String
    /// `program` or `iso`.
    public var kind: String
    public var path: String
    public var startedAt: Date
    public var endedAt: Date?
    public var bytes: Int64?
    /// Where the file sits on the time base, as the node answered (migration 9); nil from an older node.
    public var origin: RecordingOrigin?

    public init(nodeSession: Int64, camera: String, kind: String, path: String, startedAt: Date, endedAt: Date? = nil, bytes: Int64? = nil,
                origin: RecordingOrigin? = nil) {
        self.origin = origin
        self.nodeSession = nodeSession
        self.camera = camera
        self.kind = kind
        self.path = path
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.bytes = bytes
    }
}

/// An ISO file's place on a time base: its Matroska tags `STUDIO_ORIGIN_US` (the wall-clock µs of program
/// time 0) and `STUDIO_TIME_BASE` (`local`, `switcher` or `node`), and the program time (ms, the file's own
/// timestamps) of its first packet. A packet at `t` ms in the file was on program at origin + t.
public struct RecordingOrigin: Sendable, Hashable {
    public var originMicroseconds: Int64
    public var timeBase: String
    public var firstProgramMilliseconds: Int64

    public init(originMicroseconds: Int64, timeBase: String, firstProgramMilliseconds: Int64) {
        self.originMicroseconds = originMicroseconds
        self.timeBase = timeBase
        self.firstProgramMilliseconds = firstProgramMilliseconds
    }

    /// All three parts, or nil when one is missing (a file opened without the tags, an older node's row).
    public static func complete(_ origin: Int64?, _ timeBase: String?, _ firstProgramMilliseconds: Int64?) -> RecordingOrigin? {
        guard let origin, let timeBase, let firstProgramMilliseconds else { return nil }
        return RecordingOrigin(originMicroseconds: origin, timeBase: timeBase, firstProgramMilliseconds: firstProgramMilliseconds)
    }

    /// From a `recording_started` event's details (`origin_us`, `time_base`, `first_program_ms`); nil
    /// for a file opened without the tags.
    public init?(startedDetails details: [String: String]) {
        guard let origin = Self.complete(details["origin_us"].flatMap { Int64($0) }, details["time_base"],
                                         details["first_program_ms"].flatMap { Int64($0) }) else { return nil }
        self = origin
    }

    /// The wall-clock µs of the file's first packet on its time base.
    public var firstPacketMicroseconds: Int64 { originMicroseconds + firstProgramMilliseconds * 1000 }
}

extension EventStore {
    /// Keeps what node `contact.node` answered (or why it did not) in the current session: its row is
    /// replaced, its files added or updated (a file seen before keeps its row; a failed ask keeps the
    /// node session and files already known). Queued, never blocks.
    public func noteNode(_ contact: NodeSessionRecord) {
        enqueue("noteNode") { try $0.noteNode(contact) }
    }

    /// The nodes of session `sessionID` with their files, by node name, each node's files by camera.
    public func nodeSessions(sessionID: Int64) throws -> [NodeSessionRecord] {
        try perform("nodeSessions") { try $0.nodeSessions(sessionID: sessionID) }
    }
}

extension StoreWorker {
    func noteNode(_ contact: NodeSessionRecord) throws {
        try requireWritable("noteNode")
        guard let sessionID = currentSessionID else { throw EventStoreError.noCurrentSession(operation: "noteNode") }
        try connection.transaction("noting node \(contact.node)") {
            try connection.run("""
                INSERT INTO node_sessions (session_id, node, node_session, state, reason, asked_at, clock_offset_us)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (session_id, node) DO UPDATE SET node_session = coalesce(?3, node_session), state = ?4, reason = ?5, asked_at = ?6,
                    clock_offset_us = coalesce(?7, clock_offset_us)
                """, [.integer(sessionID), .text(contact.node), .optional(contact.nodeSession), .text(contact.state.rawValue),
                      .optional(contact.reason), .integer(contact.askedAt.unixMilliseconds), .optional(contact.clockOffsetMicroseconds)])
            for file in contact.recordings {
                try connection.run("""
                    INSERT INTO node_recordings (session_id, node, node_session, camera, kind, path, started_at, ended_at, bytes,
                                                 origin_us, time_base, first_program_ms)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                    ON CONFLICT (session_id, node, node_session, path) DO UPDATE SET camera = ?4, kind = ?5, started_at = ?7, ended_at = ?8, bytes = ?9,
                        origin_us = coalesce(?10, origin_us), time_base = coalesce(?11, time_base), first_program_ms = coalesce(?12, first_program_ms)
                    """, [.integer(sessionID), .text(contact.node), .integer(file.nodeSession), .text(file.camera), .text(file.kind),
                          .text(file.path), .integer(file.startedAt.unixMilliseconds),
                          .optional(file.endedAt?.unixMilliseconds), .optional(file.bytes),
                          .optional(file.origin?.originMicroseconds), .optional(file.origin?.timeBase), .optional(file.origin?.firstProgramMilliseconds)])
            }
        }
    }

    func nodeSessions(sessionID: Int64) throws -> [NodeSessionRecord] {
        let files = try connection.query("""
            SELECT node, node_session, camera, kind, path, started_at, ended_at, bytes, origin_us, time_base, first_program_ms FROM node_recordings
            WHERE session_id = ? ORDER BY node, kind = 'iso', camera, id
            """, [.integer(sessionID)]) { row in
            (try row.text("node"), NodeRecordingRecord(nodeSession: try row.int64("node_session"), camera: try row.text("camera"),
                                                       kind: try row.text("kind"), path: try row.text("path"),
                                                       startedAt: Date(unixMilliseconds: try row.int64("started_at")),
                                                       endedAt: try row.optionalInt64("ended_at").map(Date.init(unixMilliseconds:)),
                                                       bytes: try row.optionalInt64("bytes"), origin: try Self.origin(row)))
        }
        return try connection.query(
            "SELECT node, node_session, state, reason, asked_at, clock_offset_us FROM node_sessions WHERE session_id = ? ORDER BY node",
            [.integer(sessionID)]
        ) { row in
            let node = try row.text("node")
            let state = try row.text("state")
            return NodeSessionRecord(node: node, nodeSession: try row.optionalInt64("node_session"),
                                     state: NodeSessionRecord.State(rawValue: state) ?? .unreachable, reason: try row.optionalText("reason"),
                                     askedAt: Date(unixMilliseconds: try row.int64("asked_at")),
                                     recordings: files.filter { $0.0 == node }.map(\.1),
                                     clockOffsetMicroseconds: try row.optionalInt64("clock_offset_us"))
        }
    }

    /// A `node_recordings` row's origin, when it has all of it.
    static func origin(_ row: SQLiteRow) throws -> RecordingOrigin? {
        RecordingOrigin.complete(try row.optionalInt64("origin_us"), try row.optionalText("time_base"), try row.optionalInt64("first_program_ms"))
    }
}
