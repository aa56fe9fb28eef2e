import Foundation
import StudioCore

// Retention: removing the sessions that ended before a cutoff, with their events and recording rows, in one
// transaction; then giving the space back (VACUUM, or an incremental vacuum where the file allows it).
// Never a session that is open (the running one, or one not yet found crashed). Deleting the recording
// files is the caller's (after the commit: a rolled-back prune deletes nothing).

/// A recording row removed (or, on a dry run, to be removed) with its session.
public struct PrunedRecording: Sendable, Hashable {
    public var recording: RecordingRecord
    /// The session's recording directory (`record` in its configuration snapshot), if it had one.
    public var recordDirectory: String?
    /// Whether a session that stays lists the same path (then the file is not the pruned session's alone).
    public var sharedWithKeptSession: Bool
}

/// What `prune` removed (on a dry run: would remove).
public struct PruneOutcome: Sendable, Hashable {
    public var sessionIDs: [Int64]
    public var events: Int
    public var recordings: [PrunedRecording]
    /// The database file's size (pages × page size) before and after (after the vacuum, if one ran).
    public var databaseBytesBefore: Int64
    public var databaseBytesAfter: Int64
    /// `vacuum`, `incremental_vacuum`, or nil (dry run, nothing removed, or it failed: see `vacuumError`).
    public var vacuum: String?
    public var vacuumError: String?
}

extension EventStore {
    /// Removes every session that ended before `endedBefore` (never an open one), with its events and
    /// recording rows, in one transaction; `dryRun` only counts. A failure rolls everything back.
    public func prune(endedBefore: Date, dryRun: Bool) throws -> PruneOutcome {
        try perform("prune") { try $0.prune(endedBefore: endedBefore, dryRun: dryRun) }
    }
}

extension StoreWorker {
    func prune(endedBefore: Date, dryRun: Bool) throws -> PruneOutcome {
        let before = try databaseBytes()
        let cutoff = SQLiteValue.integer(endedBefore.unixMilliseconds)
        // `pruned` is computed inside the transaction, so what is counted is what is deleted.
        let (ids, events, recordings) = try connection.transaction("prune") { () throws -> ([Int64], Int, [PrunedRecording]) in
            let chosen = "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ?1 AND id IS NOT ?2"
            let current = SQLiteValue.optional(currentSessionID)
            let ids = try connection.query(chosen + " ORDER BY id", [cutoff, current]) { try $0.int64("id") }
            let events = try connection.query("SELECT count(*) AS n FROM events WHERE session_id IN (\(chosen))", [cutoff, current]) {
                Int(try $0.int64("n"))
            }.first ?? 0
            let recordings = try connection.query("""
                SELECT r.id, r.session_id, r.camera, r.path, r.started_at, r.ended_at, r.bytes,
                       json_extract(s.config_snapshot, '$.record') AS record_directory,
                       EXISTS (SELECT 1 FROM recordings k WHERE k.path = r.path AND k.session_id NOT IN (\(chosen))) AS shared
                FROM recordings r JOIN sessions s ON s.id = r.session_id
                WHERE r.session_id IN (\(chosen)) ORDER BY r.id
                """, [cutoff, current]) { row in
                PrunedRecording(recording: try Self.recordingRecord(row), recordDirectory: try row.optionalText("record_directory"),
                                sharedWithKeptSession: try row.int64("shared") != 0)
            }
            if !dryRun && !ids.isEmpty {
                // Children first, explicitly (not relying on ON DELETE CASCADE and the foreign_keys pragma).
                try connection.run("DELETE FROM events WHERE session_id IN (\(chosen))", [cutoff, current])
                try connection.run("DELETE FROM recordings WHERE session_id IN (\(chosen))", [cutoff, current])
                try connection.run("DELETE FROM node_recordings WHERE session_id IN (\(chosen))", [cutoff, current])
                try connection.run("DELETE FROM node_sessions WHERE session_id IN (\(chosen))", [cutoff, current])
                try connection.run("DELETE FROM sessions WHERE id IN (\(chosen))", [cutoff, current])
            }
            return (ids, events, recordings)
        }
        var outcome = PruneOutcome(sessionIDs: ids, events: events, recordings: recordings, databaseBytesBefore: before,
                                   databaseBytesAfter: before, vacuum: nil, vacuumError: nil)
        guard !dryRun && !ids.isEmpty else { return outcome }
        // The space: an incremental vacuum where the file was made with auto_vacuum = INCREMENTAL, else a full
        // VACUUM (rewrites the file; events recorded meanwhile wait in the store's queue). A vacuum that
        // fails (another process reading with a long transaction) leaves the prune done and says why.
        do {
            let autoVacuum = try connection.query("PRAGMA auto_vacuum") { try $0.int64("auto_vacuum") }.first ?? 0
            if autoVacuum == 2 {
                _ = try connection.query("PRAGMA incremental_vacuum") { _ in () }
                outcome.vacuum = "incremental_vacuum"
            } else {
                try connection.execute("VACUUM", what: "VACUUM after prune")
                outcome.vacuum = "vacuum"
            }
        } catch {
            outcome.vacuumError = "\(error)"
        }
        outcome.databaseBytesAfter = try databaseBytes()
        return outcome
    }

    /// The pages in use times the page size.
    private func databaseBytes() throws -> Int64 {
        let pages = try connection.query("PRAGMA page_count") { try $0.int64("page_count") }.first ?? 0
        let size = try connection.query("PRAGMA page_size") { try $0.int64("page_size") }.first ?? 0
        return pages * size
    }
}
