import Foundation
import StudioCore
import StudioSystem
import Synchronization
import Testing
@testable import EventStore
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// The database file deleted, renamed or replaced while the store writes it (as `rm`, `mv` by hand would):
/// the store notices, leaves the old file whole, and carries on in the file at its path, or refuses
/// one that is not a studio database without writing to it. Files are checked with the real sqlite3 CLI.
@Suite(.serialized) struct ReplacedDatabaseTests {
    /// A short heartbeat, so an idle store notices within a fraction of a second (5 s in the server).
    static let limits = EventStoreLimits(busyTimeoutMilliseconds: 200, backlogCapacity: 100_000, retryIntervalSeconds: 0.05,
                                         heartbeatIntervalSeconds: 0.1)

    final class Notices: Sendable {
        let received = Mutex<[EventStoreNotice]>([])
        @Sendable func append(_ notice: EventStoreNotice) { received.withLock { $0.append(notice) } }
        var changes: [String] { received.withLock { $0.compactMap { if case .databaseFileChanged(_, let what) = $0 { what } else { nil } } } }
        var refusals: [String] { received.withLock { $0.compactMap { if case .databaseFileRefused(_, let why) = $0 { why } else { nil } } } }
        var replacements: [(created: Bool, previous: Int64?, session: Int64?)] {
            received.withLock {
                $0.compactMap { if case .databaseFileReplaced(_, let created, let previous, let session) = $0 { (created, previous, session) } else { nil } }
            }
        }
    }

    /// A store writing `studio.db` in a fresh directory, with a session open and some switches recorded.
    final class Show {
        let directory: TemporaryDirectory
        let path: String
        let notices = Notices()
        let store: EventStore
        let session: Int64

        init(limits: EventStoreLimits = ReplacedDatabaseTests.limits, recording switches: ClosedRange<Int>) throws {
            directory = try TemporaryDirectory()
            path = directory.file("studio.db")
            store = try EventStore(path: path, limits: limits, notify: notices.append)
            session = try store.startSession(configSnapshot: sampleConfig)
            ReplacedDatabaseTests.record(store, switches)
        }

        func file(_ name: String) -> String { directory.file(name) }
    }

    static func switchEvent(_ n: Int) -> StudioEvent {
        StudioEvent(kind: .switchProgram, camera: CameraID("cam\(n % 2 + 1)"), details: ["n": "\(n)"])
    }

    /// The output lines of `sqlite3 PATH SQL` (the real CLI, as an operator or a next start would open it).
    static func sqlite3(_ path: String, _ sql: String) throws -> [String] {
        let child = try ChildProcess(executable: try sqlite3Executable(), arguments: [path, sql])
        var lines: [String] = []
        while let line = try child.readLine(timeoutSeconds: 20) { lines.append(line) }
        _ = try child.wait()
        return lines
    }

    /// The `n` details of a session's switch events in a file, read by the sqlite3 CLI.
    static func switches(in path: String, session: Int64) throws -> [String] {
        try sqlite3(path, "SELECT json_extract(details, '$.n') FROM events WHERE session_id = \(session) AND kind = 'switch' ORDER BY id")
    }

    static func rename(_ from: String, _ to: String) throws { try syscall("rename") { Glibc.rename(from, to) } }

    static func record(_ store: EventStore, _ range: ClosedRange<Int>) {
        for n in range { store.record(switchEvent(n)) }
        store.flush()
    }

    /// The session continuing `previous` after the switch, with its `database_replaced` event.
    /// (Expectations only, so a test goes on to check the files when there is none.)
    static func continuation(_ store: EventStore, previous: Int64) throws -> (session: Int64, marker: [String: String]) {
        let session = try #require(store.currentSessionID)
        let events = try store.events(sessionID: session)
        #expect(events.first?.kind == .sessionStarted && events.first?.details["continues_session"] == "\(previous)")
        let marker = events.first { $0.kind == .databaseReplaced }
        #expect(marker != nil && marker?.details["previous_session"] == "\(previous)", "\(events.map(\.kind))")
        return (session, marker?.details ?? [:])
    }

    @Test func deletedWhileIdleIsNoticedAndAFreshFileTakesTheLaterEvents() throws {
        let show = try Show(recording: 1...3)
        let (path, notices, store, first) = (show.path, show.notices, show.store, show.session)
        defer { store.close() }
        let recording = try store.addRecording(cameraID: nil, path: "/rec/session-1-program.mkv")

        try syscall("unlink") { unlink(path) }
        // Nothing is recorded: the heartbeat alone notices it.
        #expect(waitUntil(seconds: 10) { store.statistics.databaseReplacements == 1 }, "\(store.statistics)")
        #expect(FileManager.default.fileExists(atPath: path), "a fresh database at the configured path")
        #expect(notices.changes.count == 1 && notices.changes.first?.contains("deleted") == true, "\(notices.changes)")
        #expect(notices.replacements.count == 1 && notices.replacements.first?.created == true)
        Self.record(store, 4...6)

        let (session, marker) = try Self.continuation(store, previous: first)
        #expect(marker["reason"] == "deleted" && marker["old_file"] == "deleted")
        #expect(marker["events_in_old_file"] == "4", "session_started and three switches went with the old file")
        #expect(notices.replacements.first?.previous == first && notices.replacements.first?.session == session)
        #expect(store.statistics.databaseProblem == nil && store.statistics.eventsLost == 0)
        // The recording still being written is registered in the new file, under the same id, and finishes there.
        try store.finishRecording(id: recording)
        let recordings = try store.recordings(sessionID: session)
        #expect(recordings.map(\.id) == [recording] && recordings.first?.path == "/rec/session-1-program.mkv")
        #expect(recordings.first?.endedAt != nil)
        try store.endSession(reason: "stopped")
        store.close()
        #expect(try Self.sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: path, session: session) == ["4", "5", "6"])
        #expect(try Self.sqlite3(path, "SELECT end_reason FROM sessions WHERE id = \(session)") == ["stopped"])
    }

    @Test func renamedAwayKeepsItsEventsWholeAndThePathGetsTheLaterOnes() throws {
        // A long heartbeat: here the next write must notice it by itself.
        var limits = Self.limits
        limits.heartbeatIntervalSeconds = 3600
        let show = try Show(limits: limits, recording: 1...3)
        let (path, notices, store, first) = (show.path, show.notices, show.store, show.session)
        defer { store.close() }
        let elsewhere = show.file("elsewhere.db")

        try Self.rename(path, elsewhere)
        Self.record(store, 4...6)
        #expect(store.statistics.databaseReplacements == 1, "noticed before the write: \(store.statistics)")
        let (session, marker) = try Self.continuation(store, previous: first)
        #expect(marker["reason"] == "moved" && marker["old_file"] == elsewhere, "\(marker)")
        #expect(notices.changes.first?.contains(elsewhere) == true, "the log says where the old file is: \(notices.changes)")

        // The old file, under its new name, is whole and has exactly what was written before the switch,
        // even while the store still runs.
        #expect(try Self.sqlite3(elsewhere, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: elsewhere, session: first) == ["1", "2", "3"])
        try store.endSession(reason: "stopped")
        store.close()
        #expect(try Self.sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: path, session: session) == ["4", "5", "6"])
        #expect(try Self.sqlite3(elsewhere, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: elsewhere, session: first) == ["1", "2", "3"])
    }

    @Test func aReaderOfTheOldFileDelaysTheSwitchAndNothingIsWrittenThereMeanwhile() throws {
        let show = try Show(recording: 1...3)
        let (path, notices, store, first) = (show.path, show.notices, show.store, show.session)
        defer { store.close() }
        let elsewhere = show.file("elsewhere.db")
        // Another program reads the database in an open transaction (its snapshot keeps the WAL from being
        // emptied into the file).
        let reader = try ChildProcess(executable: try sqlite3Executable(), arguments: [path], feedsInput: true)
        try reader.send("BEGIN; SELECT count(*) FROM events;\n")
        #expect(try reader.readLine(timeoutSeconds: 20) == "4")

        try Self.rename(path, elsewhere)
        Self.record(store, 4...5)
        #expect(notices.changes.count == 1)
        #expect(store.statistics.databaseReplacements == 0 && store.statistics.eventsQueued == 2, "\(store.statistics)")
        #expect(store.statistics.databaseProblem?.contains("cannot be written into it yet") == true, "\(store.statistics)")
        #expect(!FileManager.default.fileExists(atPath: path), "nothing new at the path while the old file is still open")
        try reader.kill(SIGKILL)
        _ = try reader.wait()

        #expect(waitUntil(seconds: 10) { store.statistics.databaseReplacements == 1 && store.statistics.eventsQueued == 0 },
                "\(store.statistics)")
        let (session, marker) = try Self.continuation(store, previous: first)
        #expect(marker["old_file"] == elsewhere, "\(marker)")
        #expect(try Self.sqlite3(elsewhere, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: elsewhere, session: first) == ["1", "2", "3"], "the waiting events did not go to the old file")
        store.close()
        #expect(try Self.sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: path, session: session) == ["4", "5"])
    }

    @Test func anotherStudioDatabaseMovedOverItIsCarriedOnAndBothStayWhole() throws {
        let show = try Show(recording: 1...3)
        let (path, notices, store, first) = (show.path, show.notices, show.store, show.session)
        defer { store.close() }
        let other = show.file("other.db")
        let kept = show.file("kept.db")
        // A studio database from another day (as a restored backup would be).
        let backup = try EventStore(path: other, limits: Self.limits)
        let oldSession = try backup.startSession(configSnapshot: sampleConfig)
        let backupRecording = try backup.addRecording(cameraID: nil, path: "/rec/backup.mkv")
        Self.record(backup, 100...101)
        try backup.endSession(reason: "stopped")
        backup.close()
        let recording = try store.addRecording(cameraID: CameraID("cam1"), path: "/rec/cam1.mkv")
        #expect(recording == backupRecording, "the same id in both files")
        // A second name for the open file, so what becomes of it can be checked after it loses its path.
        try syscall("link") { link(path, kept) }

        try Self.rename(other, path)
        Self.record(store, 4...6)
        #expect(store.statistics.databaseReplacements == 1, "\(store.statistics)")
        let (session, marker) = try Self.continuation(store, previous: first)
        #expect(marker["reason"] == "replaced" && marker["old_file"] == kept, "\(marker)")
        #expect(notices.replacements.first?.created == false)
        // The restored database keeps its own history; the show continues after it.
        #expect(try store.sessions().map(\.id).contains(oldSession))
        #expect(try store.events(sessionID: oldSession).filter { $0.kind == .switchProgram }.map { $0.details["n"] } == ["100", "101"])
        // Finishing the recording finishes its row in the new file, not the backup's with the same id.
        try store.finishRecording(id: recording)
        let continued = try store.recordings(sessionID: session)
        #expect(continued.map(\.path) == ["/rec/cam1.mkv"] && continued.first?.endedAt != nil && continued.first?.id != recording)
        #expect(try store.recordings(sessionID: oldSession).map(\.endedAt) == [nil])
        try store.endSession(reason: "stopped")
        store.close()

        #expect(try Self.sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: path, session: session) == ["4", "5", "6"])
        #expect(try Self.sqlite3(kept, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: kept, session: first) == ["1", "2", "3"])
        // The next start (as `serve` opens it) succeeds.
        let next = try EventStore(path: path, limits: Self.limits)
        defer { next.close() }
        _ = try next.recoverOrphanedSessions()
        #expect(try next.integrityCheck() == "ok")
        let nextSession = try next.startSession(configSnapshot: sampleConfig)
        #expect(nextSession > session)
    }

    @Test func aFileThatIsNoStudioDatabaseIsNotWrittenAndEventsWaitForAGoodOne() throws {
        let show = try Show(recording: 1...2)
        let (path, notices, store, first) = (show.path, show.notices, show.store, show.session)
        defer { store.close() }
        let aside = show.file("aside.db")

        // Garbage moved over the database.
        let garbage = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        try garbage.write(to: URL(fileURLWithPath: aside))
        try Self.rename(aside, path)
        Self.record(store, 3...4)
        #expect(waitUntil(seconds: 10) { !notices.refusals.isEmpty }, "\(store.statistics)")
        #expect(store.statistics.databaseProblem?.contains("Move that file away") == true, "\(store.statistics)")
        #expect(store.statistics.eventsQueued == 2 && store.statistics.eventsLost == 0)
        #expect(throws: EventStoreError.self) { try store.sessions() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)

        // A SQLite database of another program put in its place: refused as well, and left as it was.
        #expect(try Self.sqlite3(aside, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');").isEmpty)
        let foreign = try Data(contentsOf: URL(fileURLWithPath: aside))
        try Self.rename(aside, path)
        #expect(waitUntil(seconds: 10) { notices.refusals.count == 2 }, "\(notices.refusals)")
        #expect(notices.refusals.last?.contains("not a studio event database") == true, "\(notices.refusals)")
        Self.record(store, 5...5)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == foreign)
        #expect(try Self.sqlite3(path, "SELECT text FROM notes") == ["mine"])

        // Taken away: the store creates a fresh database and writes what waited, in order.
        try Self.rename(path, aside)
        #expect(waitUntil(seconds: 10) { store.statistics.databaseReplacements == 1 && store.statistics.eventsQueued == 0 },
                "\(store.statistics)")
        let (session, _) = try Self.continuation(store, previous: first)
        #expect(store.statistics.databaseProblem == nil && store.statistics.eventsLost == 0)
        store.close()
        #expect(try Self.sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.switches(in: path, session: session) == ["3", "4", "5"])
        #expect(try Self.sqlite3(aside, "PRAGMA integrity_check; SELECT text FROM notes") == ["ok", "mine"])
    }
}
