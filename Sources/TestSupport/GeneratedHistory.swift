import Foundation
import EventStore
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// A history of several sessions written through the real `EventStore` API (and one real crash: the
/// `eventstore-writer` helper killed with SIGKILL), for the tests of the history's queries, views and
/// commands. Program events carry wall times that run with their program time, as a server's do.
///
/// 1. `stopped`, now: cam1 on program, cut to cam2, a mix back to cam1, cam1 lost without a backup (the
///    slate) and back, lost again with cam3 taking over as backup, cam1 back, a cut to the scene `pip`, the
///    program ending at 00:01:00.
/// 2. `error`, three days ago: cam2, an output outage of `main` with two reconnect attempts, cam4 lost and
///    back while not on program, a cut to cam4.
/// 3. `crashed`: the writer's session (switches of cam1..cam3), closed by `recoverOrphanedSessions`.
/// 4. open, an hour ago: cam1, cam2 lost while not on program, a cut to cam3 (still on air).
public struct GeneratedHistory: Sendable {
    public struct Interval: Sendable, Equatable, CustomStringConvertible {
        public var source: String
        public var sourceKind: String
        public var from: Int64
        public var to: Int64
        public var endedBy: String?
        public var via: String?
        public init(_ source: String, _ sourceKind: String, _ from: Int64, _ to: Int64, _ endedBy: String?, via: String? = nil) {
            (self.source, self.sourceKind, self.from, self.to, self.endedBy, self.via) = (source, sourceKind, from, to, endedBy, via)
        }
        public var description: String { "\(source)(\(sourceKind)) \(from)-\(to) \(endedBy ?? "on air")\(via.map { " via \($0)" } ?? "")" }
    }

    public let path: String
    /// The four sessions, in the order above.
    public let stopped: Int64, failed: Int64, crashed: Int64, open: Int64
    /// Wall time (ms since the epoch) of program time 0 in sessions 1, 2 and 4.
    public let stoppedBase: Int64, failedBase: Int64, openBase: Int64
    /// Session 1's program, interval by interval, as the events above make it.
    public static let stoppedIntervals: [Interval] = [
        Interval("cam1", "camera", 0, 10_000, "cut"),
        Interval("cam2", "camera", 10_000, 20_000, "transition", via: "mix"),
        Interval("cam1", "camera", 20_000, 25_000, "loss"),
        Interval("slate", "slate", 25_000, 30_000, "returned"),
        Interval("cam1", "camera", 30_000, 40_000, "backup"),
        Interval("cam3", "camera", 40_000, 50_000, "cut"),
        Interval("pip", "scene", 50_000, 60_000, "session end"),
    ]

    /// With `recordings`, session 1's recording files (rows and `recording_started`/`recording_stopped`
    /// events; the files themselves are not written): the program's and each camera's ISO, in
    /// `DIR/recordings/` beside the database, each with the program time of its first frame (cam1's ISO got
    /// its first frame one frame late) and all of them ending with the program's last frame, 59 966 ms.
    public static let stoppedRecordings: [(camera: String?, firstProgramMilliseconds: Int64)] = [
        (nil, 0), ("cam1", 33), ("cam2", 0), ("cam3", 0),
    ]

    /// The path of session `session`'s recording of `camera` (nil: the program) for a database at `path`.
    public static func recordingPath(database path: String, session: Int64, camera: String?) -> String {
        ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("recordings/session-\(session)-\(camera ?? "program").mkv")
    }

    /// Writes the history to a new database at `path`; `writer` is the `eventstore-writer` executable.
    public static func make(at path: String, writer: String, recordings: Bool = false) throws -> GeneratedHistory {
        let now = Int64(Date().timeIntervalSince1970) * 1000
        var store = try EventStore(path: path)
        for (number, name) in [(1, "cam1"), (2, "cam2"), (3, "cam3")] {
            _ = try store.cameraName(forIdentity: "test-pattern:\(number)", backend: .testPattern, displayName: "Test pattern \(number)",
                                     pinnedName: CameraID(name))
        }

        // 1. stopped.
        let stoppedBase = now
        let stopped = try store.startSession(configSnapshot: "{}")
        let first = Script(store: store, base: stoppedBase)
        for camera in ["cam1", "cam2", "cam3"] { first.add(.cameraAdded, camera, wall: 0, ["backend": "test-pattern"]) }
        if recordings {
            for (camera, from) in stoppedRecordings {
                let file = recordingPath(database: path, session: stopped, camera: camera)
                first.add(.recordingStarted, nil, program: from, ["output": camera.map { "iso-\($0)" } ?? "record", "url": file, "path": file,
                                                                  "first_program_ms": String(from)])
                store.recordingStarted(cameraID: camera.map { CameraID($0) }, path: file, at: Date(timeIntervalSince1970: Double(stoppedBase + from) / 1000))
            }
        }
        first.add(.switchProgram, "cam1", program: 0, ["from": "none", "reason": "first source"])
        first.add(.preview, "cam2", program: 5_000, ["preview": "cam2", "from": "none"])
        first.add(.switchProgram, "cam2", program: 10_000, ["from": "cam1"])
        // As the switcher writes a transition: its first frame (571) at transition_started, its 30th and last
        // (600) at transition_ended and the switch, so the frames shown are one more than the frames between.
        first.add(.transitionStarted, "cam1", program: 19_033, ["kind": "mix", "frames": "30", "from": "cam2", "to": "cam1"])
        first.add(.transitionEnded, "cam1", program: 20_000, ["kind": "mix", "frames": "30", "shown": "30", "from": "cam2", "to": "cam1"])
        first.add(.switchProgram, "cam1", program: 20_000, ["from": "cam2", "via": "mix"])
        first.add(.cameraLost, "cam1", wall: 25_000, ["reason": "removed"])
        first.add(.cameraReturned, "cam1", wall: 30_000, ["reason": "reappeared"])
        first.add(.cameraLost, "cam1", wall: 40_000, ["reason": "silent", "silent_ms": "500"])
        first.add(.backupTaken, "cam1", program: 40_000, ["lost": "cam1", "backup": "cam3", "reason": "silent", "back": "manual"])
        first.add(.switchProgram, "cam3", program: 40_000, ["from": "cam1", "reason": "backup"])
        first.add(.cameraReturned, "cam1", wall: 45_000, ["reason": "frames resumed"])
        first.add(.switchProgram, nil, program: 50_000, ["from": "cam3", "scene": "pip"])
        first.add(.framesDropped, nil, wall: 55_000, ["stage": "video", "dropped": "3", "dropped_total": "3"])
        first.add(.overlayOff, nil, program: 60_000, ["overlay": "logo"])
        if recordings {
            for (camera, _) in stoppedRecordings {
                let file = recordingPath(database: path, session: stopped, camera: camera)
                first.add(.recordingStopped, nil, program: 59_966, ["output": camera.map { "iso-\($0)" } ?? "record", "url": file, "path": file,
                                                                    "reason": "stopped", "last_program_ms": "59966", "bytes": "1000000"])
                store.recordingStopped(path: file, bytes: 1_000_000, at: Date(timeIntervalSince1970: Double(stoppedBase + 60_000) / 1000))
            }
        }
        try store.endSession(reason: "stopped")

        // 2. error, three days ago.
        let failedBase = now - 3 * 86_400_000
        let failed = try store.startSession(configSnapshot: "{}")
        let second = Script(store: store, base: failedBase)
        for camera in ["cam2", "cam4"] { second.add(.cameraAdded, camera, wall: 0, ["backend": "test-pattern"]) }
        second.add(.switchProgram, "cam2", program: 0, ["from": "none", "reason": "first source"])
        second.add(.outputConnected, nil, program: 100, ["output": "main", "url": "rtmp://127.0.0.1/live/****", "first_program_ms": "100"])
        second.add(.outputDisconnected, nil, program: 5_000, ["output": "main", "url": "rtmp://127.0.0.1/live/****", "error": "Broken pipe"])
        second.add(.outputReconnectAttempt, nil, wall: 6_000, ["output": "main", "attempt": "1", "delay_ms": "1000"])
        second.add(.cameraLost, "cam4", wall: 7_000, ["reason": "silent", "silent_ms": "500"])
        second.add(.outputReconnectAttempt, nil, wall: 7_500, ["output": "main", "attempt": "2", "delay_ms": "2000"])
        second.add(.cameraReturned, "cam4", wall: 8_000, ["reason": "frames resumed"])
        second.add(.outputReconnected, nil, program: 9_000, ["output": "main", "url": "rtmp://127.0.0.1/live/****", "first_program_ms": "9000"])
        second.add(.switchProgram, "cam4", program: 12_000, ["from": "cam2"])
        second.add(.error, nil, wall: 15_000, ["stage": "video", "error": "encoder failed"])
        try store.endSession(reason: "error")
        store.close()

        // 3. crashed: the writer's session, killed, then found by the next open.
        let child = try ChildProcess(executable: writer, arguments: [path, "--idle-after", "6"])
        let deadline = Date().addingTimeInterval(30)
        while !child.outputText().contains("idle") && Date() < deadline && !child.hasExited { usleep(10_000) }
        guard child.outputText().contains("idle"),
              let line = child.outputText().split(separator: "\n").first(where: { $0.hasPrefix("session ") }),
              let crashed = Int64(line.dropFirst("session ".count)) else {
            child.terminate(signal: SIGKILL)
            throw HistoryError("eventstore-writer did not start: \(child.errorText())")
        }
        child.terminate(signal: SIGKILL)
        _ = child.wait(timeout: 10)
        store = try EventStore(path: path)
        guard try store.recoverOrphanedSessions() == [crashed] else { throw HistoryError("the writer's session was not found crashed") }

        // 4. open, an hour ago (this process stays alive: nobody recovers it).
        let openBase = now - 3_600_000
        let open = try store.startSession(configSnapshot: "{}")
        let fourth = Script(store: store, base: openBase)
        fourth.add(.switchProgram, "cam1", program: 0, ["from": "none", "reason": "first source"])
        fourth.add(.cameraLost, "cam2", wall: 1_000, ["reason": "removed"])
        fourth.add(.switchProgram, "cam3", program: 3_000, ["from": "cam1"])
        store.flush()
        store.close()
        return GeneratedHistory(path: path, stopped: stopped, failed: failed, crashed: crashed, open: open,
                                stoppedBase: stoppedBase, failedBase: failedBase, openBase: openBase)
    }

    /// Records events at `base` + their program (or wall) offset: a program event's wall time runs with its
    /// program time, as a server's does (also for tests that write a session of their own).
    public final class Script: Sendable {
        let store: EventStore
        let base: Int64
        public init(store: EventStore, base: Int64) { (self.store, self.base) = (store, base) }

        public func add(_ kind: EventKind, _ camera: String?, program: Int64, _ details: [String: String] = [:]) {
            record(kind, camera, wall: program, program: program, details)
        }

        public func add(_ kind: EventKind, _ camera: String?, wall: Int64, _ details: [String: String] = [:]) {
            record(kind, camera, wall: wall, program: nil, details)
        }

        private func record(_ kind: EventKind, _ camera: String?, wall: Int64, program: Int64?, _ details: [String: String]) {
            store.record(StudioEvent(kind: kind, camera: camera.map { CameraID($0) },
                                     wallTime: Date(timeIntervalSince1970: Double(base + wall) / 1000),
                                     programTime: program.map { .milliseconds($0) }, details: details))
        }
    }

    public struct HistoryError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// `eventstore-writer` next to the running test binary (SwiftPM builds it with the tests).
    public static var writerExecutable: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return ((exe as NSString).deletingLastPathComponent as NSString).appendingPathComponent("eventstore-writer")
    }
}
