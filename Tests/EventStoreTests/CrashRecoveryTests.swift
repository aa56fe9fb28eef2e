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
        #expect(session.endedAt == events[events.count - 2].wallTime)
        #expect(session.switchCount == switches.count)
        #expect(try store.integrityCheck() == "ok")
        store.close()
    }
}
