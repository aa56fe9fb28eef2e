import Foundation
import StudioCore
import Testing
import TestSupport
@testable import EventStore

/// The history's views and a camera removed from the show for good (`camera_removed`, migration 7), on
/// sessions written through the real store as the server writes them: the removal on program ends the
/// camera's interval (the slate, or its backup, follows), a removal elsewhere changes nothing, a loss before
/// the removal ends at it, and the camera added again under its name is a fresh camera.
@Suite(.serialized) struct RemovedCameraHistoryTests {
    typealias Interval = GeneratedHistory.Interval

    /// What the views say about one session.
    struct Read {
        var intervals: [Interval]
        /// The slates' cameras, in order.
        var slates: [String]
        var outages: [String]
    }

    /// Writes one stopped session: `script` records its events, with wall times from now on (so the session,
    /// ended now, ends in program time at its last event's program time, as `GeneratedHistory`'s first does),
    /// then reads the views and checks what every session's timeline must be: intervals numbered from 1,
    /// without gaps, adding up to the session's program time.
    static func session(_ script: (GeneratedHistory.Script) -> Void) throws -> Read {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        let base = Int64(Date().timeIntervalSince1970) * 1000
        let writer = try EventStore(path: path)
        let session = try writer.startSession(configSnapshot: "{}")
        script(GeneratedHistory.Script(store: writer, base: base))
        try writer.endSession(reason: "stopped")
        writer.flush()
        writer.close()

        let store = try EventStore.openReadOnly(path: path)
        defer { store.close() }
        let rows = try store.programIntervals(sessionID: session)
        let span = try #require(try store.programTime(sessionID: session))
        #expect(rows.map(\.sequence) == Array(1...max(1, rows.count)))
        #expect(rows.first?.fromMilliseconds == span.fromMilliseconds && rows.last?.toMilliseconds == span.toMilliseconds)
        #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.toMilliseconds == $1.fromMilliseconds }, "no gaps: \(rows)")
        #expect(rows.map(\.durationMilliseconds).reduce(0, +) == span.durationMilliseconds)
        let outages = try store.cameraOutages(sessionID: session).map { outage in
            "\(outage.camera.name) \(outage.reason ?? "-") \(outage.lostAt.unixMilliseconds - base)-"
                + "\(outage.backAt.map { String($0.unixMilliseconds - base) } ?? "never") \(outage.durationMilliseconds) \(outage.endedBy ?? "lost")"
        }
        return Read(intervals: rows.map { Interval($0.source, $0.sourceKind, $0.fromMilliseconds, $0.toMilliseconds, $0.endedBy, via: $0.via) },
                    slates: rows.filter { $0.sourceKind == "slate" }.map { $0.camera?.name ?? "-" }, outages: outages)
    }

    /// `camera_removed` as `CameraHub.remove` writes it (no program time: it comes from the hub, not the program thread).
    static func removed(_ script: GeneratedHistory.Script, _ camera: String, wall: Int64) {
        script.add(.cameraRemoved, camera, wall: wall, ["by": "test", "reason": "its source closed", "backend": "test-pattern",
                                                        "identity": "test-pattern:\(camera.dropFirst(3))"])
    }

    /// The program's end: an event at 60 s of program time.
    static func end(_ script: GeneratedHistory.Script, at milliseconds: Int64 = 60_000) {
        script.add(.overlayOff, nil, program: milliseconds, ["overlay": "logo"])
    }

    static func start(_ script: GeneratedHistory.Script) {
        for camera in ["cam1", "cam2", "cam3"] { script.add(.cameraAdded, camera, wall: 0, ["backend": "test-pattern"]) }
        script.add(.switchProgram, "cam1", program: 0, ["from": "none", "reason": "first source"])
    }

    /// Removed on program with no backup: the camera's interval ends at the removal (`removed`), the slate
    /// follows until the operator's next cut. (Migration 6's view kept cam2 on air until that cut.)
    @Test func aRemovalOnProgramWithoutBackupEndsTheCameraAndTheSlateFollowsUntilTheNextCut() throws {
        let read = try Self.session { script in
            Self.start(script)
            script.add(.switchProgram, "cam2", program: 10_000, ["from": "cam1"])
            Self.removed(script, "cam2", wall: 20_000)
            script.add(.switchProgram, "cam1", program: 30_000, ["from": "cam2"])
            Self.end(script)
        }
        #expect(read.intervals == [
            Interval("cam1", "camera", 0, 10_000, "cut"),
            Interval("cam2", "camera", 10_000, 20_000, "removed"),
            Interval("slate", "slate", 20_000, 30_000, "cut"),
            Interval("cam1", "camera", 30_000, 60_000, "session end"),
        ], "\(read.intervals)")
        #expect(read.slates == ["cam2"], "the slate says which camera went")
        #expect(read.outages.isEmpty, "a removal is no loss: \(read.outages)")
    }

    /// Removed on program with a backup: the backup's switch ends the camera (`backup`), no slate, whichever
    /// of the hub's `camera_removed` and the program thread's `backup_taken` is written first. And such a
    /// backup is no backup of a later loss of the camera added again: that loss shows the slate. (Migration
    /// 6's view took the removal's `backup_taken` for that loss's, so the camera stayed on air to the end.)
    @Test func aRemovalWithABackupEndsAtTheBackupAndIsNoBackupOfALaterLoss() throws {
        let read = try Self.session { script in
            Self.start(script)
            script.add(.switchProgram, "cam2", program: 10_000, ["from": "cam1"])
            Self.removed(script, "cam2", wall: 20_000)
            script.add(.backupTaken, "cam2", program: 20_033, ["lost": "cam2", "backup": "cam1", "reason": "removed", "back": "manual"])
            script.add(.switchProgram, "cam1", program: 20_033, ["from": "cam2", "reason": "backup"])
            // Added again while cam1 is on program: nothing changes on air.
            script.add(.cameraAdded, "cam2", wall: 25_000, ["backend": "test-pattern"])
            script.add(.switchProgram, "cam2", program: 30_000, ["from": "cam1"])
            // Removed again: this time the program thread's events are written before the hub's.
            script.add(.backupTaken, "cam2", program: 35_000, ["lost": "cam2", "backup": "cam3", "reason": "removed", "back": "manual"])
            Self.removed(script, "cam2", wall: 35_000)
            script.add(.switchProgram, "cam3", program: 35_000, ["from": "cam2", "reason": "backup"])
            script.add(.cameraAdded, "cam2", wall: 40_000, ["backend": "test-pattern"])
            script.add(.switchProgram, "cam2", program: 45_000, ["from": "cam3"])
            // Lost on program with no backup live: the slate.
            script.add(.cameraLost, "cam2", wall: 50_000, ["reason": "silent", "silent_ms": "500"])
            script.add(.cameraReturned, "cam2", wall: 55_000, ["reason": "frames resumed"])
            Self.end(script)
        }
        #expect(read.intervals == [
            Interval("cam1", "camera", 0, 10_000, "cut"),
            Interval("cam2", "camera", 10_000, 20_033, "backup"),
            Interval("cam1", "camera", 20_033, 30_000, "cut"),
            Interval("cam2", "camera", 30_000, 35_000, "backup"),
            Interval("cam3", "camera", 35_000, 45_000, "cut"),
            Interval("cam2", "camera", 45_000, 50_000, "loss"),
            Interval("slate", "slate", 50_000, 55_000, "returned"),
            Interval("cam2", "camera", 55_000, 60_000, "session end"),
        ], "\(read.intervals)")
        #expect(read.outages == ["cam2 silent 50000-55000 5000 returned"], "\(read.outages)")
    }

    /// A camera removed while another is on program changes nothing on air, nor does its add again; its
    /// outage (lost before it was removed) ends at the removal. (Migration 4's view kept it lost until the
    /// session's end.)
    @Test func aRemovalOffProgramChangesNothingOnAirAndEndsTheCamerasOutage() throws {
        let read = try Self.session { script in
            Self.start(script)
            // A camera's first add written just after the switch it caused is no add of a removed camera.
            script.add(.cameraAdded, "cam1", wall: 1, ["backend": "test-pattern"])
            script.add(.cameraLost, "cam2", wall: 5_000, ["reason": "removed"])
            Self.removed(script, "cam2", wall: 10_000)
            Self.removed(script, "cam3", wall: 12_000)
            script.add(.cameraAdded, "cam2", wall: 15_000, ["backend": "test-pattern"])
            script.add(.switchProgram, "cam2", program: 20_000, ["from": "cam1"])
            Self.end(script)
        }
        #expect(read.intervals == [
            Interval("cam1", "camera", 0, 20_000, "cut"),
            Interval("cam2", "camera", 20_000, 60_000, "session end"),
        ], "\(read.intervals)")
        #expect(read.outages == ["cam2 removed 5000-never 5000 removed"], "\(read.outages)")
    }

    /// Lost on program (the slate), then removed: the slate goes on (no second one), the outage ends at the
    /// removal, and a late `camera_returned` (the hub writes none after a removal; a flap filter's held final
    /// state could come late) never brings it back: only the operator's next cut ends the slate. (Migration
    /// 6's view ended the slate at that return and put cam2 back on air; migration 4's outage ran to it.)
    @Test func aCameraLostOnProgramThenRemovedKeepsItsSlateUntilTheNextCut() throws {
        let read = try Self.session { script in
            Self.start(script)
            script.add(.switchProgram, "cam2", program: 10_000, ["from": "cam1"])
            script.add(.cameraLost, "cam2", wall: 20_000, ["reason": "removed"])
            Self.removed(script, "cam2", wall: 30_000)
            script.add(.cameraReturned, "cam2", wall: 35_000, ["reason": "reappeared"])
            script.add(.switchProgram, "cam1", program: 45_000, ["from": "cam2"])
            Self.end(script)
        }
        #expect(read.intervals == [
            Interval("cam1", "camera", 0, 10_000, "cut"),
            Interval("cam2", "camera", 10_000, 20_000, "loss"),
            Interval("slate", "slate", 20_000, 45_000, "cut"),
            Interval("cam1", "camera", 45_000, 60_000, "session end"),
        ], "\(read.intervals)")
        #expect(read.slates == ["cam2"])
        #expect(read.outages == ["cam2 removed 20000-never 10000 removed"], "\(read.outages)")
    }

    /// The camera added again under its name is a fresh camera: while its removal's slate is on program the
    /// switcher shows it at once (the program still names it), so the slate ends at its `camera_added`
    /// (`added`); a cut to it later is an interval of its own; it is lost and back like any camera; and added
    /// again after the operator cut away, only a switch puts it on air. (Migration 6's view kept cam2 on air
    /// through its removals.)
    @Test func aRemovedCameraAddedAgainIsAFreshCamera() throws {
        let read = try Self.session { script in
            Self.start(script)
            script.add(.switchProgram, "cam2", program: 10_000, ["from": "cam1"])
            Self.removed(script, "cam2", wall: 20_000)
            script.add(.cameraAdded, "cam2", wall: 25_000, ["backend": "test-pattern"])
            script.add(.switchProgram, "cam2", program: 30_000, ["from": "cam2"])
            script.add(.cameraLost, "cam2", wall: 40_000, ["reason": "silent", "silent_ms": "500"])
            script.add(.cameraReturned, "cam2", wall: 45_000, ["reason": "frames resumed"])
            Self.removed(script, "cam2", wall: 50_000)
            script.add(.switchProgram, "cam1", program: 55_000, ["from": "cam2"])
            script.add(.cameraAdded, "cam2", wall: 60_000, ["backend": "test-pattern"])
            script.add(.switchProgram, "cam2", program: 70_000, ["from": "cam1"])
            Self.end(script, at: 80_000)
        }
        #expect(read.intervals == [
            Interval("cam1", "camera", 0, 10_000, "cut"),
            Interval("cam2", "camera", 10_000, 20_000, "removed"),
            Interval("slate", "slate", 20_000, 25_000, "added"),
            Interval("cam2", "camera", 25_000, 30_000, "cut"),
            Interval("cam2", "camera", 30_000, 40_000, "loss"),
            Interval("slate", "slate", 40_000, 45_000, "returned"),
            Interval("cam2", "camera", 45_000, 50_000, "removed"),
            Interval("slate", "slate", 50_000, 55_000, "cut"),
            Interval("cam1", "camera", 55_000, 70_000, "cut"),
            Interval("cam2", "camera", 70_000, 80_000, "session end"),
        ], "\(read.intervals)")
        #expect(read.outages == ["cam2 silent 40000-45000 5000 returned"], "\(read.outages)")
    }
}
