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

/// Another process (the `sqlite3` CLI) holds the database's write lock longer than the store's busy
/// timeout while events are recorded: the store keeps them, retries, and writes them in order once the
/// lock is gone; past its backlog bound it counts what it lost and writes an `events_lost` event.
@Suite(.serialized) struct LockedDatabaseTests {
    /// Short waits so the lock outlasts several attempts quickly; the behaviour is the same at 5 s.
    static let limits = EventStoreLimits(busyTimeoutMilliseconds: 100, backlogCapacity: 100_000, retryIntervalSeconds: 0.05)

    final class Notices: Sendable {
        let received = Mutex<[EventStoreNotice]>([])
        @Sendable func append(_ notice: EventStoreNotice) { received.withLock { $0.append(notice) } }
        var failing: [String] { received.withLock { $0.compactMap { if case .writesFailing(let e) = $0 { e } else { nil } } } }
        var lossStarts: Int { received.withLock { $0.filter { if case .eventsLost = $0 { true } else { false } }.count } }
        var recoveries: [StudioEvent?] {
            received.withLock { $0.compactMap { if case .writesRecovered(_, let lost) = $0 { .some(lost) } else { nil } } }
        }
    }


    /// `sqlite3 PATH` holding `BEGIN EXCLUSIVE` (fed through its stdin, which stays open) until killed.
    static func lock(_ path: String) throws -> ChildProcess {
        let child = try ChildProcess(executable: try sqlite3Executable(), arguments: [path], feedsInput: true)
        try child.send("BEGIN EXCLUSIVE;\n")
        // Held once a writer of our own cannot get the lock at once.
        let probe = try SQLiteConnection(path: path, readOnly: false)
        defer { probe.close() }
        try probe.setBusyTimeout(milliseconds: 0)
        let held = try waitUntil {
            do {
                try probe.execute("BEGIN IMMEDIATE", what: "probing the lock")
                try probe.execute("ROLLBACK", what: "probing the lock")
                return false
            } catch let error as SQLiteError where error.code.primary == .busy {
                return true
            }
        }
        try #require(held, "sqlite3 never took the write lock")
        return child
    }

    static func release(_ child: ChildProcess) throws {
        try child.kill(SIGKILL)
        let status = try child.wait()
        #expect(status & 0x7f == SIGKILL)
    }

    static func switchEvent(_ n: Int) -> StudioEvent {
        StudioEvent(kind: .switchProgram, camera: CameraID("cam\(n % 2 + 1)"), details: ["n": "\(n)"])
    }

    @Test func lockLongerThanTheBusyTimeoutLosesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let notices = Notices()
        let store = try EventStore(path: path, limits: Self.limits, notify: notices.append)
        defer { store.close() }
        let session = try store.startSession(configSnapshot: sampleConfig)

        let holder = try Self.lock(path)
        for n in 1...5 { store.record(Self.switchEvent(n)) }
        #expect(waitUntil { store.statistics.failingSince != nil }, "the store must notice it cannot write")
        for n in 6...10 { store.record(Self.switchEvent(n)) }
        // Still kept after attempts that each waited out the busy timeout.
        #expect(waitUntil { store.statistics.eventsQueued == 10 })
        let failingAt = try #require(store.statistics.failingSince)
        #expect(waitUntil { Date().timeIntervalSince(failingAt) > 3 * Double(Self.limits.busyTimeoutMilliseconds) / 1000 })
        #expect(store.statistics.eventsQueued == 10 && store.statistics.eventsLost == 0)
        #expect(store.statistics.lastWriteError?.contains("locked") == true, "\(store.statistics.lastWriteError ?? "nil")")
        // Reads still work while another process holds the write lock (WAL).
        #expect(try store.events(sessionID: session).filter { $0.kind == .switchProgram }.isEmpty)
        try Self.release(holder)

        #expect(waitUntil { store.statistics.eventsQueued == 0 && store.statistics.failingSince == nil })
        let switches = try store.events(sessionID: session).filter { $0.kind == .switchProgram }
        #expect(switches.map { $0.details["n"] } == (1...10).map { "\($0)" }, "every event, in recording order")
        #expect(try store.events(sessionID: session).allSatisfy { $0.kind != .eventsLost })
        let statistics = store.statistics
        #expect(statistics.eventsLost == 0 && statistics.eventsWritten >= 10)
        #expect(notices.failing.count == 1, "said once, not per retry")
        #expect(notices.recoveries.count == 1 && notices.recoveries.first! == nil)
        #expect(notices.lossStarts == 0)
        // Later events go straight in again.
        store.record(Self.switchEvent(11))
        store.flush()
        #expect(try store.events(sessionID: session).last?.details["n"] == "11")
        #expect(store.statistics.eventsQueued == 0)
    }

    @Test func exceededBoundIsCountedAndWrittenOnceTheDatabaseIsBack() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let notices = Notices()
        var limits = Self.limits
        limits.backlogCapacity = 3
        let store = try EventStore(path: path, limits: limits, notify: notices.append)
        defer { store.close() }
        let session = try store.startSession(configSnapshot: sampleConfig)

        let holder = try Self.lock(path)
        for n in 1...3 { store.record(Self.switchEvent(n)) }
        #expect(waitUntil { store.statistics.failingSince != nil && store.statistics.eventsQueued == 3 })
        let beforeLoss = Date()
        for n in 4...7 { store.record(Self.switchEvent(n)) }
        #expect(waitUntil { store.statistics.eventsFailed == 4 })
        #expect(store.statistics.eventsLost == 4 && store.statistics.eventsQueued == 3)
        #expect(notices.lossStarts == 1, "the first loss is announced once")
        try Self.release(holder)

        #expect(waitUntil { store.statistics.failingSince == nil && store.statistics.eventsQueued == 0 })
        let events = try store.events(sessionID: session)
        let tail = events.filter { $0.kind == .switchProgram || $0.kind == .eventsLost }
        #expect(tail.map(\.kind) == [.switchProgram, .switchProgram, .switchProgram, .eventsLost])
        #expect(tail.prefix(3).map { $0.details["n"] } == ["1", "2", "3"])
        let lost = try #require(tail.last)
        #expect(lost.details["lost"] == "4" && lost.details["bound"] == "3")
        let firstLost = try #require(Int64(lost.details["first_lost_ms"] ?? ""))
        let lastLost = try #require(Int64(lost.details["last_lost_ms"] ?? ""))
        #expect(firstLost >= beforeLoss.unixMilliseconds - 1 && firstLost <= lastLost)
        #expect(lost.details["error"]?.contains("locked") == true)
        #expect(store.statistics.eventsLost == 4, "counted once, not again at the write")
        #expect(notices.recoveries.count == 1)
        #expect(notices.recoveries.first??.details["lost"] == "4")
        #expect(notices.failing.count == 1)
        // Nothing more is reported once it is written.
        store.record(Self.switchEvent(8))
        store.flush()
        #expect(try store.events(sessionID: session).filter { $0.kind == .eventsLost }.count == 1)
    }
}
