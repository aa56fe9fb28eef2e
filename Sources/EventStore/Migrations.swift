import Foundation

/// One SQL file from `migrations/`, compiled into the binary by the EmbedMigrations plugin
/// (the generated `embeddedMigrations` array lists them in version order).
struct EmbeddedMigration: Sendable {
    let version: Int
    let name: String
    let sql: String
}

/// A schema migration this binary carries.
public struct Migration: Sendable, Hashable, Codable {
    /// 1, 2, ... from the file name's numeric prefix.
    public let version: Int
    /// The file name without `.sql`, e.g. `0001_initial`.
    public let name: String
    /// The file's exact text.
    public let sql: String

    /// The migrations compiled into this binary, in order.
    public static let all: [Migration] = embeddedMigrations.map { Migration(version: $0.version, name: $0.name, sql: $0.sql) }
}

/// A row of `schema_migrations`: a migration applied to a database, with the text it was applied with.
public struct AppliedMigration: Sendable, Hashable, Codable {
    public let version: Int
    public let name: String
    public let sql: String
    public let appliedAt: Date

    enum CodingKeys: String, CodingKey {
        case version, name, sql
        case appliedAt = "applied_at"
    }
}

/// Brings a database to the schema this binary carries, or says clearly why it cannot.
///
/// Rules (see docs/schema.md): each migration runs in its own `BEGIN IMMEDIATE` transaction together with
/// its `schema_migrations` row, which keeps the migration's text; applied rows are compared with the
/// embedded files by name and text, so an edited landed migration is refused.
enum Migrator {
    /// The store's own bookkeeping table. `checksum` is only for older binaries, which compare it with
    /// the SHA-256 of their own file: it holds the landed checksum where one is known, else NULL.
    static let bookkeepingSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    INTEGER PRIMARY KEY,
            name       TEXT NOT NULL,
            checksum   TEXT,
            applied_at INTEGER NOT NULL,
            sql        TEXT NOT NULL
        )
        """

    /// The SHA-256 (hex) of the migrations that landed while `schema_migrations` kept checksums instead
    /// of text: a fixed fact of each (landed migrations are never edited), so a database from that time
    /// is checked (and moved to the text layout) without hashing anything, and an older binary still
    /// recognises a database made now.
    static let landedChecksums: [Int: String] = [
        1: "54e18067e47711fe8912f2519fa1a62b33923adbe05ba45755168c4438c649e9",  // 0001_initial
    ]

    static func appliedMigrations(_ connection: SQLiteConnection) throws -> [AppliedMigration] {
        try connection.query("SELECT version, name, sql, applied_at FROM schema_migrations ORDER BY version") {
            AppliedMigration(version: Int(try $0.int64("version")), name: try $0.text("name"), sql: try $0.text("sql"),
                             appliedAt: Date(unixMilliseconds: try $0.int64("applied_at")))
        }
    }

    static func hasBookkeeping(_ connection: SQLiteConnection) throws -> Bool {
        try !connection.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'") { _ in true }.isEmpty
    }

    /// Refuses a database that already holds something (tables, indexes, views...) but has no
    /// `schema_migrations`, and a file that is not SQLite at all: `notAnEventDatabase` naming the file.
    /// A new or empty database passes (the store creates its schema there).
    static func requireEventDatabaseOrEmpty(_ connection: SQLiteConnection) throws {
        let isEmpty: Bool
        do {
            isEmpty = try connection.query("SELECT 1 FROM sqlite_master LIMIT 1") { _ in true }.isEmpty
        } catch let error as SQLiteError where error.code.primary == .notADatabase {
            throw EventStoreError.notAnEventDatabase(path: connection.path)
        }
        if isEmpty { return }
        guard try hasBookkeeping(connection) else { throw EventStoreError.notAnEventDatabase(path: connection.path) }
    }

    /// Checks the applied migrations against `known` and throws on the first mismatch.
    static func verify(applied: [AppliedMigration], known: [EmbeddedMigration], path: String) throws {
        let byVersion = Dictionary(uniqueKeysWithValues: known.map { ($0.version, $0) })
        for row in applied {
            guard let migration = byVersion[row.version] else {
                throw EventStoreError.migrationUnknown(version: row.version, name: row.name, path: path,
                                                       newestKnown: known.last?.version ?? 0)
            }
            if row.name != migration.name || row.sql != migration.sql {
                throw EventStoreError.migrationChanged(version: row.version, appliedName: row.name, embeddedName: migration.name,
                                                       difference: difference(applied: row.sql, embedded: migration.sql), path: path)
            }
        }
        let appliedVersions = Set(applied.map(\.version))
        let newestApplied = applied.map(\.version).max() ?? 0
        if let gap = known.first(where: { !appliedVersions.contains($0.version) && $0.version < newestApplied }) {
            throw EventStoreError.migrationOutOfOrder(version: gap.version, name: gap.name, path: path,
                                                      newestApplied: newestApplied)
        }
    }

    /// Where two migration texts part: `line N differs` (or `the texts are equal` when only the name differs).
    static func difference(applied: String, embedded: String) -> String {
        let old = applied.split(separator: "\n", omittingEmptySubsequences: false)
        let new = embedded.split(separator: "\n", omittingEmptySubsequences: false)
        guard let line = (0..<max(old.count, new.count)).first(where: { $0 >= old.count || $0 >= new.count || old[$0] != new[$0] }) else {
            return "the texts are equal"
        }
        return "line \(line + 1) differs"
    }

    /// True when `schema_migrations` is of the checksum era (no `sql` column: written by an older binary).
    static func keepsChecksums(_ connection: SQLiteConnection) throws -> Bool {
        try !connection.query("SELECT name FROM pragma_table_info('schema_migrations')") { try $0.text("name") }.contains("sql")
    }

    /// Checks a checksum-era `schema_migrations`: each row must carry its migration's landed checksum.
    /// Returns the applied versions.
    static func verifyChecksums(_ connection: SQLiteConnection, known: [EmbeddedMigration]) throws -> [Int] {
        let path = connection.path
        let rows = try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version") {
            (version: Int(try $0.int64("version")), name: try $0.text("name"), checksum: try $0.text("checksum"))
        }
        let byVersion = Dictionary(uniqueKeysWithValues: known.map { ($0.version, $0) })
        for row in rows {
            guard let migration = byVersion[row.version] else {
                throw EventStoreError.migrationUnknown(version: row.version, name: row.name, path: path,
                                                       newestKnown: known.last?.version ?? 0)
            }
            guard row.name == migration.name, let landed = landedChecksums[row.version], row.checksum == landed else {
                throw EventStoreError.migrationChanged(
                    version: row.version, appliedName: row.name, embeddedName: migration.name,
                    difference: "checksum \(row.checksum.prefix(12)) is not the one \(migration.name) landed with", path: path)
            }
        }
        return rows.map(\.version)
    }

    /// Moves a checksum-era `schema_migrations` to the text layout in one transaction: the rows are checked
    /// (`verifyChecksums`; on a mismatch the database is left as it was), then get their embedded text.
    static func upgradeChecksumBookkeeping(_ connection: SQLiteConnection, known: [EmbeddedMigration]) throws {
        guard try keepsChecksums(connection) else { return }
        try connection.transaction("moving schema_migrations in \(connection.path) to migration texts") { () throws -> Void in
            // Another process may have moved it since we looked: check again under the write lock.
            guard try keepsChecksums(connection) else { return }
            let versions = try verifyChecksums(connection, known: known)
            let byVersion = Dictionary(uniqueKeysWithValues: known.map { ($0.version, $0) })
            try connection.execute("ALTER TABLE schema_migrations RENAME TO schema_migrations_checksums")
            try connection.execute(bookkeepingSQL)
            for version in versions {
                try connection.run("""
                    INSERT INTO schema_migrations (version, name, checksum, applied_at, sql)
                    SELECT version, name, checksum, applied_at, ? FROM schema_migrations_checksums WHERE version = ?
                    """, [.text(byVersion[version]!.sql), .integer(Int64(version))])
            }
            try connection.execute("DROP TABLE schema_migrations_checksums")
        }
    }

    /// Applies what is missing; returns the versions applied now.
    @discardableResult
    static func migrate(_ connection: SQLiteConnection, known: [EmbeddedMigration] = embeddedMigrations) throws -> [Int] {
        // Never add studio tables to somebody else's database.
        try requireEventDatabaseOrEmpty(connection)
        try connection.execute(bookkeepingSQL, what: "creating schema_migrations in \(connection.path)")
        try upgradeChecksumBookkeeping(connection, known: known)
        try verify(applied: appliedMigrations(connection), known: known, path: connection.path)
        var appliedNow: [Int] = []
        for migration in known {
            let done = try connection.transaction("applying migration \(migration.name) to \(connection.path)") { () throws -> Bool in
                // Another process may have applied it since we looked: check again under the write lock.
                let already = try connection.query("SELECT 1 FROM schema_migrations WHERE version = ?",
                                                   [.integer(Int64(migration.version))]) { _ in true }
                if !already.isEmpty { return false }
                try connection.execute(migration.sql, what: "applying migration \(migration.name) to \(connection.path)")
                if connection.isAutocommit {
                    throw EventStoreError.migrationEndedTransaction(name: migration.name)
                }
                try connection.run(
                    "INSERT INTO schema_migrations (version, name, checksum, applied_at, sql) VALUES (?, ?, ?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.name), .optional(landedChecksums[migration.version]),
                     .integer(Date().unixMilliseconds), .text(migration.sql)])
                return true
            }
            if done { appliedNow.append(migration.version) }
        }
        return appliedNow
    }

    /// For read-only connections: the schema must already be exactly what this binary expects.
    static func requireCurrent(_ connection: SQLiteConnection, known: [EmbeddedMigration] = embeddedMigrations) throws {
        try requireEventDatabaseOrEmpty(connection)
        guard try hasBookkeeping(connection) else { throw EventStoreError.notAnEventDatabase(path: connection.path) }
        let versions: [Int]
        if try keepsChecksums(connection) {
            // Written by an older binary and not opened for writing since: checked by its landed checksums.
            versions = try verifyChecksums(connection, known: known)
        } else {
            let applied = try appliedMigrations(connection)
            try verify(applied: applied, known: known, path: connection.path)
            versions = applied.map(\.version)
        }
        let newest = known.last?.version ?? 0
        if versions.count < known.count {
            throw EventStoreError.schemaOutdated(path: connection.path, appliedVersion: versions.max() ?? 0,
                                                 requiredVersion: newest)
        }
    }
}
