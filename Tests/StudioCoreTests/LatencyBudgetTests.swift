import Testing
import StudioCore

@Suite struct LatencyBudgetTests {
    /// A frame whose every stage is known: each stage is the span between its two times.
    static func frame(_ base: UInt64, capture: UInt64 = 1) -> FrameTimes {
        FrameTimes(capture: capture == 0 ? 0 : base, due: base + 10_000_000, taken: base + 12_000_000, composed: base + 15_000_000,
                   encodeStart: base + 16_000_000, encodeEnd: base + 26_000_000)
    }

    @Test func eachStageIsTheSpanBetweenItsTimes() throws {
        var budget = LatencyBudget(window: 10)
        budget.record(Self.frame(1_000_000_000), writeStart: 1_030_000_000, written: 1_031_000_000)
        let summary = budget.summary()
        let expected: [LatencyStage: Double] = [.captureToTick: 12, .tickWake: 2, .compose: 3, .encodeQueue: 1, .encode: 10,
                                                .outputQueue: 4, .write: 1, .tickToWire: 21, .captureToWritten: 31]
        for (stage, ms) in expected {
            #expect(summary[stage] == LatencyQuantiles(p50: ms, p95: ms), "\(stage)")
        }
        #expect(summary[.audioToWire] == nil, "video frames say nothing of the audio")
    }

    @Test func audioIsItsOwnRing() {
        var budget = LatencyBudget(window: 4)
        for lateness in [UInt64(120), 130, 140, 150, 160] { budget.recordAudio(due: 2_000_000_000, written: 2_000_000_000 + lateness * 1_000_000) }
        budget.recordAudio(due: 3_000_000_000, written: 2_999_000_000)  // written before its time: 0, not a wrap-around
        #expect(budget.summary()[.audioToWire] == LatencyQuantiles(p50: 150, p95: 160))
        #expect(budget.summary()[.encode] == nil)
        budget.record(Self.frame(1_000_000_000), writeStart: 1_030_000_000, written: 1_031_000_000)
        #expect(budget.summary()[.audioToWire] == LatencyQuantiles(p50: 150, p95: 160))
    }

    @Test func quantilesOverTheWindowOnly() {
        var budget = LatencyBudget(window: 20)
        // 40 frames whose write takes 1...40 ms: only the last 20 (21...40 ms) count.
        for index in 1...40 {
            let base = UInt64(index) * 1_000_000_000
            budget.record(Self.frame(base), writeStart: base + 30_000_000, written: base + 30_000_000 + UInt64(index) * 1_000_000)
        }
        let write = budget.summary()[.write]
        #expect(write?.p50 == 31)
        #expect(write?.p95 == 39)
    }

    /// An ISO's passthrough packet knows only its capture and when its feed handed it on: capture-to-file
    /// (a known 100 ms added is measured as such) and the output's own stages, nothing of a tick.
    @Test func aPassthroughPacketGivesCaptureToFile() {
        var budget = LatencyBudget(window: 5)
        let capture: UInt64 = 7_000_000_000
        budget.record(FrameTimes(capture: capture, encodeEnd: capture + 3_000_000), writeStart: capture + 95_000_000,
                      written: capture + 100_000_000)
        let summary = budget.summary()
        #expect(summary[.captureToWritten] == LatencyQuantiles(p50: 100, p95: 100))
        #expect(summary[.outputQueue] == LatencyQuantiles(p50: 92, p95: 92) && summary[.write] == LatencyQuantiles(p50: 5, p95: 5))
        #expect(summary[.captureToTick] == nil && summary[.tickToWire] == nil && summary[.encode] == nil)
    }

    @Test func aStageNoFrameKnewIsLeftOut() {
        var budget = LatencyBudget(window: 5)
        budget.record(Self.frame(5_000_000_000, capture: 0), writeStart: 5_030_000_000, written: 5_031_000_000)
        let summary = budget.summary()
        #expect(summary[.captureToTick] == nil && summary[.captureToWritten] == nil)
        #expect(summary[.tickToWire] == LatencyQuantiles(p50: 21, p95: 21))
        #expect(LatencyBudget(window: 5).summary().isEmpty)
    }
}
