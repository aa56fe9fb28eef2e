import Foundation
import Testing
@testable import EventStore

/// A switcher's record of its nodes (migrations 8 and 9): what a node answered is kept per node, its files added
/// or updated, a failed ask keeps the node session and files known before; a prune removes them with the session.
@Suite struct NodeHistoryTests {
    @Test func aNodesSessionAndFilesAreKeptAndUpdated() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let sessionID = try store.startSession(configSnapshot: "{}")
        let asked = Date(timeIntervalSince1970: 1_700_000_000)
        let cam1 = NodeRecordingRecord(nodeSession: 7, camera: "cam1", kind: "iso", path: "/rec/session-7-cam1.mkv", startedAt: asked)
        store.noteNode(NodeSessionRecord(node: "pc2", nodeSession: 7, state: .answered, askedAt: asked, recordings: [cam1]))
        store.noteNode(NodeSessionRecord(node: "pc3", nodeSession: nil, state: .unknown, reason: "no api", askedAt: asked))
        var finished = cam1
        finished.endedAt = asked.addingTimeInterval(60)
        finished.bytes = 1234
        // Its time origin (migration 9), as the node's answer gave it.
        finished.origin = RecordingOrigin(originMicroseconds: 1_700_000_000_123_456, timeBase: "switcher", firstProgramMilliseconds: 33)
        let program = NodeRecordingRecord(nodeSession: 7, camera: "program", kind: "program", path: "/rec/session-7.mkv", startedAt: asked)
        store.noteNode(NodeSessionRecord(node: "pc2", nodeSession: 7, state: .answered, askedAt: asked.addingTimeInterval(60),
                                         recordings: [finished, program]))
        var nodes = try store.nodeSessions(sessionID: sessionID)
        #expect(nodes.map(\.node) == ["pc2", "pc3"])
        #expect(nodes[0].recordings == [program, finished], "one row per file, updated, the program first")
        #expect(nodes[0].askedAt == asked.addingTimeInterval(60) && nodes[1].state == .unknown && nodes[1].reason == "no api")

        // An answer without the origin (an older node's) keeps the one known.
        store.noteNode(NodeSessionRecord(node: "pc2", nodeSession: 7, state: .answered, askedAt: asked.addingTimeInterval(60),
                                         recordings: [{ var file = finished; file.origin = nil; return file }()]))
        #expect(try store.nodeSessions(sessionID: sessionID)[0].recordings.last?.origin == finished.origin)

        // Its clock measured against the switcher's: kept, and kept when a later answer has none.
        store.noteNode(NodeSessionRecord(node: "pc2", nodeSession: 7, state: .answered, askedAt: asked, clockOffsetMicroseconds: -3_000_000))
        #expect(try store.nodeSessions(sessionID: sessionID)[0].clockOffsetMicroseconds == -3_000_000)

        // The node gone: its state and reason change; its session, files and clock offset stay known.
        store.noteNode(NodeSessionRecord(node: "pc2", nodeSession: nil, state: .unreachable, reason: "cannot connect", askedAt: asked))
        nodes = try store.nodeSessions(sessionID: sessionID)
        #expect(nodes[0].state == .unreachable && nodes[0].reason == "cannot connect" && nodes[0].nodeSession == 7 && nodes[0].recordings.count == 2)
        #expect(nodes[0].clockOffsetMicroseconds == -3_000_000 && nodes[1].clockOffsetMicroseconds == nil)
        #expect(store.statistics.lastWriteError == nil)

        try store.endSession(reason: "stopped")
        let outcome = try store.prune(endedBefore: Date().addingTimeInterval(60), dryRun: false)
        #expect(outcome.sessionIDs == [sessionID])
        #expect(try store.nodeSessions(sessionID: sessionID).isEmpty)
        store.close()
    }
}
