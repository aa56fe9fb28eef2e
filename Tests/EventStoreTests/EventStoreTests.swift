import Foundation
import StudioCore
import StudioSystem
import Testing
@testable import EventStore

@Suite struct EventStoreTests {
    @Test func eventsRoundTripInOrder() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let sessionID = try store.startSession(configSnapshot: sampleConfig)
        let base = Date(timeIntervalSince1970: 1_714_586_584.123)
        let sent = [
            StudioEvent(kind: .cameraAdded, camera: "cam1", wallTime: base, details: ["backend": "test-pattern", "display_name": "Bars"]),
            StudioEvent(kind: .switchProgram, camera: "cam2", wallTime: base + 1, programTime: .milliseconds(1033),
                        details: ["from": "cam1", "source": "control"]),
            StudioEvent(kind: .outputDisconnected, wallTime: base + 2, details: ["output": "main", "error": "Broken pipe \"quoted\" \\ ✓"]),
            StudioEvent(kind: .framesDropped, wallTime: base + 3, programTime: .milliseconds(0), details: [:]),
            StudioEvent(kind: EventKind(rawValue: "future_kind"), camera: "cam10", wallTime: base + 4, programTime: MediaTime(microseconds: 2_500_999)),
        ]
        for event in sent { store.record(event) }
        try store.endSession(reason: "stopped")

        let stored = try store.events(sessionID: sessionID)
        try #require(stored.count == sent.count + 2)
        #expect(stored.first?.kind == .sessionStarted)
        #expect(stored.first?.details["pid"] == "\(getpid())")
        #expect(stored.last?.kind == .sessionEnded)
        #expect(stored.last?.details == ["reason": "stopped"])
        #expect(stored.map(\.id) == stored.map(\.id).sorted())
        #expect(stored.allSatisfy { $0.sessionID == sessionID })
        for (event, record) in zip(sent, stored.dropFirst()) {
            #expect(record.kind == event.kind)
            #expect(record.camera == event.camera)
            #expect(abs(record.wallTime.timeIntervalSince(event.wallTime)) < 0.001)
            #expect(record.programMilliseconds == event.programTime?.milliseconds)
            #expect(record.details == event.details)
        }
        #expect(stored[5].programMilliseconds == 2500)
        #expect(stored[1].wallTime == base, "wall times are kept to the millisecond")

        let session = try #require(try store.session(id: sessionID))
        #expect(session.endReason == "stopped")
        #expect(session.endedAt == stored.last?.wallTime)
        #expect(session.configSnapshot == sampleConfig)
        #expect(session.eventCount == sent.count + 2 && session.switchCount == 1)
        #expect(store.statistics.eventsWritten == sent.count && store.statistics.eventsFailed == 0)
        store.close()
    }

    @Test func sessionsListNewestFirstWithSwitchCounts() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let first = try store.startSession(configSnapshot: "{}")
        for camera in ["cam1", "cam2", "cam1"] { store.record(StudioEvent(kind: .switchProgram, camera: CameraID(camera))) }
        store.record(StudioEvent(kind: .outputConnected, details: ["output": "main"]))
        try store.endSession(reason: "stopped")
        let second = try store.startSession(configSnapshot: sampleConfig)
        store.record(StudioEvent(kind: .switchProgram, camera: "cam3"))

        let sessions = try store.sessions(limit: nil)
        #expect(sessions.map(\.id) == [second, first])
        #expect(sessions.map(\.switchCount) == [1, 3])
        #expect(sessions.map(\.eventCount) == [2, 6])
        #expect(sessions.map(\.endReason) == [nil, "stopped"])
        #expect(sessions[0].isOpen && !sessions[1].isOpen)
        #expect(try store.sessions(limit: 1).map(\.id) == [second])
        #expect(try store.session(id: nil)?.id == second)
        #expect(try store.session(id: first)?.switchCount == 3)
        #expect(try store.session(id: 9999) == nil)

        try store.endSession(reason: "error")
        #expect(try store.session(id: nil)?.id == second, "without an open session, nil means the latest")
        #expect(try store.session(id: nil)?.endReason == "error")
        store.close()
    }

    @Test func cameraNamesAreStableAcrossReopenAndPinning() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        do {
            let store = try EventStore(path: path)
            #expect(try store.cameraName(forIdentity: "v4l2:usb-A", backend: .v4l2, displayName: "A", pinnedName: nil) == "cam1")
            #expect(try store.cameraName(forIdentity: "v4l2:usb-B", backend: .v4l2, displayName: "B", pinnedName: nil) == "cam2")
            #expect(try store.cameraName(forIdentity: "pattern:bars", backend: .testPattern, displayName: "Bars", pinnedName: nil) == "cam3")
            #expect(try store.cameraName(forIdentity: "v4l2:usb-A", backend: .v4l2, displayName: "A again", pinnedName: nil) == "cam1")
            store.close()
        }
        let store = try EventStore(path: path)
        #expect(try store.cameraName(forIdentity: "v4l2:usb-B", backend: .v4l2, displayName: "B", pinnedName: nil) == "cam2")
        #expect(try store.cameraName(forIdentity: "v4l2:usb-D", backend: .v4l2, displayName: "D", pinnedName: nil) == "cam4")

        // D is pinned to cam1, which A had: D takes it, A gets the lowest free name (cam4, which D gave up).
        #expect(try store.cameraName(forIdentity: "v4l2:usb-D", backend: .v4l2, displayName: "D", pinnedName: "cam1") == "cam1")
        #expect(try store.cameraName(forIdentity: "v4l2:usb-A", backend: .v4l2, displayName: "A", pinnedName: nil) == "cam4")
        // A pinned name outside the camN series, then a new camera: the lowest free camN is cam5.
        #expect(try store.cameraName(forIdentity: "pipewire:42", backend: .pipewire, displayName: "Screen", pinnedName: "cam9") == "cam9")
        #expect(try store.cameraName(forIdentity: "v4l2:usb-E", backend: .v4l2, displayName: "E", pinnedName: nil) == "cam5")
        // Pinning to the name it already has changes nothing.
        #expect(try store.cameraName(forIdentity: "v4l2:usb-D", backend: .v4l2, displayName: "D", pinnedName: "cam1") == "cam1")

        let cameras = try store.cameras()
        #expect(cameras.map(\.name) == ["cam1", "cam2", "cam3", "cam4", "cam5", "cam9"])
        #expect(cameras.map(\.identity) == ["v4l2:usb-D", "v4l2:usb-B", "pattern:bars", "v4l2:usb-A", "v4l2:usb-E", "pipewire:42"])
        let bars = try #require(cameras.first { $0.identity == "pattern:bars" })
        #expect(bars.backendName == .testPattern && bars.displayName == "Bars")
        let a = try #require(cameras.first { $0.identity == "v4l2:usb-A" })
        #expect(a.displayName == "A" && a.lastSeen >= a.firstSeen)

        #expect(throws: EventStoreError.self) {
            try store.cameraName(forIdentity: "", backend: .v4l2, displayName: "", pinnedName: nil)
        }
        store.close()
    }

    @Test func recordFromManyThreadsKeepsEveryEventAndEachThreadsOrder() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let sessionID = try store.startSession(configSnapshot: "{}")
        let threadCount = 8, perThread = 250
        let threads = (0..<threadCount).map { thread in
            NamedThread.start(name: "test.rec\(thread)") {
                for index in 0..<perThread {
                    store.record(StudioEvent(kind: .framesDropped, details: ["thread": "\(thread)", "index": "\(index)"]))
                }
            }
        }
        for thread in threads { #expect(thread.join(timeoutSeconds: 30)) }
        store.flush()

        let events = try store.events(sessionID: sessionID).filter { $0.kind == .framesDropped }
        #expect(events.count == threadCount * perThread)
        for thread in 0..<threadCount {
            let indexes = events.filter { $0.details["thread"] == "\(thread)" }.compactMap { Int($0.details["index"] ?? "") }
            #expect(indexes == Array(0..<perThread))
        }
        #expect(store.statistics.eventsDropped == 0)
        #expect(store.statistics.eventsWritten == threadCount * perThread)
        store.close()
    }

    @Test func queriesSeeEverythingRecordedBefore() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let sessionID = try store.startSession(configSnapshot: "{}")
        for index in 1...40 {
            store.record(StudioEvent(kind: .switchProgram, camera: "cam1", details: ["index": "\(index)"]))
            let events = try store.events(sessionID: sessionID)
            #expect(events.count == index + 1)
            #expect(events.last?.details["index"] == "\(index)")
        }
        #expect(try store.session(id: sessionID)?.switchCount == 40)
        store.close()
    }

    @Test func aFullQueueDropsAndCountsInsteadOfBlocking() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"), queueCapacity: 4)
        let sessionID = try store.startSession(configSnapshot: "{}")
        // Hold the store thread inside a job so nothing is taken from the queue meanwhile.
        let started = Completion<Void>(), release = Completion<Void>()
        let holder = NamedThread.start(name: "test.holder") {
            _ = try? store.perform("hold") { _ in
                started.fulfil(.success(()))
                _ = release.wait()
            }
        }
        _ = started.wait()
        for index in 0..<10 { store.record(StudioEvent(kind: .framesDropped, details: ["index": "\(index)"])) }
        #expect(store.statistics.eventsDropped == 6)
        release.fulfil(.success(()))
        #expect(holder.join(timeoutSeconds: 10))
        store.flush()
        let kept = try store.events(sessionID: sessionID).filter { $0.kind == .framesDropped }.map { $0.details["index"] }
        #expect(kept == ["0", "1", "2", "3"])
        store.close()
    }

    @Test func eventsWithoutASessionAreCountedNotStored() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        store.record(StudioEvent(kind: .cameraAdded, camera: "cam1"))
        store.flush()
        #expect(store.statistics.eventsWithoutSession == 1)
        #expect(try store.sessions().isEmpty)
        store.close()
    }

    @Test func misuseGivesClearErrors() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        #expect(throws: EventStoreError.self) { try store.endSession(reason: "stopped") }
        #expect(throws: EventStoreError.self) { try store.addRecording(cameraID: nil, path: "/tmp/x.flv") }
        let error = #expect(throws: EventStoreError.self) { try store.startSession(configSnapshot: "program: 720p") }
        #expect(error?.description.contains("JSON") == true)
        let id = try store.startSession(configSnapshot: "{}")
        let again = #expect(throws: EventStoreError.self) { try store.startSession(configSnapshot: "{}") }
        guard case .sessionAlreadyOpen(id)? = again else {
            Issue.record("expected sessionAlreadyOpen(\(id)), got \(String(describing: again))")
            return
        }
        #expect(throws: EventStoreError.self) { try store.finishRecording(id: 12345) }
        store.close()
        let closed = #expect(throws: EventStoreError.self) { try store.sessions() }
        guard case .closed? = closed else {
            Issue.record("expected closed, got \(String(describing: closed))")
            return
        }
        store.record(StudioEvent(kind: .error))
        #expect(store.statistics.eventsDropped == 1)
    }

    @Test func recordingsAreTrackedPerSession() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let sessionID = try store.startSession(configSnapshot: "{}")
        let program = try store.addRecording(cameraID: nil, path: "/srv/rec/program.flv")
        let iso = try store.addRecording(cameraID: "cam2", path: "/srv/rec/cam2.flv")
        try store.finishRecording(id: program)
        let recordings = try store.recordings(sessionID: sessionID)
        #expect(recordings.map(\.id) == [program, iso])
        #expect(recordings.map(\.camera) == [nil, "cam2"])
        #expect(recordings[0].endedAt != nil && recordings[1].endedAt == nil)
        #expect(recordings[0].path == "/srv/rec/program.flv")
        store.close()
    }

    /// The server's rows from the outputs' events: queued without waiting, in order with the events,
    /// one row per file; each ends once with its size; the ones never reported closed end at stop.
    @Test func recordingRowsFollowTheFilesStartedAndStopped() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let sessionID = try store.startSession(configSnapshot: "{}")
        let startedAt = Date(timeIntervalSince1970: 1_700_000_000)
        store.recordingStarted(cameraID: nil, path: "/srv/rec/program.mkv", at: startedAt)
        store.recordingStarted(cameraID: "cam1", path: "/srv/rec/cam1.mkv", at: startedAt)
        store.recordingStopped(path: "/srv/rec/program.mkv", bytes: 123_456, at: startedAt.addingTimeInterval(5))
        store.recordingStarted(cameraID: nil, path: "/srv/rec/program-part1.mkv", at: startedAt.addingTimeInterval(9))
        store.recordingStopped(path: "/srv/rec/program.mkv", bytes: 1, at: startedAt.addingTimeInterval(20))
        var rows = try store.recordings(sessionID: sessionID)
        #expect(rows.map(\.path) == ["/srv/rec/program.mkv", "/srv/rec/cam1.mkv", "/srv/rec/program-part1.mkv"])
        #expect(rows.map(\.camera) == [nil, "cam1", nil])
        #expect(rows.map(\.startedAt) == [startedAt, startedAt, startedAt.addingTimeInterval(9)])
        #expect(rows[0].endedAt == startedAt.addingTimeInterval(5) && rows[0].bytes == 123_456, "ended once, by the first stop")
        #expect(rows[1].endedAt == nil && rows[1].bytes == nil && rows[2].endedAt == nil)

        #expect(try store.finishOpenRecordings() == 2)
        rows = try store.recordings(sessionID: sessionID)
        #expect(rows.allSatisfy { $0.endedAt != nil } && rows[0].endedAt == startedAt.addingTimeInterval(5))
        #expect(store.statistics.lastWriteError == nil)
        store.close()
    }

    @Test func unwritablePlacesGiveClearErrors() throws {
        let directory = try TemporaryDirectory()
        // A regular file where a directory should be (root ignores permission bits, so use the file type).
        let blocker = directory.file("not-a-directory")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        let path = blocker + "/sub/studio.db"
        let error = #expect(throws: EventStoreError.self) { try EventStore(path: path) }
        guard case .cannotCreateDirectory(let errorPath, let reason)? = error else {
            Issue.record("expected cannotCreateDirectory, got \(String(describing: error))")
            return
        }
        #expect(errorPath == path)
        #expect(reason.contains("Not a directory"))
        #expect(error?.description.contains(path) == true)

        let directoryAsFile = directory.file("a-directory")
        try FileManager.default.createDirectory(atPath: directoryAsFile, withIntermediateDirectories: false)
        let second = #expect(throws: EventStoreError.self) { try EventStore(path: directoryAsFile) }
        #expect(second?.description.contains(directoryAsFile) == true)
    }

    @Test func missingParentDirectoriesAreCreated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("var/lib/studio/studio.db")
        let store = try EventStore(path: path)
        #expect(try store.integrityCheck() == "ok")
        store.close()
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func readOnlyOpenNeedsAnExistingDatabaseAndRefusesWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let missing = #expect(throws: EventStoreError.self) { try EventStore.openReadOnly(path: path) }
        guard case .databaseMissing(path)? = missing else {
            Issue.record("expected databaseMissing, got \(String(describing: missing))")
            return
        }
        #expect(missing?.description.contains(path) == true)
        #expect(!FileManager.default.fileExists(atPath: path), "a read-only open must not create the file")

        let writer = try EventStore(path: path)
        let sessionID = try writer.startSession(configSnapshot: sampleConfig)
        writer.record(StudioEvent(kind: .switchProgram, camera: "cam2", programTime: .milliseconds(40)))
        writer.flush()

        // Readable while the writer still runs (WAL), and refuses writes.
        let reader = try EventStore.openReadOnly(path: path)
        #expect(reader.isReadOnly)
        #expect(try reader.session(id: nil)?.id == sessionID)
        #expect(try reader.events(sessionID: sessionID).map(\.kind) == [.sessionStarted, .switchProgram])
        #expect(try reader.integrityCheck() == "ok")
        let refused = #expect(throws: EventStoreError.self) { try reader.startSession(configSnapshot: "{}") }
        guard case .readOnly? = refused else {
            Issue.record("expected readOnly, got \(String(describing: refused))")
            return
        }
        #expect(throws: EventStoreError.self) { try reader.recoverOrphanedSessions() }
        reader.close()
        try writer.endSession(reason: "stopped")
        writer.close()
    }

    @Test func openSessionsOfLiveProcessesAreNotRecovered() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let running = try EventStore(path: path)
        let live = try running.startSession(configSnapshot: "{}")
        let recording = try running.addRecording(cameraID: nil, path: "/tmp/x.mkv")
        running.record(StudioEvent(kind: .switchProgram, camera: "cam1", wallTime: Date().addingTimeInterval(5)))
        running.flush()

        let other = try EventStore(path: path)
        #expect(try other.recoverOrphanedSessions() == [], "this process is alive")

        // Same pid but another start time: the pid was reused, the writer is gone.
        do {
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.run("UPDATE sessions SET process_start = process_start + 1 WHERE id = ?", [.integer(live)])
        }
        #expect(try other.recoverOrphanedSessions() == [live])
        let session = try #require(try other.session(id: live))
        let events = try other.events(sessionID: live)
        try #require(events.count >= 3)
        #expect(session.endReason == "crashed")
        #expect(session.endedAt == events[events.count - 2].wallTime, "ended at its last event")
        #expect(events.last?.kind == .sessionEnded && events.last?.details == ["reason": "crashed"])
        let recordings = try other.recordings(sessionID: live)
        #expect(recordings.map(\.id) == [recording] && recordings.first?.endedAt == session.endedAt, "its recordings end with it")
        #expect(try other.recoverOrphanedSessions() == [])
        other.close()
        running.close()
    }

    @Test func rowsAreReadByColumnName() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path + "/rows.db", readOnly: false)
        try connection.run("CREATE TABLE t (a INTEGER, b TEXT, c INTEGER)")
        try connection.run("INSERT INTO t (a, b, c) VALUES (?, ?, ?), (?, ?, ?)",
                           [.integer(1), .text("one"), .null, .integer(2), .null, .integer(20)])
        // The columns in another order than the table's, one renamed: names, not positions, are read.
        let rows = try connection.query("SELECT c, b AS name, a FROM t ORDER BY a") { row in
            (a: try row.int64("a"), name: try row.optionalText("name"), c: try row.optionalInt64("c"),
             null: try row.isNull("c"), text: try row.text("name"))
        }
        #expect(rows.map(\.a) == [1, 2])
        #expect(rows.map(\.name) == ["one", nil])
        #expect(rows.map(\.c) == [nil, 20])
        #expect(rows.map(\.null) == [true, false])
        #expect(rows.map(\.text) == ["one", ""], "NULL text reads as empty")

        let error = #expect(throws: SQLiteError.self) {
            try connection.query("SELECT a FROM t") { try $0.int64("b") }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains(#"no column named "b""#) == true)
        #expect(error?.context == "SELECT a FROM t")
    }
}
