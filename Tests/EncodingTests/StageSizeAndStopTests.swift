import Testing
import Synchronization
import StudioCore
import StudioSystem
import Encoding
import TestSupport

/// A real x264 encoder that takes `delay` of wall time per frame (x264 on a slow machine, or under
/// TCG), and remembers whether it was flushed.
final class SlowEncoder: VideoEncoder {
    let inner: X264Encoder
    let delay: Double
    private(set) var flushed = false
    init(_ inner: X264Encoder, delay: Double) { self.inner = inner; self.delay = delay }
    var name: String { inner.name }
    var settings: VideoEncoderSettings { inner.settings }
    var streamDescription: StreamDescription { inner.streamDescription }
    func encode(_ frame: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket] {
        MonotonicClock.sleep(seconds: delay)
        return try inner.encode(frame, pts: pts, forceKeyframe: forceKeyframe)
    }
    func flush() throws -> [EncodedPacket] {
        flushed = true
        return try inner.flush()
    }
}

private func sized(_ n: Int, width: Int, height: Int) -> VideoFrame {
    SyntheticMedia.frame(width: width, height: height, yuv: SyntheticMedia.green, index: n)
}

private func seconds(since start: UInt64) -> Double { Double(MonotonicClock.now() - start) / 1e9 }

/// A stage made from settings opens its encoder at the frames' size and follows it.
@Suite(.serialized) struct VideoStageSizeTests {
    /// The settings an ISO feed gives: no size (the camera's frames bring it).
    private var unsized: VideoEncoderSettings {
        var settings = smallSettings
        settings.width = 0
        settings.height = 0
        return settings
    }

    @Test func aFrameOfANewSizeStartsANewGenerationWithAFormatAndAKeyframe() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let camera = CameraID("cam1")
        let stage = VideoEncodingStage(settings: unsized, role: .iso(camera), queueCapacity: 64, events: events,
                                       deliver: collector.deliver)
        for n in 0..<10 { #expect(stage.submit(sized(n, width: 320, height: 180), pts: pts(n))) }
        for n in 10..<20 { #expect(stage.submit(sized(n, width: 256, height: 144), pts: pts(n))) }
        #expect(stage.finish())

        // Items: format(gen 0), 10 packets, format(gen 1), 10 packets, end of stream.
        let items = collector.items
        guard items.count == 23 else { Issue.record("expected 23 items, got \(items.count)"); return }
        guard case .format(let first) = items[0], case .format(let second) = items[11], case .endOfStream = items[22] else {
            Issue.record("formats at 0 and 11, end of stream last"); return
        }
        #expect(first.generation == 0 && first.width == 320 && first.height == 180)
        #expect(second.generation == 1 && second.width == 256 && second.height == 144)
        let packets = collector.packets
        #expect(packets.map(\.pts) == (0..<20).map(pts), "one timeline across the sizes")
        #expect(packets.prefix(10).allSatisfy { $0.generation == 0 } && packets.suffix(10).allSatisfy { $0.generation == 1 })
        #expect(packets[10].isKeyframe && nalTypes(packets[10].data).contains(5), "the new encoder starts with an IDR")
        let chosen = events.events(.encoderChosen)
        #expect(chosen.map { $0.details["size"] } == ["320x180", "256x144"])
        #expect(chosen.map { $0.details["generation"] } == ["0", "1"])
        #expect(chosen.allSatisfy { $0.camera == camera && $0.details["stage"] == "iso.cam1" && $0.details["kind"] == "iso" })
        let statistics = stage.statistics
        #expect(statistics.generation == 1 && statistics.width == 256 && statistics.height == 144)
        #expect(statistics.framesEncoded == 20 && statistics.encodeErrors == 0)
        #expect(events.events(.error).isEmpty)
    }

    @Test func aSizeNoEncoderOpensAtIsOneErrorAndTheStreamStillEnds() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let stage = VideoEncodingStage(settings: unsized, role: .iso(CameraID("cam2")), queueCapacity: 64, events: events,
                                       deliver: collector.deliver)
        for n in 0..<5 { stage.submit(sized(n, width: 321, height: 181), pts: pts(n)) }  // x264 needs an even size
        #expect(stage.finish())
        #expect(collector.packets.isEmpty && collector.formats.isEmpty)
        guard case .endOfStream = collector.items.last else { Issue.record("end of stream last"); return }
        let errors = events.events(.error)
        #expect(errors.count == 1 && errors.first?.details["during"] == "open encoder" && errors.first?.camera == CameraID("cam2"))
        #expect(stage.statistics.encoderName == "-")
    }
}

/// `finish` keeps its stop budget however slow the encoder is.
@Suite(.serialized) struct VideoStageStopBudgetTests {
    @Test func finishDropsWhatItCannotEncodeInTimeAndStillEndsTheStream() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let slow = SlowEncoder(try X264Encoder(settings: smallSettings), delay: 0.1)
        let stage = VideoEncodingStage(encoder: slow, queueCapacity: 64, events: events, deliver: collector.deliver)
        for n in 0..<40 { #expect(stage.submit(frame(n), pts: pts(n))) }  // 4 s of encoding
        let started = MonotonicClock.now()
        let budget = 0.5
        #expect(stage.finish(deadline: StopBudget.deadline(in: budget)))
        let elapsed = seconds(since: started)
        // The deadline, plus the one encode call under way when it passed.
        #expect(elapsed < budget + StopBudget.graceSeconds, "finish took \(elapsed) s")

        let statistics = stage.statistics
        #expect(statistics.framesIn == 40)
        #expect(statistics.framesDroppedAtStop > 0 && statistics.framesDroppedAtStop == statistics.framesDropped)
        #expect(statistics.framesEncoded + statistics.framesDroppedAtStop == 40, "every frame encoded or counted")
        #expect(collector.packets.count == statistics.framesEncoded)
        #expect(!slow.flushed, "no flush past the deadline")
        guard case .endOfStream = collector.items.last else { Issue.record("end of stream last"); return }
        let report = try #require(events.events(.framesDropped).last)
        #expect(report.details == ["stage": "video", "reason": "stop budget spent",
                                   "dropped": String(statistics.framesDroppedAtStop),
                                   "dropped_total": String(statistics.framesDropped)])
    }

    @Test func withinItsBudgetFinishEncodesEverythingAndFlushes() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let slow = SlowEncoder(try X264Encoder(settings: smallSettings), delay: 0.01)
        let stage = VideoEncodingStage(encoder: slow, queueCapacity: 64, events: events, deliver: collector.deliver)
        for n in 0..<10 { #expect(stage.submit(frame(n), pts: pts(n))) }
        #expect(stage.finish(deadline: StopBudget.deadline(in: 10)))
        #expect(collector.packets.count == 10 && slow.flushed)
        #expect(stage.statistics.framesDropped == 0 && events.events(.framesDropped).isEmpty)
    }

    @Test func finishGivesUpWaitingForAStuckEncoderAfterTheGrace() throws {
        let gate = Gate()
        let collector = ItemCollector()
        let stage = VideoEncodingStage(encoder: GatedEncoder(try X264Encoder(settings: smallSettings), gate: gate),
                                       queueCapacity: 8, events: DiscardingEventSink(), deliver: collector.deliver)
        for n in 0..<3 { stage.submit(frame(n), pts: pts(n)) }
        #expect(gate.waitForArrival(timeout: 10), "the stage thread is inside encode")
        let started = MonotonicClock.now()
        #expect(!stage.finish(deadline: StopBudget.deadline(in: 0.1)), "the encode call never returned")
        let elapsed = seconds(since: started)
        #expect(elapsed >= 0.1 + StopBudget.graceSeconds * 0.9 && elapsed < 0.1 + StopBudget.graceSeconds + 1, "finish took \(elapsed) s")
        // When the call returns at last, the queued frames are dropped and the stream ends.
        gate.release()
        #expect(waitUntil { if case .endOfStream = collector.items.last { true } else { false } })
        #expect(stage.statistics.framesDroppedAtStop == 2)
    }

    /// The budget and its grace are read on the stage's clock: with an injected one that has passed
    /// the deadline, finish does not wait a real second for the stuck encode, and what is queued is
    /// dropped once the call returns, though only milliseconds of real time went by.
    @Test func theBudgetIsSpentOnTheStagesOwnClock() throws {
        // An hour ahead of the monotonic clock: a stage that read the monotonic clock would find its
        // budget unspent and encode everything.
        let clock = ManualClock(start: MonotonicClock.now() + 3_600_000_000_000)
        let gate = Gate()
        let collector = ItemCollector()
        let events = CollectingSink()
        let stage = VideoEncodingStage(encoder: GatedEncoder(try X264Encoder(settings: smallSettings), gate: gate),
                                       queueCapacity: 8, events: events, clock: clock, deliver: collector.deliver)
        for n in 0..<5 { stage.submit(frame(n), pts: pts(n)) }
        #expect(gate.waitForArrival(timeout: 10), "the stage thread is inside encode")
        let deadline = StopBudget.deadline(in: 10, on: clock)
        clock.advance(by: 20_000_000_000)  // past the deadline and its grace, on the stage's clock only
        let started = MonotonicClock.now()
        #expect(!stage.finish(deadline: deadline), "the encode call is still under way")
        #expect(seconds(since: started) < 0.5, "no real grace waited: \(seconds(since: started)) s")
        gate.release()
        #expect(waitUntil { if case .endOfStream = collector.items.last { true } else { false } })
        #expect(stage.statistics.framesDroppedAtStop == 4 && stage.statistics.framesEncoded <= 1, "\(stage.statistics)")
        #expect(events.events(.framesDropped).last?.details["reason"] == "stop budget spent")
    }
}

@Suite(.serialized) struct AudioStageStopBudgetTests {
    @Test func pastTheDeadlineTheQueueIsDroppedAndTheStreamEnds() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let stage = AudioEncodingStage(encoder: try AACEncoder(), queueCapacity: 64, events: events, deliver: collector.deliver)
        var next: Int64 = 0
        for _ in 0..<25 {
            #expect(stage.submit(SyntheticMedia.audio(firstSample: next, count: 960)))
            next += 960
        }
        // A deadline already passed: nothing more is encoded, nothing flushed, the end still arrives.
        #expect(stage.finish(deadline: MonotonicClock.now()))
        let statistics = stage.statistics
        #expect(statistics.framesEncoded + statistics.framesDroppedAtStop == 25)
        guard case .endOfStream = collector.items.last else { Issue.record("end of stream last"); return }
        if statistics.framesDroppedAtStop > 0 {
            #expect(events.events(.framesDropped).last?.details["reason"] == "stop budget spent")
        }
    }
}
