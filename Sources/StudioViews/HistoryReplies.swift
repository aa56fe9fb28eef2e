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

/// `recordings`: a session's files, the program's first, then the ISO feeds by camera.
public struct RecordingsReply: Codable, Sendable {
    public var session: SessionView
    public var recordings: [RecordingView]

    public init(session: SessionView, recordings: [RecordingView]) {
        self.session = session
        self.recordings = recordings
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

    enum CodingKeys: String, CodingKey {
        case id, camera, kind, path, bytes
        case startedAt = "started_at"
        case endedAt = "ended_at"
    }

    public init(id: Int64, camera: String, kind: String, path: String, startedAt: Date, endedAt: Date? = nil, bytes: Int? = nil) {
        self.id = id
        self.camera = camera
        self.kind = kind
        self.path = path
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.bytes = bytes
    }
}
