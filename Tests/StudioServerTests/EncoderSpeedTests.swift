import Foundation
import Testing
import Control
import TestSupport
import StudioCore
@testable import StudioServer

/// The program encoder's speed, as `studio doctor` and `studio serve` report it, through the real binary.
@Suite(.serialized) struct EncoderSpeedTests {
    private func speedCheck(program: String) throws -> JSONValue {
        let studio = try StudioHarness()
        let result = try studio.run(["doctor", "--json", "--db", studio.database, "--program", program, "--encoder", "x264"])
        let json = try JSONValue(parsing: result.output)
        let checks = DoctorTests.checks(json, area: "encoder")
        try #require(checks.count == 1, "one encoder speed line: \(result.output)")
        return checks[0]
    }

    /// The margins are huge both ways (no CPU runs x264 veryfast at 4K near 300 fps; every one runs
    /// 320x240 far above 19 fps), so neither verdict depends on the machine's load.
    @Test func doctorWarnsFor4KAt240AndIsContentWithQVGAAt15() throws {
        let big = try speedCheck(program: "3840x2160@240")
        #expect(big["status"] == "warning")
        let message = try #require(big["message"]?.stringValue)
        #expect(message.hasPrefix("libx264 encodes 3840x2160 at ~") && message.contains("the program needs 240"), "\(message)")
        #expect(message.contains("of the program's frames would be dropped"), "\(message)")
        #expect(big["fix"]?.stringValue?.contains("--program 1280x720@30") == true)
        #expect(big["details"]?["needed_fps"] == "240.0")

        let small = try speedCheck(program: "320x240@15")
        #expect(small["status"] == "ok", "\(small)")
        #expect(small["message"]?.stringValue?.hasSuffix("the program needs 15") == true)
        let measured = try #require(small["details"]?["measured_fps"]?.stringValue.flatMap(Double.init))
        #expect(measured >= 15 * 1.25)
    }

    /// `serve` with a format beyond the encoder warns at start (log and event) and shows what it
    /// measured in `status`; the default-sized serves of the test suite are not measured.
    @Test func serveWarnsAtStartWhenTheFormatIsBeyondTheEncoder() throws {
        let studio = try StudioHarness()
        let server = try studio.serve(["--cameras", "0", "--program", "3840x2160@240", "--encoder", "x264"])
        let status = try studio.status()
        #expect(studio.stopServer() == .exited(0))
        let probed = try #require(status["encoder"]?["probe_fps"]?.doubleValue, "\(status)")
        #expect(probed < 240 * 1.25)
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let warnings = (log["events"]?.arrayValue ?? []).filter { $0["kind"] == "encoder_overloaded" && $0["details"]?["by"] == "start probe" }
        #expect(warnings.count == 1, "\(log)")
        #expect(warnings.first?["details"]?["needed_fps"] == "240.0")
        #expect(warnings.first?["details"]?["size"] == "3840x2160")
        #expect(server.errorText().contains("warning: libx264 encodes 3840x2160 at ~"), "\(server.errorText())")

        // The suite's (and the default's) formats are not measured: their serves start at once.
        let small = try StudioHarness()
        try small.serve(["--cameras", "0", "--program", "640x360@30", "--preset", "ultrafast"])
        let smallStatus = try small.status()
        #expect(small.stopServer() == .exited(0))
        #expect(smallStatus["encoder"]?["probe_fps"] == .null, "\(smallStatus)")
        #expect(smallStatus["encoder"]?["overloaded_fps"] == .null)
    }
}
