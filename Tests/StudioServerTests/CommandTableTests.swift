import Foundation
import Testing
import Control
import EventStore
import StudioCore
@testable import StudioServer

/// The control commands are declared once (`ServerCommands.all`); the router, `help` and the protocol
/// document follow from that table.
@Suite struct CommandTableTests {
    /// The command names in the tables of docs/control-protocol.md's "Commands" section, in order.
    static func documentedCommands() throws -> [String] {
        try DocumentTables.firstCells(of: "docs/control-protocol.md", section: "Commands")
    }

    @Test func theProtocolDocumentListsEveryCommandOnce() throws {
        let queries = QueryWorker()
        defer { queries.stop() }
        let router = ServerCommands.makeRouter(queries: queries)
        let documented = try Self.documentedCommands()
        #expect(documented.count == Set(documented).count, "a command documented twice: \(documented)")
        #expect(Set(documented) == Set(router.commands.map(\.name)),
                "docs/control-protocol.md lists \(documented.sorted()); the server answers \(router.commands.map(\.name).sorted())")
        // The studio server's own table, in declaration order.
        let table = ServerCommands.all.map { $0.name }
        #expect(documented.filter(table.contains) == table)
    }

    @Test func everyCommandHasASummaryAndAUniqueName() {
        let names = ServerCommands.all.map { $0.name }
        #expect(Set(names).count == names.count)
        #expect(ServerCommands.all.allSatisfy { !$0.summary.isEmpty && !$0.summary.contains("\n") })
    }

    @Test func storedRecordsBecomeRepliesInTheWireShape() throws {
        let wallTime = Date(timeIntervalSince1970: 1_714_586_584.123)
        let event = EventRecord(id: 7, sessionID: 3, kind: .switchProgram, camera: "cam2", wallTime: wallTime,
                                programMilliseconds: 1033, details: ["from": "cam1"])
        let line = try JSONValue(encoding: EventView(event)).jsonText
        #expect(line == #"{"camera":"cam2","details":{"from":"cam1"},"id":7,"kind":"switch","program_ms":1033,"session":3,"wall_time":"2024-05-01T18:03:04.123Z"}"#)
        #expect(try JSONValue(parsing: line).decode(EventView.self) == EventView(event))

        let bare = EventRecord(id: 8, sessionID: 3, kind: .error, camera: nil, wallTime: wallTime, programMilliseconds: nil, details: [:])
        let bareValue = try JSONValue(encoding: EventView(bare))
        #expect(bareValue["camera"] == .null && bareValue["program_ms"] == .null)

        let session = SessionRecord(id: 3, startedAt: wallTime, endedAt: nil, endReason: nil, switchCount: 4, eventCount: 9,
                                    configSnapshot: "{}", hostname: "studio-pc", pid: 42)
        let sessionValue = try JSONValue(encoding: SessionView(session))
        #expect(sessionValue.jsonText
            == #"{"end_reason":null,"ended_at":null,"event_count":9,"id":3,"started_at":"2024-05-01T18:03:04.123Z","switch_count":4}"#)
        let log = Views.log(session: session, events: [event, bare])
        let decoded = try log.decode(LogReply.self)
        let decodedSession = try #require(decoded.session, "a one-session log names its session")
        #expect(decodedSession.id == 3 && decodedSession.startedAt == wallTime && decodedSession.endedAt == nil)
        #expect(decoded.events == [EventView(event), EventView(bare)])
    }

    @Test func recordingsListTheProgramFirstWithSizesOnDisk() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-replies-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let present = directory.appendingPathComponent("cam1.mkv").path
        try Data(count: 1234).write(to: URL(fileURLWithPath: present))
        let started = Date(timeIntervalSince1970: 1_714_586_584)
        let session = SessionRecord(id: 1, startedAt: started, endedAt: started, endReason: "stopped", switchCount: 0, eventCount: 2,
                                    configSnapshot: "{}", hostname: "h", pid: 1)
        let reply = RecordingsReply(session: session, recordings: [
            RecordingRecord(id: 2, sessionID: 1, camera: "cam1", path: present, startedAt: started, endedAt: nil),
            RecordingRecord(id: 3, sessionID: 1, camera: nil, path: directory.appendingPathComponent("gone.flv").path,
                            startedAt: started, endedAt: started),
        ])
        let value = try JSONValue(encoding: reply)
        #expect(value["recordings"]?[0]?["kind"] == "program" && value["recordings"]?[0]?["camera"] == "program")
        #expect(value["recordings"]?[0]?["bytes"] == .null, "a file that is gone has no size")
        #expect(value["recordings"]?[1]?["camera"] == "cam1" && value["recordings"]?[1]?["kind"] == "iso")
        #expect(value["recordings"]?[1]?["bytes"] == 1234)
        #expect(value["recordings"]?[1]?["ended_at"] == .null)
    }
}
