import Foundation
import Testing
import Control
import StudioCore
import StudioSystem
@testable import StudioServer
import TestSupport

/// One time base (issue 32): a real `studio serve` node whose wall clock is shifted (`--inject-clock-offset`,
/// the machine's clock untouched) measures its offset against a switcher on loopback over the switcher's
/// HTTP API (`GET /api/v1/clock`), reports it in `status`, `cameras` and its history, and stamps each sent
/// picture with its capture time in the switcher's time base: the switcher's `capture_latency_ms` for
/// `pc2/cam1` is small and positive, not the node's 3 s. Without the shift, the offset is about 0.
@Suite(.serialized) struct NodeClockEndToEndTests {
    /// On loopback the round trip is well under a millisecond; the bound leaves room for a loaded CI machine.
    static let allowedErrorMilliseconds = 50.0

    @Test(arguments: [3000, 0])
    func aNodesClockIsMeasuredAndItsPicturesCarryTheSwitchersTime(shift: Int) throws {
        let rig = try NodeTallyEndToEndTests.Rig("node-clock-\(shift)", nodeArguments: shift == 0 ? [] : ["--inject-clock-offset", "\(shift)"])
        let (client, node, nodeClient) = (rig.client, rig.node, rig.nodeClient)

        // The node: measured, its offset the shift's opposite (its clock runs `shift` ahead).
        func nodeClock(_ command: String) -> JSONValue? { (try? nodeClient.request(command))?["switcher_clock"] }
        #expect(waitUntil(seconds: 10, every: 0.1) { nodeClock("cameras")?["measured"]?.boolValue == true },
                "\(String(describing: nodeClock("cameras"))); node: \(node.server?.errorText() ?? "")")
        let offset = try #require(nodeClock("cameras")?["offset_ms"]?.doubleValue)
        let rtt = try #require(nodeClock("status")?["rtt_ms"]?.doubleValue)
        print("node clock shifted \(shift) ms: measured offset \(offset) ms (error \(offset + Double(shift)) ms), rtt \(rtt) ms")
        #expect(abs(offset - Double(-shift)) < Self.allowedErrorMilliseconds, "offset \(offset) ms for a shift of \(shift) ms")
        #expect(rtt >= 0 && rtt < Self.allowedErrorMilliseconds)
        // Said in the CLI's words too.
        let text = try node.run(["status", "--socket", node.socket]).output
        let said = text.split(separator: "\n").first { $0.contains("clock against the switcher: offset ") }
        let saidOffset = said.flatMap { $0.split(separator: " ").first { $0.hasPrefix("+") || $0.hasPrefix("-") } }.flatMap { Double($0) }
        #expect(saidOffset.map { abs($0 - Double(-shift)) < Self.allowedErrorMilliseconds } == true, "\(text)")

        // The switcher: pc2/cam1's pictures carry their capture time in its base (the node's offset added).
        func captureTime() -> JSONValue? {
            let cameras = (try? client.request("cameras"))?["cameras"]?.arrayValue ?? []
            return cameras.first { $0["name"]?.stringValue == "pc2/cam1" }?["network"]?["capture_time"]
        }
        #expect(waitUntil(seconds: 10, every: 0.1) { captureTime()?["node_offset_measured"]?.boolValue == true }, "\(String(describing: captureTime()))")
        let timing = try #require(captureTime())
        let latency = try #require(timing["capture_latency_ms"]?.doubleValue), reported = try #require(timing["node_offset_ms"]?.doubleValue)
        print("pc2/cam1 on the switcher: captured \(latency) ms before arrival, node offset \(reported) ms")
        #expect(latency > 0 && latency < 1500, "capture_latency_ms \(latency) with the node's clock \(shift) ms ahead")
        #expect(abs(reported - Double(-shift)) < Self.allowedErrorMilliseconds)
        #expect((timing["pictures_stamped"]?.intValue ?? 0) > 0)

        // A cut to pc2/cam1: its `switch` event says when the node took the picture that went on program
        // (the frame the operator saw) on the switcher's clock: before the cut was answered, by the hop and
        // the jitter buffer, whatever the node's own clock says (3 s ahead: 3 s in the future uncorrected).
        _ = try client.request("switch", arguments: ["source": "pc2/cam2"])
        let asked = WallClock.system.now()
        _ = try client.request("switch", arguments: ["source": "pc2/cam1"])
        let answered = WallClock.system.now()
        let database = rig.scratch.directory.appendingPathComponent("studio.db").path
        func cut() -> JSONValue? {
            let log = (try? JSONValue(parsing: (try? node.run(["log", "--json", "--db", database]).output) ?? "")) ?? .null
            return EndToEndTests.events(log, kind: "switch").last { $0["camera"]?.stringValue == "pc2/cam1" }
        }
        #expect(waitUntil(seconds: 5, every: 0.2) { cut()?["details"]?["captured_at_us"] != nil }, "\(String(describing: cut()))")
        let taken = try #require(cut()?["details"]?["captured_at_us"]?.stringValue.flatMap { Int64($0) })
        print("the cut to pc2/cam1 showed a picture taken \(Double(answered - taken) / 1000) ms before the cut was answered")
        #expect(taken > asked - 2_000_000 && taken < answered, "captured_at_us \(taken): asked at \(asked), answered at \(answered)")

        // The node's history says when it was first measured.
        #expect(waitUntil(seconds: 5, every: 0.2) {
            let log = (try? JSONValue(parsing: (try? node.run(["log", "--json", "--db", node.database]).output) ?? "")) ?? .null
            return EndToEndTests.events(log, kind: "clock_offset").contains { $0["details"]?["first"]?.stringValue == "yes" }
        }, "no clock_offset event in the node's history")
    }

    /// The node's ISO files are timed in the switcher's base: their `STUDIO_ORIGIN_US` tag (read by the
    /// real ffprobe) is the node's program origin on the real clock (the switcher's: same machine), near
    /// the node's `started_at` (the machine's clock), not 3 s after it as the node's own clock would say.
    @Test func aNodesIsoFilesCarryTheSwitchersTimeBase() throws {
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("node-clock-iso-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: record, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: record) }
        let rig = try NodeTallyEndToEndTests.Rig("node-clock-iso", nodeArguments: ["--inject-clock-offset", "3000", "--record", record.path])
        let status = try rig.nodeClient.request("status")
        let started = try #require(status["started_at"]?.stringValue.flatMap(ISO8601Time.parse))
        func isoFile() -> String? {
            ((try? FileManager.default.contentsOfDirectory(atPath: record.path)) ?? []).filter { $0.hasSuffix("-cam1.mkv") }.first
        }
        #expect(waitUntil(seconds: 10, every: 0.1) { isoFile() != nil }, "\((try? FileManager.default.contentsOfDirectory(atPath: record.path)) ?? [])")
        let file = record.appendingPathComponent(try #require(isoFile())).path
        // The tags are in the header: readable while the file is still being written.
        var tags: JSONValue = .null
        #expect(waitUntil(seconds: 10, every: 0.2) {
            let probe = try? MediaProbe.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "json", file])
            tags = (try? JSONValue(parsing: String(decoding: probe ?? Data(), as: UTF8.self)))?["format"]?["tags"] ?? .null
            return tags["STUDIO_ORIGIN_US"] != nil
        }, "\(tags)")
        #expect(tags["STUDIO_TIME_BASE"]?.stringValue == "switcher", "\(tags)")
        let origin = try #require(tags["STUDIO_ORIGIN_US"]?.stringValue.flatMap { Double($0) }) / 1e6
        let sinceStart = origin - started.timeIntervalSince1970
        print("node ISO origin \(sinceStart) s after the node's started_at (machine clock)")
        #expect(sinceStart > -1 && sinceStart < 1.5, "the ISO's origin is \(sinceStart) s from the node's start (its clock runs 3 s ahead)")
        // Its timecode: the time of day (the machine's zone) of its first frame, origin + its first packet's time, at 30 fps.
        let first = try #require(try MediaProbe.videoFrames(URL(fileURLWithPath: file)).first?.ptsMilliseconds)
        let expected = Timecode.smpte(Timecode.frameOfDay(microseconds: Int64(origin * 1e6) + Int64(first * 1000), rate: Rational(30), timeZone: .current),
                                      rate: Rational(30))
        #expect(tags["TIMECODE"]?.stringValue == expected, "\(tags), first packet at \(first) ms")
    }
}

