import CSQLite

/// A SQLite result code (primary or extended), as returned by the C API.
public struct SQLiteResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let ok = SQLiteResult(rawValue: SQLITE_OK)
    public static let error = SQLiteResult(rawValue: SQLITE_ERROR)
    public static let permission = SQLiteResult(rawValue: SQLITE_PERM)
    public static let busy = SQLiteResult(rawValue: SQLITE_BUSY)
    public static let locked = SQLiteResult(rawValue: SQLITE_LOCKED)
    public static let readOnly = SQLiteResult(rawValue: SQLITE_READONLY)
    public static let ioError = SQLiteResult(rawValue: SQLITE_IOERR)
    public static let corrupt = SQLiteResult(rawValue: SQLITE_CORRUPT)
    public static let full = SQLiteResult(rawValue: SQLITE_FULL)
    public static let cannotOpen = SQLiteResult(rawValue: SQLITE_CANTOPEN)
    public static let constraint = SQLiteResult(rawValue: SQLITE_CONSTRAINT)
    public static let misuse = SQLiteResult(rawValue: SQLITE_MISUSE)
    public static let notADatabase = SQLiteResult(rawValue: SQLITE_NOTADB)
    public static let row = SQLiteResult(rawValue: SQLITE_ROW)
    public static let done = SQLiteResult(rawValue: SQLITE_DONE)

    /// The primary code of an extended one (`SQLITE_IOERR_WRITE` -> `ioError`).
    public var primary: SQLiteResult { SQLiteResult(rawValue: rawValue & 0xff) }
    public var isSuccess: Bool { self == .ok || self == .row || self == .done }
    public var description: String { "\(String(cString: sqlite3_errstr(rawValue))) (\(rawValue))" }
}

/// A failed SQLite call: its result code, `sqlite3_errmsg` at the time, and what was being done (with the SQL).
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: SQLiteResult
    public let message: String
    public let context: String
    public init(code: SQLiteResult, message: String, context: String) {
        self.code = code
        self.message = message
        self.context = context
    }
    public var description: String { "\(context): \(message) [SQLite \(code.rawValue)]" }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null

    static func optional(_ value: Int64?) -> SQLiteValue { value.map { .integer($0) } ?? .null }
    static func optional(_ value: Double?) -> SQLiteValue { value.map { .real($0) } ?? .null }
    static func optional(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
}

/// Owns one `sqlite3*`. Not thread-safe: the event store confines each connection to its own thread
/// (opened with SQLITE_OPEN_NOMUTEX for that reason). Closed by `close()` or `deinit`.
final class SQLiteConnection {
    let path: String
    let isReadOnly: Bool
    private var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    /// Why a connection made by `init(unavailable:reason:)` has no handle: every call throws it.
    private var unavailableReason: String?

    init(path: String, readOnly: Bool) throws(SQLiteError) {
        self.path = path
        self.isReadOnly = readOnly
        var db: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let flags = access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let result = sqlite3_open_v2(path, &db, flags, nil)
        if result != SQLITE_OK {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_close_v2(db)
            throw SQLiteError(code: SQLiteResult(rawValue: result), message: message,
                              context: "opening \(readOnly ? "read-only " : "")database \(path)")
        }
        handle = db
    }

    /// A connection that was never opened: every call throws `cannotOpen` with `reason` (the store holds one
    /// while the file at its path is not a database it may write).
    init(unavailable path: String, reason: String) {
        self.path = path
        self.isReadOnly = false
        unavailableReason = reason
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the handle. Idempotent.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        if let handle {
            sqlite3_close_v2(handle)
            self.handle = nil
        }
    }

    var isOpen: Bool { handle != nil }

    /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
    func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        let db = try openHandle("setting busy_timeout")
        let result = sqlite3_busy_timeout(db, milliseconds)
        if result != SQLITE_OK { throw error(result, "setting busy_timeout") }
    }

    func error(_ result: Int32, _ context: @autoclosure () -> String) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "connection closed"
        return SQLiteError(code: SQLiteResult(rawValue: result), message: message, context: context())
    }

    private func openHandle(_ context: @autoclosure () -> String) throws(SQLiteError) -> OpaquePointer {
        if let unavailableReason { throw SQLiteError(code: .cannotOpen, message: unavailableReason, context: context()) }
        guard let handle else { throw SQLiteError(code: .misuse, message: "connection closed", context: context()) }
        return handle
    }

    /// SQLITE_FCNTL_HAS_MOVED: true when the path no longer names the file this connection has open (it was
    /// deleted, renamed, or another file was put in its place). False when closed or when it cannot tell.
    var hasMoved: Bool {
        guard let handle else { return false }
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// `wal_checkpoint(TRUNCATE)`: copies every WAL frame into the database file this connection has open (by
    /// its descriptor, wherever its name now is) and empties the WAL. Throws if a reader kept it from
    /// finishing (busy after the busy timeout) or frames are left.
    func checkpointTruncatingWAL() throws(SQLiteError) {
        let db = try openHandle("checkpointing the WAL")
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let result = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed)
        if result != SQLITE_OK { throw error(result, "checkpointing the WAL of \(path)") }
        if logFrames > 0 && checkpointed < logFrames {
            throw SQLiteError(code: .busy, message: "\(logFrames - checkpointed) of \(logFrames) WAL frames not checkpointed",
                              context: "checkpointing the WAL of \(path)")
        }
    }

    /// Runs one or more statements without results (`sqlite3_exec`): pragmas, DDL, migrations.
    func execute(_ sql: String, what: String? = nil) throws(SQLiteError) {
        let db = try openHandle(what ?? sql)
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        if result != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: SQLiteResult(rawValue: result), message: message, context: what ?? "executing \(sql)")
        }
    }

    /// A prepared statement for `sql`, cached for the life of the connection and reset for reuse.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        let db = try openHandle("preparing \(sql)")
        var raw: OpaquePointer?
        let result = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard result == SQLITE_OK, let raw else {
            sqlite3_finalize(raw)
            throw error(result, "preparing \(sql)")
        }
        let statement = SQLiteStatement(handle: raw, sql: sql, connection: self)
        statements[sql] = statement
        return statement
    }

    /// Runs a statement that returns no rows.
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
    }

    /// Runs a query and maps each row, whose values are read by column name (`row.int64("id")`).
    func query<T>(_ sql: String, _ values: [SQLiteValue] = [], _ row: (SQLiteRow) throws -> T) throws -> [T] {
        var rows: [T] = []
        try forEachRow(sql, values) { rows.append(try row($0)) }
        return rows
    }

    /// Runs a query and hands each row to `body` as it is stepped, holding no more than that row
    /// (for results too large to hold: a huge session's log).
    func forEachRow(_ sql: String, _ values: [SQLiteValue] = [], _ body: (SQLiteRow) throws -> Void) throws {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() { try body(SQLiteRow(statement: statement)) }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` ... `COMMIT` (rolled back if it throws). IMMEDIATE takes the write
    /// lock up front, so a busy database waits out `busy_timeout` here instead of failing mid-transaction.
    func transaction<T>(_ what: String, _ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE", what: "\(what): BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT", what: "\(what): COMMIT")
            return value
        } catch {
            if !isAutocommit { try? execute("ROLLBACK", what: "\(what): ROLLBACK") }
            throw error
        }
    }

    /// True outside an explicit transaction.
    var isAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }
    var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }
}

/// Owns one `sqlite3_stmt*`, finalized by its connection's `close()`, `finalize()` or `deinit`.
final class SQLiteStatement {
    let sql: String
    private var handle: OpaquePointer?
    private unowned let connection: SQLiteConnection

    fileprivate init(handle: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { finalize() }

    func finalize() {
        if let handle {
            sqlite3_finalize(handle)
            self.handle = nil
        }
    }

    func reset() {
        guard let handle else { return }
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    private func live() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: .misuse, message: "statement finalized", context: sql) }
        return handle
    }

    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        let statement = try live()
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let number):
                result = sqlite3_bind_int64(statement, index, number)
            case .real(let number):
                result = sqlite3_bind_double(statement, index, number)
            case .text(let text):
                // withCString never hands out nil, so an empty string binds '' rather than NULL.
                result = text.withCString { csqlite_bind_text(statement, index, $0, Int32(text.utf8.count)) }
            case .null:
                result = sqlite3_bind_null(statement, index)
            }
            if result != SQLITE_OK { throw connection.error(result, "binding parameter \(index) of \(sql)") }
        }
    }

    /// Steps once: true when a row is available, false when done.
    func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(try live())
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(result, "running \(sql)")
        }
    }

    /// Column names to indices, read from `sqlite3_column_name` once, when the statement is prepared.
    private(set) lazy var columns: [String: Int32] = {
        guard let handle else { return [:] }
        var columns: [String: Int32] = [:]
        for index in 0..<sqlite3_column_count(handle) {
            guard let name = sqlite3_column_name(handle, index) else { continue }
            // The first of two columns with one name wins, as in `SELECT *` over a join.
            columns[String(cString: name)] = columns[String(cString: name)] ?? index
        }
        return columns
    }()

    fileprivate func isNull(_ column: Int32) -> Bool { handle.map { sqlite3_column_type($0, column) == SQLITE_NULL } ?? true }

    fileprivate func int64(_ column: Int32) -> Int64 { handle.map { sqlite3_column_int64($0, column) } ?? 0 }

    fileprivate func double(_ column: Int32) -> Double { handle.map { sqlite3_column_double($0, column) } ?? 0 }

    fileprivate func optionalText(_ column: Int32) -> String? {
        guard let handle, let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

/// The current row of a query, read by column name: `row.int64("id")`, `row.optionalText("camera")`.
/// A name the statement does not return is a programming error, thrown as `SQLITE_MISUSE` naming the
/// column and the SQL (so a SELECT and the code reading it cannot drift apart silently).
struct SQLiteRow {
    fileprivate let statement: SQLiteStatement

    private func index(_ column: String) throws(SQLiteError) -> Int32 {
        guard let index = statement.columns[column] else {
            throw SQLiteError(code: .misuse, message: "no column named \"\(column)\" (columns: \(statement.columns.keys.sorted().joined(separator: ", ")))",
                              context: statement.sql)
        }
        return index
    }

    func isNull(_ column: String) throws(SQLiteError) -> Bool { statement.isNull(try index(column)) }

    func int64(_ column: String) throws(SQLiteError) -> Int64 { statement.int64(try index(column)) }

    func optionalInt64(_ column: String) throws(SQLiteError) -> Int64? {
        let index = try index(column)
        return statement.isNull(index) ? nil : statement.int64(index)
    }

    func optionalDouble(_ column: String) throws(SQLiteError) -> Double? {
        let index = try index(column)
        return statement.isNull(index) ? nil : statement.double(index)
    }

    /// The column as text; an empty string for NULL.
    func text(_ column: String) throws(SQLiteError) -> String { statement.optionalText(try index(column)) ?? "" }

    func optionalText(_ column: String) throws(SQLiteError) -> String? { statement.optionalText(try index(column)) }
}
