import Foundation
import StudioCore

/// The history's queries (see HistoryQueries.swift), on the store thread.
extension StoreWorker {
    func events(matching query: EventQuery) throws -> [EventRecord] {
        var events: [EventRecord] = []
        try forEachEvent(matching: query) { events.append($0) }
        return events
    }

    /// The events matching `query`, oldest first, one at a time: without a limit the rows come straight
    /// from the `id` order (no sort, nothing held); with one, SQLite keeps only the latest `limit`.
    func forEachEvent(matching query: EventQuery, _ body: (EventRecord) throws -> Void) throws {
        var filter = Filter()
        filter.add("session_id = ?", query.sessionID.map { .integer($0) })
        // The kinds asked for are the rare ones as a rule (losses, reconnects); the statistics only know the
        // average kind (switches and drop reports dominate), by which SQLite would rather scan every event in
        // id order than read the index events(kind, wall_time) and sort: say that a kind matches few rows.
        filter.add("kind", in: query.kinds.map(\.rawValue), likelihood: 0.01)
        filter.add("camera = ?", query.camera.map { .text($0.name) })
        filter.add("wall_time >= ?", query.since.map { .integer($0.unixMilliseconds) })
        filter.add("wall_time < ?", query.until.map { .integer($0.unixMilliseconds) })
        filter.add("program_ms >= ?", query.fromProgramMilliseconds.map { .integer($0) })
        filter.add("program_ms < ?", query.toProgramMilliseconds.map { .integer($0) })
        // A page: the ids above `afterID` (the primary key's range, whatever else filters), the first `pageSize`.
        let page = (after: query.afterID.map { SQLiteValue.integer($0) }, size: query.pageSize.map { SQLiteValue.integer(Int64($0)) })
        guard let limit = query.limit else {
            filter.add("id > ?", page.after)
            let sql = Self.eventSelect + filter.whereClause + " ORDER BY id" + (page.size == nil ? "" : " LIMIT ?")
            try connection.forEachRow(sql, filter.values + (page.size.map { [$0] } ?? [])) { try body(try Self.eventRecord($0)) }
            return
        }
        // The latest `limit` matches, printed oldest first (a page of them: those after `afterID`).
        var outer = Filter()
        outer.add("id > ?", page.after)
        let sql = "SELECT * FROM (" + Self.eventSelect + filter.whereClause + " ORDER BY id DESC LIMIT ?)" + outer.whereClause
            + " ORDER BY id" + (page.size == nil ? "" : " LIMIT ?")
        try connection.forEachRow(sql, filter.values + [.integer(Int64(limit))] + outer.values + (page.size.map { [$0] } ?? [])) {
            try body(try Self.eventRecord($0))
        }
    }

    func sessions(matching query: SessionQuery) throws -> [SessionRecord] {
        var filter = Filter()
        filter.add("(s.ended_at IS NULL OR s.ended_at >= ?)", query.since.map { .integer($0.unixMilliseconds) })
        filter.add("s.started_at < ?", query.until.map { .integer($0.unixMilliseconds) })
        filter.add("s.end_reason", in: query.endReasons)
        return try connection.query(Self.sessionSelect + filter.whereClause + " ORDER BY s.id DESC LIMIT ?",
                                    filter.values + [.integer(Int64(query.limit ?? -1))], Self.sessionRecord)
    }

    /// A WHERE clause of the conditions given, with their values in order.
    private struct Filter {
        private var conditions: [String] = []
        private(set) var values: [SQLiteValue] = []

        /// `condition` (with one `?`) when `value` is given.
        mutating func add(_ condition: String, _ value: SQLiteValue?) {
            guard let value else { return }
            conditions.append(condition)
            values.append(value)
        }

        /// `column IN (?, ...)` when `texts` is not empty; with `likelihood`, that hint to the planner of the
        /// share of rows it matches (SQLite's `likelihood(X, P)`).
        mutating func add(_ column: String, in texts: [String], likelihood: Double? = nil) {
            guard !texts.isEmpty else { return }
            let condition = column + " IN (" + texts.map { _ in "?" }.joined(separator: ", ") + ")"
            conditions.append(likelihood.map { "likelihood(\(condition), \($0))" } ?? condition)
            values += texts.map { .text($0) }
        }

        var whereClause: String { conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ") }
    }

    func programIntervals(sessionID: Int64) throws -> [ProgramInterval] {
        try connection.query("""
            SELECT session_id, seq, source, source_kind, camera, from_ms, to_ms, duration_ms, ended_by, via, transition_from_ms
            FROM program_intervals WHERE session_id = ? ORDER BY seq
            """, [.integer(sessionID)]) { row in
            ProgramInterval(sessionID: try row.int64("session_id"), sequence: Int(try row.int64("seq")), source: try row.text("source"),
                            sourceKind: try row.text("source_kind"), camera: try row.optionalText("camera").map { CameraID($0) },
                            fromMilliseconds: try row.int64("from_ms"), toMilliseconds: try row.int64("to_ms"),
                            durationMilliseconds: try row.int64("duration_ms"), endedBy: try row.optionalText("ended_by"),
                            via: try row.optionalText("via"), transitionFromMilliseconds: try row.optionalInt64("transition_from_ms"))
        }
    }

    func programTime(sessionID: Int64) throws -> SessionProgramTime? {
        try connection.query("SELECT session_id, from_ms, to_ms, is_open FROM session_program_time WHERE session_id = ?",
                             [.integer(sessionID)]) { row in
            SessionProgramTime(sessionID: try row.int64("session_id"), fromMilliseconds: try row.int64("from_ms"),
                               toMilliseconds: try row.int64("to_ms"), isOpen: try row.int64("is_open") != 0)
        }.first
    }

    func cameraNamesInHistory() throws -> [CameraID] {
        try connection.query("SELECT name FROM cameras UNION SELECT DISTINCT camera AS name FROM events WHERE camera IS NOT NULL") {
            CameraID(try $0.text("name"))
        }.sorted()
    }

    /// Whether the history knows this camera: a row of `cameras`, or any event recorded with its name
    /// (stops at the first; `cameraNamesInHistory` reads every event's camera, for the error message only).
    func knowsCamera(_ camera: CameraID) throws -> Bool {
        try !connection.query("""
            SELECT 1 FROM cameras WHERE name = ?1 UNION ALL SELECT 1 FROM (SELECT 1 FROM events WHERE camera = ?1 LIMIT 1) LIMIT 1
            """, [.text(camera.name)]) { _ in true }.isEmpty
    }

    func hasEvents(ofKind kind: EventKind) throws -> Bool {
        try !connection.query("SELECT 1 FROM events WHERE kind = ? LIMIT 1", [.text(kind.rawValue)]) { _ in true }.isEmpty
    }

    func historyExtent() throws -> HistoryExtent {
        try connection.query("""
            SELECT count(*) AS sessions, min(id) AS oldest, max(id) AS newest,
                   (SELECT started_at FROM sessions ORDER BY id DESC LIMIT 1) AS newest_started
            FROM sessions
            """) { row in
            HistoryExtent(sessionCount: Int(try row.int64("sessions")), oldestSessionID: try row.optionalInt64("oldest"),
                          newestSessionID: try row.optionalInt64("newest"),
                          newestStartedAt: try row.optionalInt64("newest_started").map(Date.init(unixMilliseconds:)))
        }.first ?? HistoryExtent(sessionCount: 0)
    }
}

extension HistoryExtent {
    init(sessionCount: Int) {
        self.init(sessionCount: sessionCount, oldestSessionID: nil, newestSessionID: nil, newestStartedAt: nil)
    }
}
