import Testing
import StudioCore
import Output

/// Packets as an encoder would emit them (sizes shaped like H.264/AAC: big keyframes, small P-frames).
private func videoPacket(_ n: Int, gop: Int = 30) -> EncodedPacket {
    let time = MediaTime(count: Int64(n), rate: Rational(30))
    return EncodedPacket(kind: .video, data: [UInt8](repeating: 1, count: n % gop == 0 ? 4000 : 800), pts: time, dts: time,
                         duration: MediaTime(count: 1, rate: Rational(30)), isKeyframe: n % gop == 0)
}

private func audioPacket(_ k: Int) -> EncodedPacket {
    let time = MediaTime(count: Int64(k) * 1024, rate: Rational(48_000))
    return EncodedPacket(kind: .audio, data: [UInt8](repeating: 2, count: 300), pts: time, dts: time,
                         duration: MediaTime(count: 1024, rate: Rational(48_000)), isKeyframe: true)
}

private let videoFormat = StreamDescription(kind: .video, codec: .h264, width: 320, height: 180, bitRate: 1, extradata: [1], encoderName: "x")
private let audioFormat = StreamDescription(kind: .audio, codec: .aac, sampleRate: 48_000, channels: 2, bitRate: 1, extradata: [0x11], encoderName: "aac")

/// Offers `seconds` of interleaved audio and video in time order, as the fan-out would.
private func feed(_ queue: OutputQueue, from start: Double = 0, seconds: Double, gop: Int = 30) -> (video: Int, audio: Int) {
    var n = Int(start * 30), k = Int((start * 48_000 / 1024).rounded(.up))
    var offered = (video: 0, audio: 0)
    let end = start + seconds
    while Double(n) / 30 < end || Double(k) * 1024 / 48_000 < end {
        if Double(n) / 30 <= Double(k) * 1024 / 48_000 {
            queue.offer(.packet(videoPacket(n, gop: gop))); n += 1; offered.video += 1
        } else {
            queue.offer(.packet(audioPacket(k))); k += 1; offered.audio += 1
        }
    }
    return offered
}

private func drain(_ queue: OutputQueue) -> [MediaItem] {
    var items: [MediaItem] = []
    while case .item(let item) = queue.pop(timeoutSeconds: 0) { items.append(item) }
    return items
}

@Suite struct OutputQueueTests {
    @Test func aBlockedConsumerLosesVideoFirstInWholeRunsAndKeepsAudio() {
        let queue = OutputQueue(limits: .init(maxVideoSeconds: 1.0, maxAudioSeconds: 3.0))
        queue.offer(.format(videoFormat))
        queue.offer(.format(audioFormat))
        let offered = feed(queue, seconds: 2.5)  // nobody pops: the output is blocked
        let items = drain(queue)
        let video = items.compactMap { if case .packet(let p) = $0, p.kind == .video { p } else { nil } }
        let audio = items.compactMap { if case .packet(let p) = $0, p.kind == .audio { p } else { nil } }
        guard case .format(let first) = items[0], case .format(let second) = items[1] else {
            Issue.record("formats are never dropped"); return
        }
        #expect(first.kind == .video && second.kind == .audio)
        #expect(queue.droppedAudio == 0, "audio is under its own limit: intact")
        #expect(audio.count == offered.audio)
        #expect(zip(audio, audio.dropFirst()).allSatisfy { $1.pts.microseconds - $0.pts.microseconds == 21_333 || $1.pts.microseconds - $0.pts.microseconds == 21_334 })
        #expect(queue.droppedVideo > 0)
        #expect(queue.droppedVideo + video.count == offered.video, "every dropped frame is counted")
        #expect(queue.droppedForSpace == queue.droppedVideo, "every drop here was for space")
        #expect(video.first?.isKeyframe == true, "what is left starts at a keyframe")
        #expect(video.first?.pts == MediaTime.seconds(2), "whole GOPs went: the GOP at 2 s remains")
        func index(_ p: EncodedPacket) -> Int { Int((p.pts.seconds * 30).rounded()) }
        let runs = zip(video, video.dropFirst()).allSatisfy { index($1) - index($0) == 1 || $1.isKeyframe }
        #expect(runs, "no holes inside a GOP")
    }

    @Test func audioGoesOnlyWhenItIsOverItsOwnLimit() {
        let queue = OutputQueue(limits: .init(maxVideoSeconds: 1.0, maxAudioSeconds: 2.0))
        let offered = feed(queue, seconds: 4)
        let items = drain(queue)
        let audio = items.compactMap { if case .packet(let p) = $0, p.kind == .audio { p } else { nil } }
        let video = items.compactMap { if case .packet(let p) = $0, p.kind == .video { p } else { nil } }
        #expect(queue.droppedAudio > 0 && queue.droppedAudio + audio.count == offered.audio)
        #expect(queue.droppedVideo + video.count == offered.video)
        let videoSpan = (video.last!.dts - video.first!.dts).seconds
        #expect(videoSpan <= 1.0, "video is held to the shorter limit")
        let audioSpan = (audio.last!.dts - audio.first!.dts).seconds
        #expect(audioSpan <= 2.0 && audioSpan > 1.9, "audio keeps the newest 2 s, oldest dropped first")
    }

    @Test func afterDroppingTheGOPInFlightVideoIsSkippedUntilTheNextKeyframe() {
        // Long GOPs (4 s) and a 1 s limit: the only GOP in the queue must go, and its later P-frames too.
        let queue = OutputQueue(limits: .init(maxVideoSeconds: 1.0, maxAudioSeconds: 10))
        _ = feed(queue, seconds: 1.5, gop: 120)
        var items = drain(queue)
        var video = items.compactMap { if case .packet(let p) = $0, p.kind == .video { p } else { nil } }
        #expect(video.isEmpty, "P-frames whose keyframe was dropped are not delivered")
        _ = feed(queue, from: 1.5, seconds: 2.6, gop: 120)  // crosses the keyframe at 4 s
        items = drain(queue)
        video = items.compactMap { if case .packet(let p) = $0, p.kind == .video { p } else { nil } }
        #expect(video.first?.isKeyframe == true)
        #expect(video.first?.pts == MediaTime.seconds(4))
        #expect(queue.droppedVideo == 120, "frames 0..<120 offered before 4 s, all dropped and counted")
        #expect(queue.droppedForSpace == 120, "the skipped P-frames are congestion drops too")
        queue.countDrop(video: 2, audio: 1)
        #expect(queue.droppedVideo == 122 && queue.droppedAudio == 1 && queue.droppedForSpace == 120,
                "the consumer's own drops (a keyframe wait, a stale generation) are not congestion")
    }

    @Test func byteLimitAlsoDropsVideoFirst() {
        let queue = OutputQueue(limits: .init(maxVideoSeconds: 100, maxAudioSeconds: 100, maxBytes: 80_000))
        let offered = feed(queue, seconds: 3)
        #expect(queue.droppedAudio == 0)
        #expect(queue.droppedVideo > 0)
        let remaining = drain(queue).reduce(0) { sum, item in if case .packet(let p) = item { sum + p.data.count } else { sum } }
        #expect(remaining <= 80_000)
        #expect(offered.video > queue.droppedVideo)
    }

    @Test func closedQueueDrainsThenEnds() {
        let queue = OutputQueue()
        queue.offer(.packet(videoPacket(0)))
        queue.close()
        queue.offer(.packet(videoPacket(1)))
        guard case .item(.packet(let p)) = queue.pop(timeoutSeconds: 0) else { Issue.record("pending item first"); return }
        #expect(p.pts == .zero)
        guard case .endOfStream = queue.pop(timeoutSeconds: 0) else { Issue.record("then end of stream"); return }
    }
}
