import Foundation
import StudioCore
import Testing
import TestSupport
@testable import EventStore

/// The history's queries and views against a real SQLite file written through the real API
/// (`GeneratedHistory`: four sessions, one of them really crashed).
@Suite(.serialized) struct HistoryTests {
    static func generated() throws -> (TemporaryDirectory, GeneratedHistory) {
        let directory = try TemporaryDirectory()
        let history = try GeneratedHistory.make(at: directory.file("studio.db"), writer: GeneratedHistory.writerExecutable)
        return (directory, history)
    }

    /// Every filter and a few combinations, within a session and across all of them, give exactly the
    /// events that filtering each session's whole log in Swift gives.
    @Test func filtersMatchWhatFilteringTheWholeLogGives() throws {
        let (directory, history) = try Self.generated()
        _ = directory
        let store = try EventStore.openReadOnly(path: history.path)
        defer { store.close() }
        let sessions = try store.sessions()
        #expect(sessions.map(\.id) == [history.open, history.crashed, history.failed, history.stopped])
        let everything = try sessions.reversed().flatMap { try store.events(sessionID: $0.id) }
        try #require(everything.count > 40)

        func ms(_ base: Int64, _ offset: Int64) -> Date { Date(timeIntervalSince1970: Double(base + offset) / 1000) }
        let queries: [EventQuery] = [
            EventQuery(),
            EventQuery(sessionID: history.stopped),
            EventQuery(kinds: [.switchProgram]),
            EventQuery(kinds: [.cameraLost, .cameraReturned]),
            EventQuery(camera: "cam2"),
            EventQuery(camera: "cam4"),
            EventQuery(kinds: [.cameraLost], camera: "cam2"),
            EventQuery(kinds: [.cameraLost], since: ms(history.openBase, -1)),
            EventQuery(since: ms(history.failedBase, 5_000), until: ms(history.failedBase, 9_000)),
            EventQuery(until: ms(history.failedBase, 100_000)),
            EventQuery(sessionID: history.stopped, fromProgramMilliseconds: 10_000, toProgramMilliseconds: 40_000),
            EventQuery(fromProgramMilliseconds: 12_000),
            EventQuery(toProgramMilliseconds: 1_000),
            EventQuery(sessionID: history.stopped, kinds: [.switchProgram], fromProgramMilliseconds: 20_000, limit: 2),
            EventQuery(limit: 5),
            EventQuery(kinds: [.switchProgram, .cameraLost], camera: "cam1", since: ms(history.stoppedBase, 0), limit: 3),
            EventQuery(sessionID: history.failed, kinds: [.outputDisconnected, .outputReconnected], camera: nil),
            EventQuery(kinds: [EventKind(rawValue: "no_such_kind")]),
        ]
        for query in queries {
            var expected = everything.filter { event in
                (query.sessionID.map { event.sessionID == $0 } ?? true)
                    && (query.kinds.isEmpty || query.kinds.contains(event.kind))
                    && (query.camera.map { event.camera == $0 } ?? true)
                    && (query.since.map { event.wallTime >= $0 } ?? true)
                    && (query.until.map { event.wallTime < $0 } ?? true)
                    && (query.fromProgramMilliseconds.map { (event.programMilliseconds ?? .min) >= $0 } ?? true)
                    && (query.toProgramMilliseconds.map { to in event.programMilliseconds.map { $0 < to } ?? false } ?? true)
            }
            if let limit = query.limit { expected = Array(expected.suffix(limit)) }
            let found = try store.events(matching: query)
            #expect(found == expected, "\(query): \(found.map { $0.id }) instead of \(expected.map { $0.id })")
        }
        // The filters do select something (the comparison above is not between two empty lists).
        #expect(try store.events(matching: EventQuery(kinds: [.cameraLost], camera: "cam2")).map(\.sessionID) == [history.open])
        #expect(try store.events(matching: EventQuery(kinds: [.switchProgram], since: ms(history.openBase, -1))).count >= 6)
        #expect(try store.events(matching: EventQuery(limit: 5)).count == 5)
    }

    @Test func sessionsFilterByTimeAndByHowTheyEnded() throws {
        let (directory, history) = try Self.generated()
        _ = directory
        let store = try EventStore.openReadOnly(path: history.path)
        defer { store.close() }
        #expect(try store.sessions(matching: SessionQuery(endReasons: ["crashed"])).map(\.id) == [history.crashed])
        #expect(try store.sessions(matching: SessionQuery(endReasons: ["stopped", "error"])).map(\.id) == [history.failed, history.stopped])
        #expect(try store.sessions(matching: SessionQuery(endReasons: ["error"], limit: 1)).map(\.id) == [history.failed])
        #expect(try store.sessions(matching: SessionQuery(limit: 2)).map(\.id) == [history.open, history.crashed])
        // Every session ran within the last minute (their rows are real times); none before it.
        let all = try store.sessions()
        let oldestStart = try #require(all.map(\.startedAt).min())
        #expect(try store.sessions(matching: SessionQuery(since: oldestStart)).count == 4)
        #expect(try store.sessions(matching: SessionQuery(until: oldestStart)).isEmpty, "nothing started before the first")
        let ended = try #require(try store.session(id: history.failed)?.endedAt)
        // After session 2 ended: only those still running or ended since.
        let since = try store.sessions(matching: SessionQuery(since: ended.addingTimeInterval(0.001))).map(\.id)
        #expect(since.contains(history.open) && since.contains(history.crashed) && !since.contains(history.stopped))
        #expect(try store.sessions(matching: SessionQuery(since: Date().addingTimeInterval(3600))).map(\.id) == [history.open],
                "only the open session runs in the future")
    }

    /// The program timeline of every session: intervals follow each other without gaps and add up to the
    /// session's program time; session 1's are exactly what its events make.
    @Test func programIntervalsCoverEachSessionsProgram() throws {
        let (directory, history) = try Self.generated()
        _ = directory
        let store = try EventStore.openReadOnly(path: history.path)
        defer { store.close() }
        let stopped = try store.programIntervals(sessionID: history.stopped).map {
            GeneratedHistory.Interval($0.source, $0.sourceKind, $0.fromMilliseconds, $0.toMilliseconds, $0.endedBy, via: $0.via)
        }
        #expect(stopped == GeneratedHistory.stoppedIntervals)
        #expect(try store.programIntervals(sessionID: history.stopped)[1].transitionFromMilliseconds == 19_033)
        #expect(try store.programIntervals(sessionID: history.stopped)[3].camera == "cam1", "the slate says which camera was lost")

        for session in [history.stopped, history.failed, history.crashed, history.open] {
            let intervals = try store.programIntervals(sessionID: session)
            let span = try #require(try store.programTime(sessionID: session))
            try #require(!intervals.isEmpty)
            #expect(intervals.map(\.sequence) == Array(1...intervals.count))
            // An open session ends "now", which moves between the two reads.
            let slack: Int64 = span.isOpen ? 1_000 : 0
            #expect(intervals.first?.fromMilliseconds == span.fromMilliseconds)
            #expect(abs((intervals.last?.toMilliseconds ?? 0) - span.toMilliseconds) <= slack)
            #expect(zip(intervals, intervals.dropFirst()).allSatisfy { $0.toMilliseconds == $1.fromMilliseconds }, "no gaps: \(intervals)")
            #expect(intervals.allSatisfy { $0.durationMilliseconds == $0.toMilliseconds - $0.fromMilliseconds && $0.durationMilliseconds >= 0 })
            #expect(abs(intervals.map(\.durationMilliseconds).reduce(0, +) - span.durationMilliseconds) <= slack)
            // Each switch starts an interval at its program time.
            let switches = try store.events(matching: EventQuery(sessionID: session, kinds: [.switchProgram]))
            for event in switches {
                #expect(intervals.contains { $0.fromMilliseconds == event.programMilliseconds && $0.source == (event.details["scene"] ?? event.camera?.name) },
                        "\(event) starts no interval")
            }
        }
        // Session 2 ends at its end in program time, counted from its last switch by the wall clock.
        let failed = try store.programIntervals(sessionID: history.failed)
        let failedEnd = try #require(try store.session(id: history.failed)?.endedAt)
        #expect(failed.map(\.source) == ["cam2", "cam4"] && failed.map(\.endedBy) == ["cut", "session end"])
        #expect(failed.last?.toMilliseconds == 12_000 + Int64((failedEnd.timeIntervalSince1970 * 1000).rounded()) - (history.failedBase + 12_000))
        // The open session's last source is still on air.
        let open = try store.programIntervals(sessionID: history.open)
        #expect(open.map(\.source) == ["cam1", "cam3"] && open.map(\.endedBy) == ["cut", nil])
        #expect(try store.programTime(sessionID: history.open)?.isOpen == true)
    }

    /// `camera_outages` and `output_outages`, read as anyone would with `sqlite3`.
    @Test func outageViewsPairEachLossWithItsReturn() throws {
        let (directory, history) = try Self.generated()
        _ = directory
        let connection = try SQLiteConnection(path: history.path, readOnly: true)
        defer { connection.close() }
        let cameras = try connection.query("""
            SELECT session_id, camera, reason, lost_at, back_at, duration_ms, ended_by FROM camera_outages ORDER BY lost_event_id
            """) { row in
            "\(try row.int64("session_id")) \(try row.text("camera")) \(try row.text("reason")) "
                + "\(try row.int64("lost_at")) \(try row.optionalInt64("back_at").map(String.init) ?? "-") \(try row.int64("duration_ms") >= 0) "
                + (try row.optionalText("ended_by") ?? "lost")
        }
        let b1 = history.stoppedBase, b2 = history.failedBase, b4 = history.openBase
        #expect(cameras == [
            "\(history.stopped) cam1 removed \(b1 + 25_000) \(b1 + 30_000) true returned",
            "\(history.stopped) cam1 silent \(b1 + 40_000) \(b1 + 45_000) true returned",
            "\(history.failed) cam4 silent \(b2 + 7_000) \(b2 + 8_000) true returned",
            "\(history.open) cam2 removed \(b4 + 1_000) - true lost",
        ])
        let durations = try connection.query("SELECT duration_ms FROM camera_outages WHERE back_at IS NOT NULL ORDER BY lost_event_id") {
            try $0.int64("duration_ms")
        }
        #expect(durations == [5_000, 5_000, 1_000])
        let outputs = try connection.query("""
            SELECT session_id, output, error, down_at, up_at, duration_ms, down_program_ms, up_program_ms, ended_by, attempts FROM output_outages
            """) { row in
            [try row.int64("session_id"), try row.int64("down_at") - b2, try row.optionalInt64("up_at").map { $0 - b2 } ?? -1,
             try row.int64("duration_ms"), try row.int64("down_program_ms"), try row.optionalInt64("up_program_ms") ?? -1,
             try row.int64("attempts")].map(String.init).joined(separator: " ")
                + " \(try row.text("output")) \(try row.text("error")) \(try row.optionalText("ended_by") ?? "down")"
        }
        #expect(outputs == ["\(history.failed) 5000 9000 4000 5000 9000 2 main Broken pipe reconnected"])
    }
}
