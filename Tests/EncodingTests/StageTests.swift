import Testing
import StudioCore
import StudioSystem
import Encoding
import TestSupport

/// A gate the test opens; `GatedEncoder` waits at it inside `encode`, like an encoder stuck on a slow frame.
final class Gate: Sendable {
    private let lock = ConditionLock()
    nonisolated(unsafe) private var open = false      // guarded by lock
    nonisolated(unsafe) private var arrivals = 0      // guarded by lock

    func pass() {
        lock.withLock {
            arrivals += 1
            lock.broadcast()
            while !open { lock.wait() }
        }
    }
    func release() { lock.withLock { open = true; lock.broadcast() } }
    func waitForArrival(timeout: Double) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        return lock.withLock {
            while arrivals == 0 { if !lock.wait(untilMonotonic: deadline) { return arrivals > 0 } }
            return true
        }
    }
}

/// A real x264 encoder that stops at a gate before each frame.
final class GatedEncoder: VideoEncoder {
    let inner: X264Encoder
    let gate: Gate
    init(_ inner: X264Encoder, gate: Gate) { self.inner = inner; self.gate = gate }
    var name: String { inner.name }
    var settings: VideoEncoderSettings { inner.settings }
    var streamDescription: StreamDescription { inner.streamDescription }
    func encode(_ frame: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket] {
        gate.pass()
        return try inner.encode(frame, pts: pts, forceKeyframe: forceKeyframe)
    }
    func flush() throws -> [EncodedPacket] { try inner.flush() }
}


func frame(_ n: Int) -> VideoFrame {
    SyntheticMedia.frame(width: 320, height: 180, yuv: n % 60 < 30 ? SyntheticMedia.green : SyntheticMedia.red, index: n)
}
func pts(_ n: Int) -> MediaTime { MediaTime(count: Int64(n), rate: Rational(30)) }

@Suite(.serialized) struct VideoEncodingStageTests {
    @Test func dropsAndCountsWhenItsQueueIsFull() throws {
        let gate = Gate()
        let events = CollectingSink()
        let collector = ItemCollector()
        let stage = VideoEncodingStage(encoder: GatedEncoder(try X264Encoder(settings: smallSettings), gate: gate),
                                       queueCapacity: 4, events: events, deliver: collector.deliver)
        #expect(stage.submit(frame(0), pts: pts(0)))
        #expect(gate.waitForArrival(timeout: 10), "the stage thread took frame 0")
        var accepted: [Int] = []
        for n in 1...10 where stage.submit(frame(n), pts: pts(n)) { accepted.append(n) }
        #expect(accepted == [1, 2, 3, 4], "the queue holds 4, the rest are refused without blocking")
        var statistics = stage.statistics
        #expect(statistics.framesIn == 5 && statistics.framesDropped == 6)
        #expect(events.events(.framesDropped).count == 1, "one event per run of drops")
        // The first drop is reported at once; the others wait for the 5 s rate limit or the finish.
        let first = try #require(events.events(.framesDropped).first)
        #expect(first.details == ["stage": "video", "reason": "encoder queue full", "dropped": "1", "dropped_total": "1"])
        gate.release()
        stage.finish()
        statistics = stage.statistics
        let reports = events.events(.framesDropped)
        #expect(reports.count == 2, "the rest of the run in one report at finish")
        #expect(reports.last?.details["dropped"] == "5" && reports.last?.details["dropped_total"] == "6")
        #expect(reports.compactMap { $0.details["dropped"].flatMap { Int($0) } }.reduce(0, +) == statistics.framesDropped)
        #expect(statistics.packetsOut == 5)
        #expect(collector.packets.map(\.pts) == [0, 1, 2, 3, 4].map(pts))
        guard case .format(let description) = collector.items.first else { Issue.record("format first"); return }
        #expect(description.encoderName == "libx264" && description.generation == 0)
        guard case .endOfStream = collector.items.last else { Issue.record("end of stream last"); return }
        let chosen = events.events(.encoderChosen)
        #expect(chosen.count == 1)
        #expect(chosen.first?.details["encoder"] == "libx264")
        #expect(chosen.first?.details["preset"] == "ultrafast")
        #expect(chosen.first?.details["bitrate"] == "400000")
        #expect(!stage.submit(frame(11), pts: pts(11)), "refused after finish")
    }

    @Test func requestKeyframeMakesTheNextFrameAnIDR() throws {
        let collector = ItemCollector()
        let stage = VideoEncodingStage(encoder: try X264Encoder(settings: smallSettings), queueCapacity: 64,
                                       events: DiscardingEventSink(), deliver: collector.deliver)
        for n in 0..<20 { #expect(stage.submit(frame(n), pts: pts(n))) }
        #expect(waitUntil { stage.statistics.packetsOut == 20 })
        stage.requestKeyframe()
        for n in 20..<30 { #expect(stage.submit(frame(n), pts: pts(n))) }
        stage.finish()
        let keyframes = collector.packets.enumerated().filter { $0.element.isKeyframe }.map(\.offset)
        #expect(keyframes == [0, 20])
        #expect(nalTypes(collector.packets[20].data).contains(5))
    }

    @Test func fallbackAfterAnInjectedFaultSwitchesEncoderWithANewGenerationAndAKeyframe() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let failing = FaultInjectingEncoder(wrapping: try X264Encoder(settings: smallSettings), failAfterFrames: 10)
        let stage = VideoEncodingStage(encoder: failing, queueCapacity: 64, events: events,
                                       fallback: { try X264Encoder(settings: smallSettings) }, deliver: collector.deliver)
        for n in 0..<30 { #expect(stage.submit(frame(n), pts: pts(n))) }
        stage.finish()

        // Items: format(gen 0), 10 packets, format(gen 1), 20 packets, end of stream.
        let items = collector.items
        guard items.count == 33 else { Issue.record("expected 33 items, got \(items.count)"); return }
        guard case .format(let first) = items[0], case .format(let second) = items[11], case .endOfStream = items[32] else {
            Issue.record("formats at 0 and 11, end of stream last"); return
        }
        #expect(first.generation == 0 && second.generation == 1)
        #expect(second.extradata.first == 1)
        let packets = collector.packets
        #expect(packets.map(\.pts) == (0..<30).map(pts), "timestamps continuous: the failed frame is re-encoded")
        #expect(packets.prefix(10).allSatisfy { $0.generation == 0 })
        #expect(packets.suffix(20).allSatisfy { $0.generation == 1 })
        #expect(packets[10].isKeyframe && nalTypes(packets[10].data).contains(5), "the new encoder starts with an IDR")
        #expect(packets.enumerated().filter { $0.element.isKeyframe }.map(\.offset) == [0, 10])
        #expect(events.events(.error).count == 1)
        let fallback = events.events(.encoderFallback)
        #expect(fallback.count == 1)
        #expect(fallback.first?.details["generation"] == "1")
        #expect(fallback.first?.details["reason"]?.contains("injected") == true)
        let statistics = stage.statistics
        #expect(statistics.generation == 1 && statistics.encodeErrors == 1 && statistics.packetsOut == 30)
    }

    @Test func withoutAFallbackAFailingEncoderReportsOnceAndKeepsCounting() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let failing = FaultInjectingEncoder(wrapping: try X264Encoder(settings: smallSettings), failAfterFrames: 3)
        let stage = VideoEncodingStage(encoder: failing, queueCapacity: 64, events: events, deliver: collector.deliver)
        for n in 0..<10 { stage.submit(frame(n), pts: pts(n)) }
        stage.finish()
        #expect(collector.packets.count == 3)
        #expect(events.events(.error).count == 1)
        #expect(stage.statistics.encodeErrors == 7)
        guard case .endOfStream = collector.items.last else { Issue.record("end of stream last"); return }
    }
}

@Suite(.serialized) struct AudioEncodingStageTests {
    @Test func encodesChunksAndEndsTheStream() throws {
        let events = CollectingSink()
        let collector = ItemCollector()
        let stage = AudioEncodingStage(encoder: try AACEncoder(), queueCapacity: 64, events: events, deliver: collector.deliver)
        var next: Int64 = 0
        for _ in 0..<25 {  // 0.5 s in 20 ms chunks
            #expect(stage.submit(SyntheticMedia.audio(firstSample: next, count: 960)))
            next += 960
        }
        stage.finish()
        guard case .format(let description) = collector.items.first, case .endOfStream = collector.items.last else {
            Issue.record("format first, end of stream last"); return
        }
        #expect(description.codec == .aac && description.encoderName == "aac")
        let packets = collector.packets
        #expect(packets.count == 24000 / 1024 + 2)  // full frames, the short last frame, and the flushed delay
        #expect(packets.enumerated().allSatisfy { $0.element.pts == MediaTime(count: Int64($0.offset) * 1024 - 1024, rate: Rational(48_000)) })
        #expect(stage.statistics.framesIn == 25 && stage.statistics.packetsOut == packets.count)
        #expect(events.events(.encoderChosen).first?.details["kind"] == "audio")
    }
}
