import Foundation
import StudioCore
import Control
import EventStore

// The history's replies: `sessions`, `log`, `recordings`.

// MARK: sessions, log, recordings

public struct SessionView: Codable, Sendable {
    public var id: Int64
    public var startedAt: Date
    @Nullable public var endedAt: Date?
    @Nullable public var endReason: String?
    public var switchCount: Int
    public var eventCount: Int
    /// The program's integrated loudness (EBU R128, LUFS) and highest sample (dBFS), kept when the
    /// session stopped; left out while open, after a crash, or for a silent program.
    public var integratedLUFS: Double?
    public var peakDBFS: Double?

    enum CodingKeys: String, CodingKey {
        case id
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case endReason = "end_reason"
        case switchCount = "switch_count"
        case eventCount = "event_count"
        case integratedLUFS = "integrated_lufs"
        case peakDBFS = "peak_dbfs"
    }

    public init(id: Int64, startedAt: Date, endedAt: Date? = nil, endReason: String? = nil, switchCount: Int, eventCount: Int, integratedLUFS: Double? = nil, peakDBFS: Double? = nil) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.endReason = endReason
        self.switchCount = switchCount
        self.eventCount = eventCount
        self.integratedLUFS = integratedLUFS
        self.peakDBFS = peakDBFS
    }
}

/// `sessions`: newest first.
public struct SessionsReply: Codable, Sendable {
    public var sessions: [SessionView]

    public init(sessions: [SessionView]) {
        self.sessions = sessions
    }
}

/// `log`: a session and its events, oldest first; `session` is null when the events come from every
/// session (filters without a session: each event says its session).
public struct LogReply: Codable, Sendable {
    @Nullable public var session: SessionView?
    public var events: [EventView]
    /// The `after_id` that asks for the next page; null when this page ends the log.
    @Nullable public var nextAfterID: Int64?

    enum CodingKeys: String, CodingKey {
        case session, events
        case nextAfterID = "next_after_id"
    }

    public init(session: SessionView? = nil, events: [EventView], nextAfterID: Int64? = nil) {
        self.session = session
        self.events = events
        self.nextAfterID = nextAfterID
    }
}

/// `recordings`: a session's files, the program's first, then the ISO feeds by camera; then, on a
/// switcher with capture nodes, each node's session and files as the node's HTTP API gave them.
public struct RecordingsReply: Codable, Sendable {
    public var session: SessionView
    public var recordings: [RecordingView]
    public var nodes: [NodeRecordingsView]

    public init(session: SessionView, recordings: [RecordingView], nodes: [NodeRecordingsView] = []) {
        self.session = session
        self.recordings = recordings
        self.nodes = nodes
    }
}

/// A capture node in a switcher's session (docs/nodes.md, "One history for the editor").
public struct NodeRecordingsView: Codable, Sendable {
    public var node: String
    /// `answered`, `unreachable` (`reason` says why) or `unknown` (the switcher has no `api` for it).
    public var state: String
    @Nullable public var reason: String?
    /// The node's own session id; null while it never answered.
    @Nullable public var nodeSession: Int64?
    public var askedAt: Date
    public var recordings: [NodeFileView]

    enum CodingKeys: String, CodingKey {
        case node, state, reason, recordings
        case nodeSession = "node_session"
        case askedAt = "asked_at"
    }

    public init(node: String, state: String, reason: String? = nil, nodeSession: Int64? = nil, askedAt: Date, recordings: [NodeFileView]) {
        self.node = node
        self.state = state
        self.reason = reason
        self.nodeSession = nodeSession
        self.askedAt = askedAt
        self.recordings = recordings
    }
}

/// One of a node's files: `camera` as the switcher names it (`pc2/cam1`; `program` for the node's
/// program), `path` on the node's disk, `bytes` as the node last said.
public struct NodeFileView: Codable, Sendable {
    public var camera: String
    public var kind: String
    public var path: String
    public var nodeSession: Int64
    public var startedAt: Date
    @Nullable public var endedAt: Date?
    @Nullable public var bytes: Int?
    /// Where the file sits on the time base (its node's answer; null from an older node).
    @Nullable public var originUS: Int64?
    @Nullable public var timeBase: String?
    @Nullable public var firstProgramMS: Int64?

    enum CodingKeys: String, CodingKey {
        case camera, kind, path, bytes
        case nodeSession = "node_session"
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case originUS = "origin_us"
        case timeBase = "time_base"
        case firstProgramMS = "first_program_ms"
    }

    public init(camera: String, kind: String, path: String, nodeSession: Int64, startedAt: Date, endedAt: Date? = nil, bytes: Int? = nil,
                origin: RecordingOrigin? = nil) {
        self.camera = camera
        self.kind = kind
        self.path = path
        self.nodeSession = nodeSession
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.bytes = bytes
        (originUS, timeBase, firstProgramMS) = (origin?.originMicroseconds, origin?.timeBase, origin?.firstProgramMilliseconds)
    }
}

public struct RecordingView: Codable, Sendable {
    public var id: Int64
    /// `program` or the camera's name.
    public var camera: String
    /// `program` or `iso`.
    public var kind: String
    public var path: String
    public var startedAt: Date
    /// Null while recording, or when the server was killed.
    @Nullable public var endedAt: Date?
    /// Size on disk; null when the file is gone.
    @Nullable public var bytes: Int?
    /// An ISO file's time origin (its `STUDIO_ORIGIN_US` and `STUDIO_TIME_BASE` tags) and its first
    /// packet's program time, from its `recording_started`: what a switcher places a node's file by
    /// (docs/nodes.md, "One time base"). Null for the program recording and files without those tags.
    @Nullable public var originUS: Int64?
    @Nullable public var timeBase: String?
    @Nullable public var firstProgramMS: Int64?

    enum CodingKeys: String, CodingKey {
        case id, camera, kind, path, bytes
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case originUS = "origin_us"
        case timeBase = "time_base"
        case firstProgramMS = "first_program_ms"
    }

    public init(id: Int64, camera: String, kind: String, path: String, startedAt: Date, endedAt: Date? = nil, bytes: Int? = nil,
                origin: RecordingOrigin? = nil) {
        self.id = id
        self.camera = camera
        self.kind = kind
        self.path = path
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.bytes = bytes
        (originUS, timeBase, firstProgramMS) = (origin?.originMicroseconds, origin?.timeBase, origin?.firstProgramMilliseconds)
    }

    /// Its time origin, when the reply gave all of it.
    public var origin: RecordingOrigin? { RecordingOrigin.complete(originUS, timeBase, firstProgramMS) }
}
