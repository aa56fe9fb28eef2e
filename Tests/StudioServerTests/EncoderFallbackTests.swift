import Foundation
import Testing
import Control
import Encoding
import TestSupport

/// Encoder choice and fallback through the real binary. No GPU here: the start-up fallback is the
/// real probe failing, and the mid-show fallback is driven by `--inject-encoder-fault`.
@Suite(.serialized) struct EncoderFallbackTests {
    static let small = ["--program", "640x360@30", "--preset", "ultrafast", "--bitrate", "1500k", "--camera-size", "320x180"]
    static var machineHasVAAPI: Bool { VAAPIProbe.probe().device != nil }

    @Test func aFailingEncoderIsReplacedMidShowAndTheStreamPlaysAcross() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        try studio.serve(["--cameras", "2", "--encoder", "x264", "--inject-encoder-fault", "75",
                          "--rtmp", nginx.url(stream: "fallback")] + Self.small)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["encoder"]?["generation"]?.intValue == 1 })
        #expect(studio.waitForProgramFrames(15))
        #expect(try studio.run(["switch", "cam2", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(45))
        let status = try studio.status()
        #expect(status["encoder"]?["video"] == "libx264")
        #expect((status["program"]?["fps"]?.doubleValue ?? 0) > 20, "the program never stopped")
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let events = log["events"]?.arrayValue ?? []
        let fallback = try #require(events.first { $0["kind"] == "encoder_fallback" })
        #expect(fallback["details"]?["from"] == "libx264" && fallback["details"]?["to"] == "libx264")
        #expect(fallback["details"]?["reason"]?.stringValue?.contains("injected encoder fault") == true)
        #expect(fallback["details"]?["generation"] == "1")
        #expect(!events.contains { $0["kind"] == "output_disconnected" }, "the stream was not interrupted")

        // What nginx received decodes cleanly across the change, one connection, timestamps rising,
        // with a keyframe where the new encoder took over.
        let files = nginx.recordings()
        try #require(files.count == 1, "\(files)")
        let check = try MediaProbe.decodeCheck(files[0])
        #expect(check.clean, "\(check.errors)")
        let video = try MediaProbe.probe(files[0]).videoPackets
        let dts = video.compactMap(\.dtsMilliseconds)
        #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 })
        // The fallback event carries the program time of the frame the new encoder took; the stream's
        // timestamps start at the program time of its first frame (not 0 when the connection took a while).
        let connected = try #require(events.first { $0["kind"] == "output_connected" })
        let firstProgramMS = try #require(Double(connected["details"]?["first_program_ms"]?.stringValue ?? ""))
        let faultMS = try #require(fallback["program_ms"]?.doubleValue, "the fallback has its frame's program time") - firstProgramMS
        #expect(video.contains { $0.isKeyframe && abs(($0.dtsMilliseconds ?? 0) - faultMS) < 100 },
                "a keyframe where x264 took over (~\(faultMS) ms into the stream)")
        #expect(Double(video.count) > (dts.last ?? 0) / (1000.0 / 30) * 0.9, "no gap in the program")
    }

    @Test(.disabled(if: machineHasVAAPI, "this machine has a VAAPI H.264 encoder; the no-GPU start-up path is not taken"))
    func autoExplainsWhyItUsesSoftwareAndVaapiRefusesToStart() throws {
        let studio = try StudioHarness()
        let refused = try studio.run(["serve", "--encoder", "vaapi", "--cameras", "0", "--db", studio.database, "--socket", studio.socket])
        #expect(refused.status == 2 && refused.error.contains("vaapi"), "\(refused)")

        try studio.serve(["--cameras", "1"] + Self.small)
        let encoder = try #require(try studio.status()["encoder"])
        #expect(encoder["video"] == "libx264" && encoder["choice"] == "auto")
        #expect(encoder["fallback_reason"]?.stringValue?.contains("render node") == true, "\(encoder)")
        #expect(studio.stopServer() == .exited(0))
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let chosen = log["events"]?.arrayValue?.first { $0["kind"] == "encoder_chosen" && $0["details"]?["kind"] == "video" }
        #expect(chosen?["details"]?["fallback_reason"]?.stringValue?.contains("render node") == true)
        // Only the session that ran is in the store: the refused start left none behind.
        let sessions = try JSONValue(parsing: try studio.run(["sessions", "--json", "--db", studio.database]).output)
        #expect(sessions["sessions"]?.arrayValue?.count == 1)
    }

    /// Each ISO feed has its own encoder choice and its own mid-show fallback: with the fault injected,
    /// the camera's ISO encoder fails after 45 frames and that feed goes on with a fresh x264 from the
    /// failed frame, as a keyframe, on the same timeline. (x264 after x264 has the same codec parameters,
    /// so the file goes on; a VAAPI -> x264 change starts `-g1`, covered in OutputTests.)
    @Test func anIsoFeedFallsBackOnItsOwn() throws {
        let studio = try StudioHarness()
        let directory = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--cameras", "1", "--record", directory.path, "--encoder", "x264", "--inject-encoder-fault", "45"] + Self.small)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["iso"]?[0]?["generation"]?.intValue == 1 })
        #expect(studio.waitForProgramFrames(45))
        let iso = try #require(try studio.status()["iso"]?[0])
        #expect(iso["encoder"] == "libx264" && iso["fallback_reason"]?.stringValue?.contains("injected encoder fault") == true, "\(iso)")
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let events = log["events"]?.arrayValue ?? []
        let isoFallback = try #require(events.first { $0["kind"] == "encoder_fallback" && $0["details"]?["stage"] == "iso.cam1" })
        #expect(isoFallback["camera"] == "cam1" && isoFallback["details"]?["generation"] == "1" && isoFallback["details"]?["kind"] == "iso")
        #expect(events.contains { $0["kind"] == "encoder_chosen" && $0["details"]?["stage"] == "iso.cam1" })

        let file = directory.appendingPathComponent("session-1-cam1.mkv")
        let check = try MediaProbe.decodeCheck(file)
        #expect(check.clean, "\(check.errors)")
        let video = try MediaProbe.probe(file).videoPackets
        let pts = video.compactMap(\.ptsMilliseconds).sorted()
        // The ISO's timestamps are program time; the fallback event carries the failed frame's.
        let faultMS = try #require(isoFallback["program_ms"]?.doubleValue, "the fallback has its frame's program time")
        #expect(video.contains { $0.isKeyframe && abs(($0.ptsMilliseconds ?? 0) - faultMS) < 50 }, "a keyframe where x264 took over (\(faultMS) ms)")
        let gaps = zip(pts, pts.dropFirst()).map { $1 - $0 }
        #expect(pts.count > 90 && (gaps.max() ?? 0) < 70, "no hole in the ISO across the fallback: \(pts.count) frames, largest gap \(gaps.max() ?? 0) ms")
    }
}
