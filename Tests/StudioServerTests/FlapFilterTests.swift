import Foundation
import Testing
import TestSupport
import StudioCore
import StudioSystem
import EventStore
@testable import StudioServer

/// The server's flap filter in front of a real event store, time moved by a `ManualClock`: a flapping camera's
/// history stays small and `camera_outages` stays right; and what a busy show with a flapping camera costs the
/// file in an hour (docs/history.md, docs/schema.md).
@Suite struct FlapFilterTests {
    static let second: UInt64 = 1_000_000_000
    static let base = Date(timeIntervalSince1970: 1_714_586_400)

    /// A store in a fresh directory with a session open, the filter before it, and the clock they share.
    final class Bench {
        let directory: URL
        let path: String
        let store: EventStore
        let clock = ManualClock(start: 1_000_000_000)
        let filter: FlapFilter
        let origin: UInt64

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-flaps-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("studio.db").path
            store = try EventStore(path: path)
            _ = try store.startSession(configSnapshot: "{}")
            filter = FlapFilter(clock: clock)
            origin = clock.now()
        }

        deinit {
            store.close()
            try? FileManager.default.removeItem(at: directory)
        }

        /// Emits `kind` about `camera` at `seconds` into the show (the clock moved there, the wall time to match).
        func emit(_ kind: EventKind, _ camera: String?, at seconds: Double, _ details: [String: String] = [:]) {
            clock.advance(to: origin + UInt64(seconds * 1e9))
            let event = StudioEvent(kind: kind, camera: camera.map { CameraID($0) }, wallTime: Self.wall(seconds), details: details)
            for passed in filter.pass(event) { store.record(passed) }
        }

        /// What the filter has due at `seconds` (the server's flap thread).
        func tick(at seconds: Double) {
            clock.advance(to: origin + UInt64(seconds * 1e9))
            for passed in filter.due() { store.record(passed) }
        }

        static func wall(_ seconds: Double) -> Date { FlapFilterTests.base.addingTimeInterval(seconds) }
        static func wallMilliseconds(_ seconds: Double) -> Int64 { Int64((wall(seconds).timeIntervalSince1970 * 1000).rounded()) }

        func sql(_ query: String) throws -> [[String]] {
            store.flush()
            return try ReportCLITests.sqlite3(path, query).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        }
    }

    @Test func aFlappingCameraIsOneOutageFromItsFirstLossToItsFinalReturn() throws {
        let bench = try Bench()
        // Three ordinary outages of cam2 (within the allowance): written as they come.
        for (lost, back) in [(0.0, 2.0), (10.0, 12.0), (20.0, 22.0)] {
            bench.emit(.cameraLost, "cam2", at: lost, ["reason": "removed"])
            bench.emit(.cameraReturned, "cam2", at: back, ["reason": "reappeared"])
        }
        // Then its cable goes bad: lost and back ten times a second for 90 s, from 30 s; back at last.
        var t = 30.0
        var transitions = 0
        while t < 120 {
            bench.emit(.cameraLost, "cam2", at: t, ["reason": "removed"])
            bench.emit(.cameraReturned, "cam2", at: t + 0.05, ["reason": "reappeared"])
            transitions += 2
            t += 0.1
            if transitions % 200 == 0 { bench.store.flush() }
        }
        let finalReturn = t - 0.1 + 0.05
        // cam3 flaps and stays lost: its loss is written, no return.
        for i in 0..<40 { bench.emit(i % 2 == 0 ? .cameraLost : .cameraReturned, "cam3", at: 40 + Double(i) * 0.1) }
        bench.emit(.cameraLost, "cam3", at: 44)
        // Quiet: the episodes end once the flap thread looks 10 s later.
        bench.tick(at: finalReturn + 5)
        #expect(try bench.sql("SELECT count(*) FROM events WHERE camera = 'cam2' AND kind = 'camera_flapping' AND json_extract(details, '$.ended') = 'true'") == [["0"]])
        bench.tick(at: finalReturn + 10.5)

        let outages = try bench.sql("SELECT camera, lost_at, coalesce(back_at, '') FROM camera_outages ORDER BY camera, lost_at")
        let ms = Bench.wallMilliseconds
        #expect(outages.filter { $0[0] == "cam2" } == [
            ["cam2", "\(ms(0))", "\(ms(2))"], ["cam2", "\(ms(10))", "\(ms(12))"], ["cam2", "\(ms(20))", "\(ms(22))"],
            ["cam2", "\(ms(30))", "\(ms(finalReturn))"],
        ], "\(outages)")
        // cam3: within the allowance 6 transitions, then the episode's first loss, and it stays lost.
        let cam3 = outages.filter { $0[0] == "cam3" }
        #expect(cam3.count == 4 && cam3.last == ["cam3", "\(ms(40.6))", ""], "\(cam3)")

        // The summaries count every transition past the allowance; a long episode has one a minute.
        let summaries = try bench.sql("""
            SELECT camera, json_extract(details, '$.lost'), json_extract(details, '$.returned'), json_extract(details, '$.state'),
                   json_extract(details, '$.ended') FROM events WHERE kind = 'camera_flapping' ORDER BY id
            """)
        let cam2 = summaries.filter { $0[0] == "cam2" }
        #expect(cam2.count == 2 && cam2.first?[4] == "false" && cam2.last?[3] == "live" && cam2.last?[4] == "true", "\(cam2)")
        #expect(cam2.reduce(0) { $0 + Int($1[1])! + Int($1[2])! } == transitions, "every flap counted")
        #expect(summaries.filter { $0[0] == "cam3" }.map { $0[3] } == ["lost"])
        // 1,800 transitions of cam2 cost 6 + 1 + 1 events and 2 summaries.
        let cam2Rows = try bench.sql("SELECT count(*) FROM events WHERE camera = 'cam2'")
        #expect(cam2Rows == [["10"]], "\(cam2Rows)")
    }

    /// A busy show's hour (docs/schema.md, "How fast the file grows"): a cut a second, a camera lost and back
    /// every 20 s, the RTMP output away 10 s of every 30 s, drop reports at their bound, and one camera flapping
    /// ten times a second the whole hour; the file's growth measured (page count), the flapping filtered.
    @Test func aBusyHourWithAFlappingCameraStaysUnderAMegabyte() throws {
        let bench = try Bench()
        let before = try Int(bench.sql("PRAGMA page_count")[0][0])! * Int(bench.sql("PRAGMA page_size")[0][0])!
        let cameras = ["cam1", "cam2", "cam3"]
        var tick = 0
        for tenth in 0..<36_000 {
            let t = Double(tenth) / 10
            // cam4's cable: lost and back ten times a second, all hour.
            bench.emit(.cameraLost, "cam4", at: t, ["reason": "removed", "backend": "v4l2", "identity": "usb-0000:00:14.0-4"])
            bench.emit(.cameraReturned, "cam4", at: t + 0.05, ["reason": "reappeared", "backend": "v4l2", "identity": "usb-0000:00:14.0-4"])
            guard tenth % 10 == 0 else { continue }
            let second = tenth / 10
            let camera = cameras[second % 3], previous = cameras[(second + 2) % 3]
            bench.emit(.switchProgram, camera, at: t, second % 10 == 0 ? ["from": previous, "via": "mix"] : ["from": previous])
            if second % 20 == 5 { bench.emit(.cameraLost, "cam3", at: t, ["reason": "silent", "silent_ms": "500"]) }
            if second % 20 == 8 { bench.emit(.cameraReturned, "cam3", at: t, ["reason": "frames resumed"]) }
            let url = ["output": "main", "url": "rtmp://127.0.0.1/live/****"]
            if second % 30 == 0 { bench.emit(.outputDisconnected, nil, at: t, url.merging(["error": "Broken pipe"]) { a, _ in a }) }
            if second % 30 == 1 || second % 30 == 3 || second % 30 == 7 {
                bench.emit(.outputReconnectAttempt, nil, at: t, url.merging(["attempt": "1", "delay_ms": "1000"]) { a, _ in a })
            }
            if second % 30 == 10 { bench.emit(.outputReconnected, nil, at: t, url.merging(["first_program_ms": "\(second * 1000)"]) { a, _ in a }) }
            if second % 5 == 0 {
                bench.emit(.framesDropped, nil, at: t, ["stage": "video", "reason": "encoder queue full", "dropped": "3", "total": "\(second)"])
            }
            bench.tick(at: t)
            tick += 1
            if tick % 200 == 0 { bench.store.flush() }
        }
        bench.store.flush()
        _ = try bench.sql("PRAGMA wal_checkpoint(TRUNCATE)")
        let after = try Int(bench.sql("PRAGMA page_count")[0][0])! * Int(bench.sql("PRAGMA page_size")[0][0])!
        let events = try Int(bench.sql("SELECT count(*) FROM events")[0][0])!
        let flapping = try Int(bench.sql("SELECT count(*) FROM events WHERE camera = 'cam4'")[0][0])!
        let bytes = after - before
        print("FlapFilterTests: a busy hour with a flapping camera: \(events) events, \(flapping) of them about cam4 (72,000 transitions), \(bytes) bytes")
        #expect(flapping <= 6 + 1 + 60 + 1, "the flapping camera's events: \(flapping)")
        #expect(bytes < 1_000_000, "\(bytes) bytes for the hour")
    }
}
