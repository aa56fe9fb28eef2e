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
    /// SHA-256 of the file's exact text, hex.
    public let checksum: String

    /// The migrations compiled into this binary, in order.
    public static let all: [Migration] = embeddedMigrations.map {
        Migration(version: $0.version, name: $0.name, checksum: SHA256.hexDigest($0.sql.utf8))
    }
}

/// A row of `schema_migrations`: a migration applied to a database.
public struct AppliedMigration: Sendable, Hashable, Codable {
    public let version: Int
    public let name: String
    public let checksum: String
    public let appliedAt: Date

    enum CodingKeys: String, CodingKey {
        case version, name, checksum
        case appliedAt = "applied_at"
    }
}

/// Brings a database to the schema this binary carries, or says clearly why it cannot.
///
/// Rules (see docs/schema.md): each migration runs in its own `BEGIN IMMEDIATE` transaction together with
/// its `schema_migrations` row, so a crash leaves it either fully applied or not at all; applied rows are
/// compared with the embedded files by name and checksum, so an edited landed migration is refused.
enum Migrator {
    static let bookkeepingSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    INTEGER PRIMARY KEY,
            name       TEXT NOT NULL,
            checksum   TEXT NOT NULL,
            applied_at INTEGER NOT NULL
        )
        """

    static func appliedMigrations(_ connection: SQLiteConnection) throws -> [AppliedMigration] {
        try connection.query("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version") {
            AppliedMigration(version: Int(try $0.int64("version")), name: try $0.text("name"), checksum: try $0.text("checksum"),
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
            let checksum = SHA256.hexDigest(migration.sql.utf8)
            if row.name != migration.name || row.checksum != checksum {
                throw EventStoreError.migrationChanged(version: row.version, appliedName: row.name,
                                                       appliedChecksum: row.checksum, embeddedName: migration.name,
                                                       embeddedChecksum: checksum, path: path)
            }
        }
        let appliedVersions = Set(applied.map(\.version))
        let newestApplied = applied.map(\.version).max() ?? 0
        if let gap = known.first(where: { !appliedVersions.contains($0.version) && $0.version < newestApplied }) {
            throw EventStoreError.migrationOutOfOrder(version: gap.version, name: gap.name, path: path,
                                                      newestApplied: newestApplied)
        }
    }

    /// Applies what is missing; returns the versions applied now.
    @discardableResult
    static func migrate(_ connection: SQLiteConnection, known: [EmbeddedMigration] = embeddedMigrations) throws -> [Int] {
        // Never add studio tables to somebody else's database.
        try requireEventDatabaseOrEmpty(connection)
        try connection.execute(bookkeepingSQL, what: "creating schema_migrations in \(connection.path)")
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
                    "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.name),
                     .text(SHA256.hexDigest(migration.sql.utf8)), .integer(Date().unixMilliseconds)])
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
        let applied = try appliedMigrations(connection)
        try verify(applied: applied, known: known, path: connection.path)
        let newest = known.last?.version ?? 0
        if applied.count < known.count {
            throw EventStoreError.schemaOutdated(path: connection.path, appliedVersion: applied.map(\.version).max() ?? 0,
                                                 requiredVersion: newest)
        }
    }
}
