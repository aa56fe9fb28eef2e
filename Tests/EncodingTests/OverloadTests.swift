import Testing
import StudioCore
import StudioSystem
import Encoding
import TestSupport

@Suite struct OverloadWatchTests {
    /// Offers `count` frames at 30 fps from `start`, dropping every `dropEvery`-th (0: none); the encoder
    /// takes the others. Returns the changes the watch reported.
    private func offer(_ watch: inout OverloadWatch, from start: UInt64, count: Int, dropEvery: Int, encoded: inout Int) -> [OverloadWatch.Change] {
        var changes: [OverloadWatch.Change] = []
        for n in 0..<count {
            let dropped = dropEvery > 0 && n % dropEvery == 0
            if !dropped { encoded += 1 }
            if let change = watch.note(at: start + UInt64(n) * 33_333_333, dropped: dropped, encoded: encoded) { changes.append(change) }
        }
        return changes
    }

    @Test func reportsTheStartOfAnOverloadOnceAndItsEnd() throws {
        var watch = OverloadWatch()
        var encoded = 0
        let second: UInt64 = 1_000_000_000
        // 6 s keeping up, a drop now and then (1 in 20: 5 %): nothing to say.
        #expect(offer(&watch, from: 0, count: 180, dropEvery: 20, encoded: &encoded).isEmpty)
        #expect(watch.current == nil)
        // 12 s dropping 1 in 3: one report, at the end of the first window that saw it (that window
        // began 5 s in, so its first second still had the 5 % of before).
        let changes = offer(&watch, from: 6 * second, count: 360, dropEvery: 3, encoded: &encoded)
        #expect(changes.count == 1)
        guard case .began(let overload) = try #require(changes.first) else { Issue.record("began first"); return }
        #expect(overload.droppedPercent >= 25 && overload.droppedPercent <= 34, "\(overload.droppedPercent) %")
        #expect(overload.measuredFPS >= 19.5 && overload.measuredFPS <= 23, "\(overload.measuredFPS) fps")
        #expect(abs(overload.offeredFPS - 30) < 2.5)
        #expect(watch.current != nil)
        // Keeping up again: the overload ends once.
        #expect(offer(&watch, from: 18 * second, count: 360, dropEvery: 0, encoded: &encoded) == [.ended])
        #expect(watch.current == nil)
    }
}

@Suite(.serialized) struct EncoderOverloadTests {
    /// An encoder that takes 20 ms (real time) a frame, offered 30 fps of frames on a manual clock much
    /// faster than it can take them: its queue refuses most of them, and the stage says so once.
    @Test func aSlowEncoderIsReportedOnceWithWhatItManages() throws {
        let clock = ManualClock()
        let events = CollectingSink()
        let slow = FaultInjectingEncoder(wrapping: try X264Encoder(settings: smallSettings), secondsPerFrame: 0.02)
        let stage = VideoEncodingStage(encoder: slow, events: events, clock: clock, deliver: { _ in })
        #expect(waitUntil { stage.statistics.width > 0 }, "the stage announced its encoder")
        for n in 0..<360 {  // 12 s of program at 30 fps
            stage.submit(frame(n), pts: pts(n))
            clock.advance(by: 33_333_333)
        }
        let statistics = stage.statistics
        #expect(statistics.framesDropped > 36, "over 10 % dropped: \(statistics.framesDropped) of 360")
        let overload = try #require(statistics.overload, "status shows the overload")
        #expect(overload.droppedPercent > 10)
        stage.finish()
        let reports = events.events(.encoderOverloaded)
        #expect(reports.count == 1, "one warning for one overload, not one per window: \(reports.map(\.details))")
        let details = try #require(reports.first).details
        #expect(details["by"] == "dropped frames" && details["stage"] == "video" && details["encoder"] == "libx264")
        #expect(details["size"] == "320x180")
        let measured = try #require(details["measured_fps"].flatMap(Double.init))
        #expect(measured < 30 * 0.9, "the encoder managed \(measured) fps of 30")
        #expect(details["offered_fps"].flatMap(Double.init).map { abs($0 - 30) < 1 } == true)
    }

    @Test func anEncoderThatKeepsUpIsNotReported() throws {
        let clock = ManualClock()
        let events = CollectingSink()
        let stage = VideoEncodingStage(encoder: try X264Encoder(settings: smallSettings), events: events, clock: clock, deliver: { _ in })
        for n in 0..<360 {
            stage.submit(frame(n), pts: pts(n))
            clock.advance(by: 33_333_333)
            // Real time lets it take each frame before the next comes: it keeps up.
            #expect(waitUntil { stage.statistics.framesEncoded == n + 1 })
        }
        #expect(stage.statistics.overload == nil)
        stage.finish()
        #expect(events.events(.encoderOverloaded).isEmpty)
        #expect(stage.statistics.framesDropped == 0)
    }
}

@Suite(.serialized) struct SpeedProbeTests {
    @Test func fourKAt240IsBeyondX264HereAndQVGAAt15IsWellWithin() throws {
        // The margins are huge both ways: no CPU runs x264 veryfast at 4K anywhere near 300 fps, and
        // every one runs 320x240 at far more than 19 fps.
        let big = VideoEncoderSettings(width: 3840, height: 2160, frameRate: Rational(240), encoder: .x264)
        let fast = try SpeedProbe.measure(big, budgetSeconds: 0.5)
        #expect(!fast.keepsUp, "\(fast.summary)")
        #expect(fast.encoderName == "libx264" && fast.neededFPS == 240 && fast.framesTimed >= 2)
        #expect(fast.seconds < 5, "bounded: \(fast.seconds) s")
        #expect(fast.summary.hasPrefix("libx264 encodes 3840x2160 at ~") && fast.summary.hasSuffix("the program needs 240"))

        let small = VideoEncoderSettings(width: 320, height: 240, frameRate: Rational(15), encoder: .x264)
        let slow = try SpeedProbe.measure(small, budgetSeconds: 0.5)
        #expect(slow.keepsUp, "\(slow.summary)")
        #expect(slow.measuredFPS >= 15 * EncoderSpeed.headroom)
    }

    @Test func onlyFormatsAboveTheDefaultsPixelRateAreMeasuredAtStart() {
        #expect(!SpeedProbe.worthMeasuringAtStart(ProgramFormat(width: 1280, height: 720, frameRate: Rational(30))))
        #expect(!SpeedProbe.worthMeasuringAtStart(ProgramFormat(width: 640, height: 360, frameRate: Rational(30))))
        #expect(SpeedProbe.worthMeasuringAtStart(ProgramFormat(width: 1920, height: 1080, frameRate: Rational(30))))
        #expect(SpeedProbe.worthMeasuringAtStart(ProgramFormat(width: 1280, height: 720, frameRate: Rational(60))))
    }
}
