import Foundation
import Testing
import Control
import StudioCore
@testable import StudioServer
import TestSupport

extension EndToEndTests {
    /// The real server keeps each output's latency budget by stage (`FrameTimes` stamped by the program
    /// thread and the encoder, closed by the output thread) and shows it in `status` and `metrics`.
    /// No timing is asserted: only what holds on any machine, e.g. a frame's tick-to-wire contains each
    /// of its stages after the tick, so its quantiles are at least theirs.
    @Test func outputsReportTheirLatencyBudgetByStage() throws {
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--cameras", "1", "--camera-size", "320x180", "--record", recordings.path, "--no-iso"] + Self.smallProgram)
        #expect(studio.waitForProgramFrames(30))
        let stages = LatencyStage.allCases.map(\.rawValue)
        var budget: [String: JSONValue] = [:]
        #expect(waitUntil(seconds: 30, every: 0.1) {
            budget = (try? studio.json(["status"]))?["outputs"]?[0]?["latency_ms"]?.objectValue ?? [:]
            return Set(budget.keys) == Set(stages)
        }, "status outputs[0].latency_ms: \(budget)")
        func quantiles(_ stage: LatencyStage) -> (p50: Double, p95: Double)? {
            guard let p50 = budget[stage.rawValue]?["p50"]?.doubleValue, let p95 = budget[stage.rawValue]?["p95"]?.doubleValue else { return nil }
            return (p50, p95)
        }
        for stage in LatencyStage.allCases {
            let q = try #require(quantiles(stage), "\(stage)")
            #expect(q.p50 >= 0 && q.p95 >= q.p50, "\(stage): \(q)")
        }
        let tickToWire = try #require(quantiles(.tickToWire))
        for stage in [LatencyStage.tickWake, .compose, .encodeQueue, .encode, .outputQueue, .write] {
            let q = try #require(quantiles(stage))
            #expect(tickToWire.p50 >= q.p50 && tickToWire.p95 >= q.p95, "tick_to_wire \(tickToWire) holds \(stage) \(q)")
        }

        let metrics = try studio.run(["metrics", "--socket", studio.socket])
        try #require(metrics.status == 0, "studio metrics: \(metrics.error)")
        let family = try #require(try Exposition(parsing: metrics.output)["studio_output_latency_seconds"])
        #expect(family.type == "gauge")
        #expect(Set(family.samples.compactMap { $0.labels["stage"] }) == Set(stages))
        #expect(Set(family.samples.compactMap { $0.labels["quantile"] }) == ["0.5", "0.95"])
        #expect(studio.stopServer() == .exited(0))
    }
}
