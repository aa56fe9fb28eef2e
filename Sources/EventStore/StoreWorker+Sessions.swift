import Foundation
import StudioSystem
import Synchronization

// The worker's sessions: starting, ending, recovering the ones a killed server left open, reading them.
extension StoreWorker {
    func startSession(configSnapshot: String) throws -> Int64 {
        try requireWritable("startSession")
        if let currentSessionID { throw EventStoreError.sessionAlreadyOpen(id: currentSessionID) }
        let valid = try connection.query("SELECT json_valid(?) AS valid", [.text(configSnapshot)]) { try $0.int64("valid") }.first ?? 0
        if valid != 1 {
            throw EventStoreError.invalidConfigSnapshot(reason: "json_valid() rejects it (\(configSnapshot.prefix(40))...)")
        }
        let id = try connection.transaction("starting a session") { try insertSession(configSnapshot: configSnapshot) }
        currentSessionID = id
        sessionSnapshot = configSnapshot
        sessionEventsInFile = 1
        nextHeartbeat = MonotonicClock.now() + UInt64(limits.heartbeatIntervalSeconds * 1e9)
        return id
    }

    /// The session row and its `session_started` event (`extra` details added), inside the caller's transaction.
    func insertSession(configSnapshot: String, now: Date = Date(), extra: [String: String] = [:]) throws -> Int64 {
        try connection.run(
            "INSERT INTO sessions (started_at, heartbeat_at, config_snapshot, hostname, pid, boot_id, process_start) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [.integer(now.unixMilliseconds), .integer(now.unixMilliseconds), .text(configSnapshot), .text(process.hostname),
             .integer(Int64(process.pid)), .optional(process.bootID), .optional(process.startTicks)])
        let id = connection.lastInsertRowID
        let details = ["pid": "\(process.pid)", "hostname": process.hostname].merging(extra) { $1 }
        try insert(StudioEvent(kind: .sessionStarted, wallTime: now, details: details), sessionID: id)
        return id
    }

    func endSession(reason: String) throws {
        try requireWritable("endSession")
        guard let sessionID = currentSessionID else { throw EventStoreError.noCurrentSession(operation: "endSession") }
        guard !reason.isEmpty else { throw EventStoreError.invalidArgument("endSession: the reason must not be empty") }
        let now = Date()
        try connection.transaction("ending session \(sessionID)") {
            try insert(StudioEvent(kind: .sessionEnded, wallTime: now, details: ["reason": reason]), sessionID: sessionID)
            try connection.run("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?",
                               [.integer(now.unixMilliseconds), .text(reason), .integer(sessionID)])
        }
        currentSessionID = nil
        sessionSnapshot = nil
        openRecordings.removeAll()
        recordingIDs.removeAll()
    }

    func recoverOrphanedSessions() throws -> [Int64] {
        try requireWritable("recoverOrphanedSessions")
        struct OpenSession {
            var id: Int64; var startedAt: Int64; var heartbeatAt: Int64?; var pid: Int32; var bootID: String?; var start: Int64?
        }
        let open = try connection.query(
            "SELECT id, started_at, heartbeat_at, pid, boot_id, process_start FROM sessions WHERE ended_at IS NULL ORDER BY id"
        ) { OpenSession(id: try $0.int64("id"), startedAt: try $0.int64("started_at"), heartbeatAt: try $0.optionalInt64("heartbeat_at"),
                        pid: Int32(truncatingIfNeeded: try $0.int64("pid")),
                        bootID: try $0.optionalText("boot_id"), start: try $0.optionalInt64("process_start")) }
        var recovered: [Int64] = []
        for session in open where session.id != currentSessionID {
            if ProcessIdentity.isAlive(pid: session.pid, bootID: session.bootID, startTicks: session.start) { continue }
            let done = try connection.transaction("marking session \(session.id) crashed") { () throws -> Bool in
                let lastEvent = try connection.query("SELECT max(wall_time) AS last FROM events WHERE session_id = ?",
                                                     [.integer(session.id)]) { try $0.optionalInt64("last") }.first ?? nil
                // Its last sign of life: the later of its last event and its last heartbeat.
                let endedAt = max(lastEvent ?? session.startedAt, session.heartbeatAt ?? session.startedAt, session.startedAt)
                try connection.run("UPDATE sessions SET ended_at = ?, end_reason = 'crashed' WHERE id = ? AND ended_at IS NULL",
                                   [.integer(endedAt), .integer(session.id)])
                // Another process may have recovered it meanwhile.
                guard connection.changes == 1 else { return false }
                // Its recordings ended when it did (the files play up to their last flush).
                try connection.run("UPDATE recordings SET ended_at = ? WHERE session_id = ? AND ended_at IS NULL",
                                   [.integer(endedAt), .integer(session.id)])
                try insert(StudioEvent(kind: .sessionEnded, wallTime: Date(unixMilliseconds: endedAt),
                                       details: ["reason": "crashed"]), sessionID: session.id)
                return true
            }
            if done { recovered.append(session.id) }
        }
        return recovered
    }

    static let sessionSelect = """
        SELECT s.id AS id, s.started_at AS started_at, s.ended_at AS ended_at, s.end_reason AS end_reason,
               s.config_snapshot AS config_snapshot, s.hostname AS hostname, s.pid AS pid,
               s.integrated_lufs AS integrated_lufs, s.peak_dbfs AS peak_dbfs,
               (SELECT count(*) FROM events e WHERE e.session_id = s.id AND e.kind = 'switch') AS switch_count,
               (SELECT count(*) FROM events e WHERE e.session_id = s.id) AS event_count
        FROM sessions s
        """

    static func sessionRecord(_ row: SQLiteRow) throws -> SessionRecord {
        SessionRecord(id: try row.int64("id"), startedAt: Date(unixMilliseconds: try row.int64("started_at")),
                      endedAt: try row.optionalInt64("ended_at").map(Date.init(unixMilliseconds:)), endReason: try row.optionalText("end_reason"),
                      switchCount: Int(try row.int64("switch_count")), eventCount: Int(try row.int64("event_count")),
                      configSnapshot: try row.text("config_snapshot"), hostname: try row.text("hostname"),
                      pid: Int32(truncatingIfNeeded: try row.int64("pid")),
                      integratedLUFS: try row.optionalDouble("integrated_lufs"), peakDBFS: try row.optionalDouble("peak_dbfs"))
    }

    func sessions(limit: Int?) throws -> [SessionRecord] {
        try connection.query(Self.sessionSelect + " ORDER BY s.id DESC LIMIT ?", [.integer(Int64(limit ?? -1))],
                             Self.sessionRecord)
    }

    func session(id: Int64?) throws -> SessionRecord? {
        if let id = id ?? currentSessionID {
            return try connection.query(Self.sessionSelect + " WHERE s.id = ?", [.integer(id)], Self.sessionRecord).first
        }
        // The newest open session (a running server's, seen from the CLI), else the newest.
        return try connection.query(Self.sessionSelect + " ORDER BY s.ended_at IS NULL DESC, s.id DESC LIMIT 1", [],
                                    Self.sessionRecord).first
    }

    func events(sessionID: Int64) throws -> [EventRecord] {
        try connection.query(Self.eventSelect + " WHERE session_id = ? ORDER BY id", [.integer(sessionID)], Self.eventRecord)
    }

    static let eventSelect = "SELECT id, session_id, kind, camera, wall_time, program_ms, details FROM events"

    static func eventRecord(_ row: SQLiteRow) throws -> EventRecord {
        EventRecord(id: try row.int64("id"), sessionID: try row.int64("session_id"), kind: EventKind(rawValue: try row.text("kind")),
                    camera: try row.optionalText("camera").map { CameraID($0) },
                    wallTime: Date(unixMilliseconds: try row.int64("wall_time")),
                    programMilliseconds: try row.optionalInt64("program_ms"), details: decodeDetails(try row.text("details")))
    }
}
