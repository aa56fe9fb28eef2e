import Foundation
import Testing
import Control
import TestSupport

/// `studio doctor` on this machine, through the real binary.
@Suite(.serialized) struct DoctorTests {
    static func checks(_ json: JSONValue, area: String) -> [JSONValue] {
        (json["checks"]?.arrayValue ?? []).filter { $0["area"]?.stringValue == area }
    }

    @Test func reportsReachableAndUnreachableDestinationsWithoutTheKey() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        let closedPort = try NginxRTMP.freePort()
        let result = try studio.run(["doctor", "--json", "--db", studio.database,
                                     "--rtmp", nginx.url(stream: "topsecret1"),
                                     "--rtmp", "rtmp://127.0.0.1:\(closedPort)/live/topsecret2"])
        #expect(result.status == 1, "a problem makes doctor exit 1")
        #expect(!result.output.contains("topsecret"))
        let json = try JSONValue(parsing: result.output)
        let rtmp = Self.checks(json, area: "rtmp")
        #expect(rtmp.map { $0["status"]?.stringValue } == ["ok", "problem"])
        #expect(rtmp[1]["fix"]?.stringValue?.isEmpty == false)
        #expect(json["problems"]?.intValue == 1)

        // What this machine has is reported as it is.
        let gpu = Self.checks(json, area: "gpu")
        let hasRenderNode = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []).contains { $0.hasPrefix("renderD") }
        if hasRenderNode {
            #expect(gpu.allSatisfy { ["ok", "problem"].contains($0["status"]?.stringValue ?? "") })
        } else {
            #expect(gpu.count == 1 && gpu[0]["status"] == "warning" && gpu[0]["message"]?.stringValue?.contains("render node") == true)
        }
        #expect(Self.checks(json, area: "ffmpeg").contains { $0["message"]?.stringValue?.contains("libx264") == true && $0["status"] == "ok" })
        #expect(Self.checks(json, area: "database").first?["status"] == "ok")
    }

    @Test func aDatabaseThatCannotBeCreatedIsAProblem() throws {
        let studio = try StudioHarness()
        let blocker = studio.directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let result = try studio.run(["doctor", "--db", blocker.path + "/sub/studio.db"])
        #expect(result.status == 1)
        #expect(result.output.contains("PROBLEM database"), "\(result.output)")
        #expect(result.output.contains("1 problem(s)"))
    }
}
