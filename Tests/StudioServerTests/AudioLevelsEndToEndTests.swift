import Foundation
import Testing
import Control
import Capture
import TestSupport

/// The program audio meter against the real server: the demo's tone reads the level its generator
/// plays, on `levels` (control socket and HTTP), in `status` and in the metrics; silence reads the floor.
@Suite struct AudioLevelsEndToEndTests {
    static func levels(_ studio: StudioHarness) throws -> JSONValue {
        try ControlClient(socketPath: studio.socket).request("levels", arguments: [:], timeoutSeconds: 5)
    }

    static func numbers(_ value: JSONValue?) -> [Double] { value?.arrayValue?.compactMap(\.doubleValue) ?? [] }

    @Test func theDemoToneReadsTheLevelItsGeneratorPlays() throws {
        guard case .tone(_, let level) = TestToneSource.Signal.standard else { Issue.record("the demo tone is no tone"); return }
        // A sine of peak `level` dBFS: its RMS is 3.01 dB lower.
        let peak = level, rms = level - 10 * log10(2.0)
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        try studio.serve(["--cameras", "1", "--audio", "tone", "--http", "127.0.0.1:\(port)"] + EndToEndTests.smallProgram)
        func near(_ values: [Double], _ target: Double) -> Bool { values.count == 2 && values.allSatisfy { abs($0 - target) < 1 } }
        var last = JSONValue.null
        let settled = waitUntil(seconds: 20, every: 0.1) {
            guard let reply = try? Self.levels(studio) else { return false }
            last = reply
            return near(Self.numbers(reply["peak_dbfs"]), peak) && near(Self.numbers(reply["rms_dbfs"]), rms)
                && near(Self.numbers(reply["peak_hold_dbfs"]), peak)
        }
        #expect(settled, "levels of a \(peak) dBFS tone: \(last.jsonText)")
        #expect(last["floor_dbfs"]?.doubleValue == -96)

        // The same in status, over HTTP, and in the metrics.
        let status = try studio.status()
        #expect(near(Self.numbers(status["audio"]?["levels"]?["peak_dbfs"]), peak), "\(status["audio"]?.jsonText ?? "no audio")")
        #expect(near(Self.numbers(status["audio"]?["levels"]?["rms_dbfs"]), rms))
        let http = try JSONValue(parsing: HTTPTestClient.fetch(port: port, "GET", "/api/v1/levels").body)
        #expect(near(Self.numbers(http["peak_dbfs"]), peak), "\(http.jsonText)")
        let result = try studio.run(["metrics", "--socket", studio.socket])
        let metrics = try Exposition(parsing: result.output)
        for channel in ["left", "right"] {
            #expect(metrics["studio_audio_peak_dbfs"]?.value(["channel": channel]).map { abs($0 - peak) < 1 } == true)
            #expect(metrics["studio_audio_rms_dbfs"]?.value(["channel": channel]).map { abs($0 - rms) < 1 } == true)
            #expect(metrics["studio_audio_peak_hold_dbfs"]?.value(["channel": channel]).map { abs($0 - peak) < 1 } == true)
            #expect(metrics["studio_audio_peak_dbfs"]?.type == "gauge")
        }
        // `studio status` prints them for people.
        let printed = try studio.run(["status", "--socket", studio.socket]).output
        let line = printed.split(separator: "\n").first { $0.hasPrefix("levels    peak ") }.map(String.init) ?? ""
        let printedPeaks = line.dropFirst("levels    peak ".count).split(separator: " ").prefix(3).compactMap { Double($0) }
        #expect(near(printedPeaks, peak), "studio status says: \(line)")
        #expect(studio.stopServer() == .exited(0))
    }

    @Test func silenceReadsTheFloor() throws {
        let studio = try StudioHarness()
        try studio.serve(["--cameras", "1", "--audio", "silence"] + EndToEndTests.smallProgram)
        #expect(studio.waitForProgramFrames(30))
        let reply = try Self.levels(studio)
        for key in ["peak_dbfs", "rms_dbfs", "peak_hold_dbfs"] {
            #expect(Self.numbers(reply[key]) == [-96, -96], "\(key): \(reply.jsonText)")
        }
        #expect(Self.numbers(try studio.status()["audio"]?["levels"]?["peak_dbfs"]) == [-96, -96])
        #expect(try studio.run(["status", "--socket", studio.socket]).output.contains("levels    peak -inf / -inf dBFS"))
        #expect(studio.stopServer() == .exited(0))
    }
}
