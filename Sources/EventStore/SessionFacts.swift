import Foundation
import StudioCore

// What `studio report` says about one session beyond its program timeline (HistoryQueries.swift): the rows of the
// views `camera_outages` and `output_outages` (migration 0004), drop totals by stage, and measurements a
// later schema keeps in the `sessions` row (loudness), read by column name when the columns exist.

/// A row of `camera_outages`: a camera lost, until it came back, was removed or the session ended.
public struct CameraOutage: Sendable, Hashable {
    public var camera: CameraID
    /// `removed` or `silent`.
    public var reason: String?
    public var lostAt: Date
    public var backAt: Date?
    public var durationMilliseconds: Int64
    /// `returned`, `removed` (taken out of the show while lost: no `backAt`), `session end`, or nil while still lost.
    public var endedBy: String?
}

/// A row of `output_outages`: an output off the air, until it was connected again or the session ended.
public struct OutputOutage: Sendable, Hashable {
    public var output: String
    public var error: String?
    public var downAt: Date
    public var upAt: Date?
    public var durationMilliseconds: Int64
    /// Program times of the failed packet and of the first keyframe sent again, where the events have them.
    public var downProgramMilliseconds: Int64?
    public var upProgramMilliseconds: Int64?
    /// `reconnected`, `session end`, or nil while still down.
    public var endedBy: String?
    public var attempts: Int
}

/// The `frames_dropped` events of one stage (`video`, `audio`, `iso.cam2`, `out.NAME`), summed.
public struct DropTotal: Sendable, Hashable {
    public var stage: String
    /// The sum of their `dropped` values (which add up to the stage's `dropped_total`).
    public var dropped: Int64
    /// How many `frames_dropped` events (at most one per stage every 5 s).
    public var reports: Int
}

extension EventStore {
    /// The session's camera outages, in order.
    public func cameraOutages(sessionID: Int64) throws -> [CameraOutage] {
        try perform("cameraOutages") { try $0.cameraOutages(sessionID: sessionID) }
    }

    /// The session's output outages, in order.
    public func outputOutages(sessionID: Int64) throws -> [OutputOutage] {
        try perform("outputOutages") { try $0.outputOutages(sessionID: sessionID) }
    }

    /// The session's dropped frames by stage.
    public func dropTotals(sessionID: Int64) throws -> [DropTotal] {
        try perform("dropTotals") { try $0.dropTotals(sessionID: sessionID) }
    }
}

extension StoreWorker {
    func cameraOutages(sessionID: Int64) throws -> [CameraOutage] {
        try connection.query("""
            SELECT camera, reason, lost_at, back_at, duration_ms, ended_by FROM camera_outages
            WHERE session_id = ? ORDER BY lost_event_id
            """, [.integer(sessionID)]) { row in
            CameraOutage(camera: CameraID(try row.text("camera")), reason: try row.optionalText("reason"),
                         lostAt: Date(unixMilliseconds: try row.int64("lost_at")),
                         backAt: try row.optionalInt64("back_at").map(Date.init(unixMilliseconds:)),
                         durationMilliseconds: try row.int64("duration_ms"), endedBy: try row.optionalText("ended_by"))
        }
    }

    func outputOutages(sessionID: Int64) throws -> [OutputOutage] {
        try connection.query("""
            SELECT output, error, down_at, up_at, duration_ms, down_program_ms, up_program_ms, ended_by, attempts
            FROM output_outages WHERE session_id = ? ORDER BY down_event_id
            """, [.integer(sessionID)]) { row in
            OutputOutage(output: try row.text("output"), error: try row.optionalText("error"),
                         downAt: Date(unixMilliseconds: try row.int64("down_at")),
                         upAt: try row.optionalInt64("up_at").map(Date.init(unixMilliseconds:)),
                         durationMilliseconds: try row.int64("duration_ms"),
                         downProgramMilliseconds: try row.optionalInt64("down_program_ms"),
                         upProgramMilliseconds: try row.optionalInt64("up_program_ms"),
                         endedBy: try row.optionalText("ended_by"), attempts: Int(try row.int64("attempts")))
        }
    }

    func dropTotals(sessionID: Int64) throws -> [DropTotal] {
        try connection.query("""
            SELECT coalesce(json_extract(details, '$.stage'), '?') AS stage,
                   sum(CAST(coalesce(json_extract(details, '$.dropped'), 0) AS INTEGER)) AS dropped, count(*) AS reports
            FROM events WHERE session_id = ? AND kind = 'frames_dropped' GROUP BY 1 ORDER BY 1
            """, [.integer(sessionID)]) { row in
            DropTotal(stage: try row.text("stage"), dropped: try row.int64("dropped"), reports: Int(try row.int64("reports")))
        }
    }
}
