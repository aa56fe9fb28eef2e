import Foundation
import StudioSystem
import Testing
@testable import EventStore
#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct CrashRecoveryTests {
    /// A writer process killed with SIGKILL mid-stream leaves a sound database; reopening marks its
    /// session crashed and keeps every event it had committed, in order.
    @Test func sigkilledWriterLeavesASoundDatabase() throws {
        let writerPath = try buildProductsDirectory() + "/eventstore-writer"
        try #require(FileManager.default.isExecutableFile(atPath: writerPath),
                     "eventstore-writer must be built next to the test binary (swift build builds it)")
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let child = try ChildProcess(executable: writerPath, arguments: [path])

        let first = try #require(try child.readLine(timeoutSeconds: 20), "the writer printed nothing")
        #expect(first.hasPrefix("session "))
        let sessionID = try #require(Int64(first.dropFirst("session ".count)))
        var flushed = 0
        while flushed < 1000, let line = try child.readLine(timeoutSeconds: 20) {
            flushed = Int(line.dropFirst("flushed ".count)) ?? flushed
        }
        #expect(flushed >= 1000, "the writer stopped early")
        try child.kill(SIGKILL)
        let status = try child.wait()
        #expect(status & 0x7f == SIGKILL, "the writer must have died from SIGKILL, wait status \(status)")

        let heartbeat = try Self.heartbeat(path, session: sessionID)
        let store = try EventStore(path: path)
        #expect(try store.integrityCheck() == "ok")
        #expect(try store.session(id: sessionID)?.isOpen == true)
        #expect(try store.recoverOrphanedSessions() == [sessionID])
        #expect(try store.recoverOrphanedSessions() == [])

        let session = try #require(try store.session(id: sessionID))
        let events = try store.events(sessionID: sessionID)
        try #require(events.count >= 2)
        #expect(session.endReason == "crashed")
        #expect(events.first?.kind == .sessionStarted)
        #expect(events.last?.kind == .sessionEnded && events.last?.details == ["reason": "crashed"])
        let switches = events.filter { $0.kind == .switchProgram }
        #expect(switches.count >= flushed, "everything flushed before the kill is there")
        #expect(switches.compactMap { Int($0.details["n"] ?? "") } == Array(1...switches.count), "a committed prefix, in order")
        // Its last sign of life: its last event, or its heartbeat if that came later.
        let lastEvent = events[events.count - 2].wallTime.unixMilliseconds
        #expect(session.endedAt?.unixMilliseconds == max(lastEvent, heartbeat ?? lastEvent))
        #expect(events.last?.wallTime == session.endedAt)
        #expect(session.switchCount == switches.count)
        #expect(try store.integrityCheck() == "ok")
        store.close()
    }

    /// The session's `heartbeat_at`, read from its own connection.
    static func heartbeat(_ path: String, session: Int64) throws -> Int64? {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        defer { connection.close() }
        try connection.setBusyTimeout(milliseconds: 5000)
        return try connection.query("SELECT heartbeat_at FROM sessions WHERE id = ?", [.integer(session)]) {
            try $0.optionalInt64("heartbeat_at")
        }.first ?? nil
    }

    /// A session killed long after its last event ends at its last heartbeat, within one heartbeat
    /// interval of the kill, not at its last event.
    @Test func aKilledIdleSessionEndsWithinAHeartbeatOfTheKill() throws {
        let writerPath = try buildProductsDirectory() + "/eventstore-writer"
        try #require(FileManager.default.isExecutableFile(atPath: writerPath))
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let intervalMilliseconds: Int64 = 300
        let child = try ChildProcess(executable: writerPath,
                                     arguments: [path, "--heartbeat-ms", "\(intervalMilliseconds)", "--idle-after", "10"])
        let first = try #require(try child.readLine(timeoutSeconds: 20), "the writer printed nothing")
        let sessionID = try #require(Int64(first.dropFirst("session ".count)))
        var line: String?
        repeat { line = try child.readLine(timeoutSeconds: 20) } while line != nil && line != "idle"
        try #require(line == "idle", "the writer never went idle")

        // Idle for a while: the heartbeat keeps moving past the last event.
        let reader = try SQLiteConnection(path: path, readOnly: true)
        defer { reader.close() }
        try reader.setBusyTimeout(milliseconds: 5000)
        let lastEvent = try #require(try reader.query("SELECT max(wall_time) AS last FROM events WHERE session_id = ?",
                                                      [.integer(sessionID)]) { try $0.optionalInt64("last") }.first ?? nil)
        let deadline = MonotonicClock.now() + 20_000_000_000
        var beat: Int64 = 0
        while MonotonicClock.now() < deadline {
            beat = try Self.heartbeat(path, session: sessionID) ?? 0
            if beat > lastEvent + 4 * intervalMilliseconds { break }
            MonotonicClock.sleep(nanoseconds: 10_000_000)
        }
        try #require(beat > lastEvent + 4 * intervalMilliseconds, "the heartbeat never moved past the last event")

        // Kill it at some moment between two beats.
        try #require(try Self.waitForNextBeat(path, session: sessionID, after: beat))
        MonotonicClock.sleep(nanoseconds: UInt64(intervalMilliseconds) * 500_000)
        let killedAt = Date().unixMilliseconds
        try child.kill(SIGKILL)
        let status = try child.wait()
        #expect(status & 0x7f == SIGKILL)

        let store = try EventStore(path: path)
        defer { store.close() }
        #expect(try store.recoverOrphanedSessions() == [sessionID])
        let session = try #require(try store.session(id: sessionID))
        let endedAt = try #require(session.endedAt?.unixMilliseconds)
        #expect(session.endReason == "crashed")
        #expect(endedAt <= killedAt, "not after the kill")
        // One interval, plus what a loaded machine may delay one beat by.
        #expect(killedAt - endedAt <= intervalMilliseconds + 200, "ended \(killedAt - endedAt) ms before the kill")
        #expect(endedAt > lastEvent + 4 * intervalMilliseconds, "ends at the heartbeat, not at the last event")
        #expect(try store.events(sessionID: sessionID).last?.wallTime.unixMilliseconds == endedAt)
    }

    /// Waits until the session's heartbeat is newer than `after`.
    static func waitForNextBeat(_ path: String, session: Int64, after: Int64) throws -> Bool {
        let deadline = MonotonicClock.now() + 20_000_000_000
        while MonotonicClock.now() < deadline {
            if try heartbeat(path, session: session) ?? 0 > after { return true }
            MonotonicClock.sleep(nanoseconds: 2_000_000)
        }
        return false
    }
}
