import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Outputs added, stopped, started and removed while on air: a second real nginx-rtmp, the program's
/// recordings over HTTP, and an SRT listener (the ffmpeg CLI) receiving MPEG-TS.
@Suite(.serialized) struct OutputsEndToEndTests {
    static func outputs(_ studio: StudioHarness) -> [JSONValue] { (try? studio.json(["outputs"]))?["outputs"]?.arrayValue ?? [] }
    static func output(_ studio: StudioHarness, _ name: String) -> JSONValue? {
        outputs(studio).first { $0["name"]?.stringValue == name }
    }

    /// A config whose keyframes are 10 s apart: an output added mid-show that starts within a second
    /// did so on a keyframe asked for, not on the encoder's next scheduled one.
    static func sparseKeyframes(_ studio: StudioHarness) throws -> String {
        let path = studio.directory.appendingPathComponent("studio.yaml").path
        try "video:\n  keyframe_interval: 10\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aSecondRTMPServerReceivesFromTheNextKeyframeWhileTheFirstLosesNothing() throws {
        let first = try NginxRTMP(), second = try NginxRTMP()
        try first.start()
        defer { first.stop() }
        try second.start()
        defer { second.stop() }
        let studio = try StudioHarness()
        try studio.serve(["--config", try Self.sparseKeyframes(studio), "--cameras", "1", "--rtmp", first.url(stream: "firstkey1")]
                         + EndToEndTests.smallProgram)
        #expect(waitUntil(seconds: 15, every: 0.1) { Self.output(studio, "rtmp1")?["state"]?.stringValue == "connected" })
        #expect(studio.waitForProgramFrames(30))

        // Refused, with the reason, and nothing added: a name taken, a scheme no output kind takes, a URL
        // without a host, a recording on a server that records nowhere.
        let duplicate = try studio.run(["output", "add", "rtmp1", second.url(stream: "x1234"), "--socket", studio.socket])
        #expect(duplicate.status == 2 && duplicate.error.contains("an output named rtmp1 exists already"), "\(duplicate)")
        let scheme = try studio.run(["output", "add", "web", "http://127.0.0.1/live/key", "--socket", studio.socket])
        #expect(scheme.status == 2 && scheme.error.contains("expected an rtmp://, rtmps:// or srt:// URL"), "\(scheme)")
        let hostless = try studio.run(["output", "add", "bad", "rtmp:///live/key", "--socket", studio.socket])
        #expect(hostless.status == 2 && hostless.error.contains("no host"), "\(hostless)")
        let nowhere = try studio.run(["output", "add", "rec", "--record", "--socket", studio.socket])
        #expect(nowhere.status == 2 && nowhere.error.contains("records nowhere"), "\(nowhere)")
        let unknown = try studio.run(["output", "stop", "nosuch", "--socket", studio.socket])
        #expect(unknown.status == 2 && unknown.error.contains("no output named nosuch (outputs: rtmp1)"), "\(unknown)")
        #expect(Self.outputs(studio).count == 1)

        // What the first output dropped before its first keyframe at the start; nothing more from here on.
        let before = try #require(Self.output(studio, "rtmp1"))
        let addedAt = try #require(try studio.status()["program"]?["program_ms"]?.intValue)
        let added = try studio.run(["output", "add", "backup", second.url(stream: "secondkey2"), "--socket", studio.socket])
        #expect(added.status == 0 && added.output.hasPrefix("added backup rtmp://127.0.0.1:\(second.port)/live/**** (rtmp, added by socket)"),
                "\(added)")
        #expect(waitUntil(seconds: 15, every: 0.1) { Self.output(studio, "backup")?["state"]?.stringValue == "connected" })
        #expect(studio.waitForProgramFrames(60))
        let listed = try studio.json(["outputs"])
        #expect(listed["limit"]?.intValue == 16 && listed["outputs"]?.arrayValue?.count == 2)
        let backup = try #require(Self.output(studio, "backup"))
        #expect(backup["kind"] == "rtmp" && backup["origin"] == "added" && backup["added_by"] == "socket")
        #expect(Self.output(studio, "rtmp1")?["origin"] == "config" && Self.output(studio, "rtmp1")?["added_by"] == .null)
        #expect(!listed.jsonText.contains("secondkey2") && !listed.jsonText.contains("firstkey1"))

        let removed = try studio.run(["output", "remove", "backup", "--socket", studio.socket])
        #expect(removed.status == 0 && removed.output.hasPrefix("removed backup"), "\(removed)")
        #expect(Self.outputs(studio).map { $0["name"]?.stringValue } == ["rtmp1"])
        #expect(studio.waitForProgramFrames(15))
        let firstOutput = try #require(Self.output(studio, "rtmp1"))
        #expect(firstOutput["state"] == "connected" && firstOutput["dropped_video"] == before["dropped_video"]
                && firstOutput["dropped_audio"] == before["dropped_audio"] && firstOutput["reconnects"]?.intValue == 0, "\(before) -> \(firstOutput)")
        let lateTicks = try studio.status()["program"]?["late_ticks"]?.intValue ?? -1
        #expect(studio.stopServer() == .exited(0))

        // The second server got the program from a keyframe asked for at once (the next scheduled one was
        // up to 10 s away), and a clean end when it was removed.
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let connected = EndToEndTests.events(log, kind: "output_connected").filter { $0["details"]?["output"] == "backup" }
        let startedAt = try #require(Int(connected.first?["details"]?["first_program_ms"]?.stringValue ?? ""))
        #expect(startedAt - addedAt < 2000, "the added output started \(startedAt - addedAt) ms after it was added")
        let secondFile = try #require(second.recordings().first)
        let secondProbe = try MediaProbe.probe(secondFile)
        #expect(secondProbe.videoPackets.first?.isKeyframe == true)
        #expect(secondProbe.videoPackets.count >= 45 && secondProbe.audio?.codecName == "aac", "\(secondProbe.videoPackets.count) frames")
        #expect(try MediaProbe.decodeCheck(secondFile).clean)

        // The first server's stream went on through the add and the remove without a gap: every program
        // tick is in it (unless the machine missed ticks, which the program counts).
        let firstDTS = try MediaProbe.probe(try #require(first.recordings().first)).videoPackets.compactMap(\.dtsMilliseconds)
        let gaps = zip(firstDTS, firstDTS.dropFirst()).filter { $1 - $0 > 1000.0 / 30 * 1.5 }
        #expect(gaps.isEmpty || lateTicks > 0, "gaps in the first output: \(gaps.prefix(5)) with \(lateTicks) late ticks")

        // The history says who added and removed what, without the stream key.
        let addedEvent = try #require(EndToEndTests.events(log, kind: "output_added").first)
        #expect(addedEvent["details"]?["output"] == "backup" && addedEvent["details"]?["by"] == "socket"
                && addedEvent["details"]?["kind"] == "rtmp")
        #expect(EndToEndTests.events(log, kind: "output_removed").first?["details"]?["by"] == "socket")
        #expect(!log.jsonText.contains("secondkey2"))
    }

    @Test func recordingsAreAddedStoppedStartedAndRemovedOverHTTP() throws {
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        let directory = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--cameras", "1", "--record", directory.path, "--no-iso", "--http", "127.0.0.1:\(port)"] + EndToEndTests.smallProgram)
        func post(_ path: String, _ body: String = "") throws -> HTTPTestClient.Response {
            try HTTPTestClient.fetch(port: port, "POST", path, body: Array(body.utf8))
        }
        let added = try post("/api/v1/outputs/clip/add", "{\"record\": true}")
        #expect(added.status == 200, "\(added)")
        let view = try JSONValue(parsing: added.body)
        #expect(view["action"] == "add" && view["output"]?["kind"] == "file" && view["output"]?["added_by"] == "http", "\(view)")
        let firstTake = try #require(view["output"]?["url"]?.stringValue)
        #expect(firstTake.hasSuffix("-output-clip.mkv"), "\(firstTake)")
        #expect(waitUntil(seconds: 15, every: 0.1) { (Self.output(studio, "clip")?["bytes_sent"]?.intValue ?? 0) > 10_000 })
        #expect(studio.waitForProgramFrames(30))

        let stopped = try post("/api/v1/outputs/clip/stop")
        let stoppedView = try JSONValue(parsing: stopped.body)
        #expect(stopped.status == 200 && stoppedView["output"]?["state"] == "stopped", "\(stopped)")
        #expect(try post("/api/v1/outputs/clip/stop").status == 400, "stopped already")
        let listed = try JSONValue(parsing: try HTTPTestClient.fetch(port: port, "GET", "/api/v1/outputs").body)
        #expect(listed["outputs"]?.arrayValue?.map { $0["name"]?.stringValue } == ["recording", "clip"])

        let started = try post("/api/v1/outputs/clip/start")
        #expect(started.status == 200, "\(started)")
        let secondTake = try #require((try JSONValue(parsing: started.body))["output"]?["url"]?.stringValue)
        #expect(secondTake.hasSuffix("-output-clip-take2.mkv"), "a new file, the first one kept: \(secondTake)")
        #expect(waitUntil(seconds: 15, every: 0.1) { (Self.output(studio, "clip")?["bytes_sent"]?.intValue ?? 0) > 10_000 })
        #expect(studio.waitForProgramFrames(30))
        #expect(try post("/api/v1/outputs/clip/remove").status == 200)
        let gone = try post("/api/v1/outputs/clip/remove")
        #expect(gone.status == 404 && gone.text.contains("no output named clip"), "\(gone)")
        let wrong = try post("/api/v1/outputs/x/fly")
        #expect(wrong.status == 400 && wrong.text.contains("unknown action \\\"fly\\\""), "\(wrong)")
        #expect(studio.stopServer() == .exited(0))

        // Both takes are whole files, listed as the session's recordings.
        for take in [firstTake, secondTake] {
            let check = try MediaProbe.decodeCheck(URL(fileURLWithPath: take))
            #expect(check.clean && check.videoFrames >= 15, "\(take): \(check)")
        }
        let recordings = try JSONValue(parsing: try studio.run(["recordings", "--json", "--db", studio.database]).output)
        let paths = recordings["recordings"]?.arrayValue?.compactMap { $0["path"]?.stringValue } ?? []
        #expect(paths.contains(firstTake) && paths.contains(secondTake), "\(paths)")
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        #expect(EndToEndTests.events(log, kind: "output_stopped").first?["details"]?["by"] == "http")
        #expect(EndToEndTests.events(log, kind: "output_started").count == 1)
    }

    /// MPEG-TS over SRT in caller mode to a listener (ffmpeg), its stream id and passphrase masked, through
    /// an encoder fallback mid-stream (a new encoder's parameter sets go in-band before its first keyframe).
    @Test func anSRTOutputReachesAListener() throws {
        let port = try NginxRTMP.freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-srt-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let received = directory.appendingPathComponent("received.ts")
        let passphrase = "srtpassphrase42"
        let listener = try ChildProcess(
            executable: MediaProbe.ffmpeg,
            arguments: ["-hide_banner", "-loglevel", "error", "-y", "-i", "srt://127.0.0.1:\(port)?mode=listener&passphrase=\(passphrase)",
                        "-c", "copy", "-f", "mpegts", received.path],
            outputDirectory: directory.appendingPathComponent("ffmpeg"))
        defer { if !listener.hasExited { _ = listener.stop() } }
        let studio = try StudioHarness()
        try studio.serve(["--cameras", "1", "--encoder", "x264", "--inject-encoder-fault", "120"] + EndToEndTests.smallProgram)
        let url = "srt://127.0.0.1:\(port)?streamid=studio-program&passphrase=\(passphrase)&latency=120000"
        let added = try studio.run(["output", "add", "contribution", url, "--socket", studio.socket])
        #expect(added.status == 0, "\(added)")
        #expect(waitUntil(seconds: 20, every: 0.1) { Self.output(studio, "contribution")?["state"]?.stringValue == "connected" },
                "\(Self.output(studio, "contribution") ?? .null) \(listener.errorText())")
        #expect(waitUntil(seconds: 30, every: 0.1) { (try? studio.status())?["encoder"]?["generation"]?.intValue == 1 }, "the encoder fell back")
        #expect(studio.waitForProgramFrames(60))
        let shown = try #require(Self.output(studio, "contribution"))
        #expect(shown["reconnects"]?.intValue == 0, "the fallback went in-band, on the same connection: \(shown)")
        #expect(shown["kind"] == "srt" && shown["url"]?.stringValue == "srt://127.0.0.1:\(port)?streamid=****&passphrase=****&latency=120000",
                "\(shown)")
        #expect(try studio.run(["output", "remove", "contribution", "--socket", studio.socket]).status == 0)
        // The listener sees the caller go and finishes its file.
        #expect(listener.wait(timeout: 20) != nil, "ffmpeg did not end after the caller left: \(listener.errorText())")
        #expect(studio.stopServer() == .exited(0))

        let probe = try MediaProbe.probe(received)
        #expect(probe.formatName == "mpegts" && probe.video?.codecName == "h264" && probe.audio?.codecName == "aac", "\(probe.streams)")
        #expect(probe.videoPackets.count >= 90, "\(probe.videoPackets.count) frames")
        #expect(try MediaProbe.decodeCheck(received).clean)
        let log = try studio.run(["log", "--json", "--db", studio.database]).output
        #expect(!log.contains(passphrase) && !log.contains("studio-program"))
    }
}

extension OutputsEndToEndTests {
    /// At most 16 outputs: the 17th is refused until one is removed. (They call a port nobody listens on:
    /// each retries with backoff on its own thread, costing nothing else.)
    @Test func theSeventeenthOutputIsRefusedUntilOneIsRemoved() throws {
        let studio = try StudioHarness()
        try studio.serve(["--cameras", "1"] + EndToEndTests.smallProgram)
        for index in 1...16 {
            let added = try studio.run(["output", "add", "o\(index)", "rtmp://127.0.0.1:1/live/key\(index)", "--socket", studio.socket])
            #expect(added.status == 0, "\(added)")
        }
        let over = try studio.run(["output", "add", "o17", "rtmp://127.0.0.1:1/live/key17", "--socket", studio.socket])
        #expect(over.status == 2 && over.error.contains("already sends to 16 outputs, its limit"), "\(over)")
        #expect(try studio.run(["output", "remove", "o3", "--socket", studio.socket]).status == 0)
        #expect(try studio.run(["output", "add", "o17", "rtmp://127.0.0.1:1/live/key17", "--socket", studio.socket]).status == 0)
        let listed = try studio.run(["outputs", "--socket", studio.socket])
        #expect(listed.output.hasSuffix("16 of at most 16\n") && !listed.output.contains("key17"), "\(listed.output)")
        #expect(studio.stopServer() == .exited(0))
    }
}
