import Foundation
import StudioSystem
import Testing
@testable import EventStore

@Suite struct MigrationTests {
    @Test func migrationsApplyOnceAndAreRecorded() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let store = try EventStore(path: path)
        let applied = try store.appliedMigrations()
        store.close()

        #expect(!Migration.all.isEmpty)
        #expect(Migration.all.map(\.version) == Array(1...Migration.all.count))
        #expect(applied.map(\.version) == Migration.all.map(\.version))
        #expect(applied.map(\.name) == Migration.all.map(\.name))
        #expect(applied.map(\.sql) == Migration.all.map(\.sql))
        #expect(applied.first?.name == "0001_initial")
        #expect(applied.allSatisfy { abs($0.appliedAt.timeIntervalSinceNow) < 600 })

        let connection = try SQLiteConnection(path: path, readOnly: true)
        let tables = Set(try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'") { try $0.text("name") })
        #expect(tables.isSuperset(of: ["schema_migrations", "sessions", "cameras", "events", "recordings"]))
        let indexes = Set(try connection.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'") { try $0.text("name") })
        #expect(indexes.contains("events_by_session"))
        #expect(try connection.query("PRAGMA journal_mode") { try $0.text("journal_mode") } == ["wal"])
    }

    @Test func reopeningIsANoOp() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let first = try EventStore(path: path)
        let before = try first.appliedMigrations()
        first.close()
        // Applied times are in ms: wait past one so a re-application would show.
        MonotonicClock.sleep(seconds: 0.01)

        let second = try EventStore(path: path)
        let after = try second.appliedMigrations()
        second.close()
        #expect(after == before)

        let connection = try SQLiteConnection(path: path, readOnly: false)
        #expect(try Migrator.migrate(connection) == [])
    }

    @Test func changedMigrationIsRefusedClearly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        try EventStore(path: path).close()
        do {
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.run("UPDATE schema_migrations SET sql = replace(sql, 'CREATE TABLE cameras', 'CREATE TABLE kameras') WHERE version = 1")
            #expect(connection.changes == 1)
        }

        let error = #expect(throws: EventStoreError.self) { try EventStore(path: path) }
        guard case .migrationChanged(let version, let name, let embeddedName, let difference, let errorPath)? = error else {
            Issue.record("expected migrationChanged, got \(String(describing: error))")
            return
        }
        #expect(version == 1 && name == "0001_initial" && embeddedName == "0001_initial" && errorPath == path)
        let line = Migration.all[0].sql.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("CREATE TABLE cameras") }
        #expect(difference == "line \((line ?? -2) + 1) differs")
        let text = error?.description ?? ""
        #expect(text.contains("0001_initial") && text.contains(path) && text.contains("never edited"))

        // The CLI's read-only open refuses it too.
        #expect(throws: EventStoreError.self) { try EventStore.openReadOnly(path: path) }
    }

    @Test func eachMigrationIsAtomicWithItsBookkeepingRow() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.file("m.db"), readOnly: false)
        let first = EmbeddedMigration(version: 1, name: "0001_a", sql: "CREATE TABLE a (x INTEGER);")
        let broken = EmbeddedMigration(version: 2, name: "0002_b", sql: "CREATE TABLE b (x INTEGER); INSERT INTO nowhere VALUES (1);")
        #expect(try Migrator.migrate(connection, known: [first]) == [1])

        #expect(throws: SQLiteError.self) { try Migrator.migrate(connection, known: [first, broken]) }
        let tables = Set(try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'") { try $0.text("name") })
        #expect(tables.contains("a"))
        #expect(!tables.contains("b"), "the failed migration's first statement must be rolled back")
        #expect(try Migrator.appliedMigrations(connection).map(\.version) == [1])

        let fixed = EmbeddedMigration(version: 2, name: "0002_b", sql: "CREATE TABLE b (x INTEGER);")
        #expect(try Migrator.migrate(connection, known: [first, fixed]) == [2])
        #expect(try Migrator.migrate(connection, known: [first, fixed]) == [])

        // A binary that knows only migration 1 refuses a database migrated further.
        let error = #expect(throws: EventStoreError.self) { try Migrator.migrate(connection, known: [first]) }
        guard case .migrationUnknown(2, "0002_b", _, 1)? = error else {
            Issue.record("expected migrationUnknown, got \(String(describing: error))")
            return
        }
    }

    @Test func aMigrationMayNotEndItsTransaction() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.file("m.db"), readOnly: false)
        let sneaky = EmbeddedMigration(version: 1, name: "0001_sneaky", sql: "CREATE TABLE a (x INTEGER); COMMIT;")
        let error = #expect(throws: EventStoreError.self) { try Migrator.migrate(connection, known: [sneaky]) }
        guard case .migrationEndedTransaction("0001_sneaky")? = error else {
            Issue.record("expected migrationEndedTransaction, got \(String(describing: error))")
            return
        }
        #expect(try Migrator.appliedMigrations(connection).isEmpty)
    }

    @Test func anUnrelatedDatabaseIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("customers.db")
        do {
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('Ada');")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let error = #expect(throws: EventStoreError.self) { try EventStore(path: path) }
        guard case .notAnEventDatabase(let errorPath)? = error else {
            Issue.record("expected notAnEventDatabase, got \(String(describing: error))")
            return
        }
        #expect(errorPath == path)
        let text = error?.description ?? ""
        #expect(text.contains(path) && text.contains("not a studio event database"), "\(text)")
        // Not a byte changed: no studio tables, not even the switch to WAL.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let connection = try SQLiteConnection(path: path, readOnly: false)
        let tables = try connection.query("SELECT name FROM sqlite_master") { try $0.text("name") }
        #expect(tables == ["customers"])
        #expect(try connection.query("PRAGMA journal_mode") { try $0.text("journal_mode") } == ["delete"])

        // The migrator refuses it on its own, too (a second line of defence), and so does the CLI's open.
        let direct = #expect(throws: EventStoreError.self) { try Migrator.migrate(connection) }
        guard case .notAnEventDatabase(path)? = direct else {
            Issue.record("expected notAnEventDatabase, got \(String(describing: direct))")
            return
        }
        #expect(try connection.query("SELECT name FROM sqlite_master") { try $0.text("name") } == ["customers"])
        let readOnly = #expect(throws: EventStoreError.self) { try EventStore.openReadOnly(path: path) }
        guard case .notAnEventDatabase(path)? = readOnly else {
            Issue.record("expected notAnEventDatabase, got \(String(describing: readOnly))")
            return
        }
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("notes.txt")
        let text = Data(String(repeating: "studio: cam1 at 19:00, cam2 at 19:30\n", count: 200).utf8)
        try text.write(to: URL(fileURLWithPath: path))
        for opening in [{ try EventStore(path: path) }, { try EventStore.openReadOnly(path: path) }] {
            let error = #expect(throws: EventStoreError.self) { _ = try opening() }
            guard case .notAnEventDatabase(path)? = error else {
                Issue.record("expected notAnEventDatabase, got \(String(describing: error))")
                continue
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
    }

    @Test func anEmptyFileOrAnEmptyDatabaseBecomesAnEventDatabase() throws {
        let directory = try TemporaryDirectory()
        let emptyFile = directory.file("empty.db")
        #expect(FileManager.default.createFile(atPath: emptyFile, contents: Data()))
        let emptyDatabase = directory.file("fresh.db")
        do {
            let connection = try SQLiteConnection(path: emptyDatabase, readOnly: false)
            try connection.execute("PRAGMA user_version = 7")  // a valid SQLite file with no schema
        }
        for path in [emptyFile, emptyDatabase] {
            let store = try EventStore(path: path)
            #expect(try store.appliedMigrations().map(\.version) == Migration.all.map(\.version))
            store.close()
        }
    }

    /// A database from the checksum era: `schema_migrations` without texts, as older binaries wrote it.
    static func makeChecksumEraDatabase(_ path: String, checksum: String) throws {
        let connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("""
            CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL)
            """)
        try connection.execute(Migration.all[0].sql)
        try connection.run("INSERT INTO schema_migrations VALUES (1, '0001_initial', ?, 1700000000000)", [.text(checksum)])
    }

    @Test func aChecksumEraDatabaseMovesToTextsWithoutHashing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.db")
        try Self.makeChecksumEraDatabase(path, checksum: Migrator.landedChecksums[1]!)
        // The CLI's read-only open takes its layout as it is: its migration 1 checks out, and it is refused
        // only for being behind the binary's later migrations (the server migrates it).
        let readOnly = #expect(throws: EventStoreError.self) { try EventStore.openReadOnly(path: path).close() }
        guard case .schemaOutdated(path, 1, Migration.all.count)? = readOnly else {
            Issue.record("expected schemaOutdated, got \(String(describing: readOnly))")
            return
        }
        let store = try EventStore(path: path)
        let applied = try store.appliedMigrations()
        store.close()
        #expect(applied.map(\.version) == Migration.all.map(\.version))
        #expect(applied.first?.sql == Migration.all[0].sql && applied.first?.appliedAt == Date(unixMilliseconds: 1700000000000))
        // An older binary still finds the checksum it knows for migration 1.
        let connection = try SQLiteConnection(path: path, readOnly: true)
        #expect(try connection.query("SELECT checksum FROM schema_migrations WHERE version = 1") { try $0.text("checksum") } == [Migrator.landedChecksums[1]!])
        #expect(try connection.query("SELECT name FROM sqlite_master WHERE name LIKE 'schema_migrations%'") { try $0.text("name") } == ["schema_migrations"])
    }

    @Test func aChecksumEraDatabaseWithAnotherChecksumIsRefusedAndLeftAsItWas() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("edited.db")
        try Self.makeChecksumEraDatabase(path, checksum: "deadbeef")
        for opening in [{ try EventStore(path: path) }, { try EventStore.openReadOnly(path: path) }] {
            let error = #expect(throws: EventStoreError.self) { _ = try opening() }
            guard case .migrationChanged(1, "0001_initial", "0001_initial", let difference, path)? = error else {
                Issue.record("expected migrationChanged, got \(String(describing: error))")
                continue
            }
            #expect(difference.contains("deadbeef"))
        }
        let connection = try SQLiteConnection(path: path, readOnly: true)
        #expect(try Migrator.keepsChecksums(connection))
    }

    @Test func differenceNamesTheFirstDifferingLine() {
        #expect(Migrator.difference(applied: "a\nb\nc", embedded: "a\nB\nc") == "line 2 differs")
        #expect(Migrator.difference(applied: "a\nb", embedded: "a\nb\n") == "line 3 differs")
        #expect(Migrator.difference(applied: "a", embedded: "a") == "the texts are equal")
    }
}
