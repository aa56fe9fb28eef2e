import Testing
import StudioCore
@testable import Output

/// A small seeded generator (SplitMix64): the random sequences below are the same on every run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let videoFormat = StreamDescription(kind: .video, codec: .h264, width: 320, height: 180, bitRate: 1, extradata: [1], encoderName: "x")
private let audioFormat = StreamDescription(kind: .audio, codec: .aac, sampleRate: 48_000, channels: 2, bitRate: 1, extradata: [0x11], encoderName: "aac")

/// What a random producer and consumer do to a queue, one step at a time.
private enum Step {
    case video(EncodedPacket)
    case audio(EncodedPacket)
    case format(StreamDescription)
    case pop
    case discard
}

/// Interleaved video (random GOP lengths and frame sizes) and audio in time order, formats now and then,
/// pops in bursts (a consumer that sometimes stalls) and, rarely, a discard.
private func randomSteps(seed: UInt64, count: Int) -> [Step] {
    var random = SeededGenerator(state: seed)
    var steps: [Step] = []
    var frame = 0, sample: Int64 = 0, untilKeyframe = 0
    while steps.count < count {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<35:
            let time = MediaTime(count: Int64(frame), rate: Rational(30))
            let keyframe = untilKeyframe == 0
            untilKeyframe = keyframe ? Int.random(in: 5...60, using: &random) : untilKeyframe - 1
            let size = keyframe ? Int.random(in: 3000...9000, using: &random) : Int.random(in: 200...1500, using: &random)
            steps.append(.video(EncodedPacket(kind: .video, data: [UInt8](repeating: 1, count: size), pts: time, dts: time,
                                              duration: MediaTime(count: 1, rate: Rational(30)), isKeyframe: keyframe)))
            frame += 1
        case 35..<75:
            let time = MediaTime(count: sample, rate: Rational(48_000))
            steps.append(.audio(EncodedPacket(kind: .audio, data: [UInt8](repeating: 2, count: Int.random(in: 100...400, using: &random)),
                                              pts: time, dts: time, duration: MediaTime(count: 1024, rate: Rational(48_000)),
                                              isKeyframe: true)))
            sample += 1024
        case 75..<77:
            steps.append(.format(Bool.random(using: &random) ? videoFormat : audioFormat))
        case 77..<99:
            steps.append(contentsOf: Array(repeating: .pop, count: Int.random(in: 1...40, using: &random)))
        default:
            steps.append(.discard)
        }
    }
    return steps
}

/// The totals as a rescan of the queued items computes them.
private func rescan(_ items: [MediaItem]) -> OutputQueue.Totals {
    var totals = OutputQueue.Totals()
    for case .packet(let packet) in items {
        totals.bytes += packet.data.count
        if packet.kind == .video {
            totals.videoPackets += 1
            totals.videoDuration = totals.videoDuration + packet.duration
        } else {
            totals.audioPackets += 1
            totals.audioDuration = totals.audioDuration + packet.duration
        }
    }
    return totals
}

/// The drop policy as the queue applied it before it kept running totals: rescanning every queued item
/// after each offer. The queue must decide exactly as this does.
private struct RescanningQueue {
    let limits: OutputQueue.Limits
    var items: [MediaItem] = []
    var newest: Int64 = .min
    var skippingVideo = false
    var droppedVideo = 0, droppedAudio = 0

    mutating func offer(_ item: MediaItem) {
        if case .packet(let packet) = item {
            if packet.kind == .video, skippingVideo {
                guard packet.isKeyframe else { droppedVideo += 1; return }
                skippingVideo = false
            }
            newest = max(newest, packet.dts.microseconds)
        }
        items.append(item)
        while true {
            let packets = items.enumerated().compactMap { entry -> (Int, EncodedPacket)? in
                if case .packet(let packet) = entry.element { (entry.offset, packet) } else { nil }
            }
            let overBytes = packets.reduce(0) { $0 + $1.1.data.count } > limits.maxBytes
            if let (index, oldest) = packets.first(where: { $0.1.kind == .video }),
               overBytes || newest - oldest.dts.microseconds > Int64(limits.maxVideoSeconds * 1e6) {
                var position = index, dropped = 0, reachedKeyframe = false
                while position < items.count {
                    guard case .packet(let packet) = items[position], packet.kind == .video else { position += 1; continue }
                    if packet.isKeyframe, dropped > 0 { reachedKeyframe = true; break }
                    items.remove(at: position)
                    dropped += 1
                }
                droppedVideo += dropped
                if !reachedKeyframe { skippingVideo = true }
            } else if let (index, oldest) = packets.first(where: { $0.1.kind == .audio }),
                      overBytes || newest - oldest.dts.microseconds > Int64(limits.maxAudioSeconds * 1e6) {
                items.remove(at: index)
                droppedAudio += 1
            } else {
                return
            }
        }
    }

    mutating func pop() -> MediaItem? { items.isEmpty ? nil : items.removeFirst() }

    mutating func discardPackets() {
        for case .packet(let packet) in items { if packet.kind == .video { droppedVideo += 1 } else { droppedAudio += 1 } }
        items.removeAll { if case .packet = $0 { true } else { false } }
    }
}

/// An item as text, to compare what two queues hand out.
private func describe(_ item: MediaItem?) -> String {
    switch item {
    case .packet(let packet)?: "\(packet.kind) \(packet.dts.microseconds)\(packet.isKeyframe ? " key" : "") \(packet.data.count)"
    case .format(let description)?: "format \(description.kind)"
    case .endOfStream?: "end"
    case nil: "none"
    }
}

@Suite struct OutputQueueTotalsTests {
    @Test(arguments: [(1, 1.0, 2.0, 120_000), (2, 0.5, 3.0, 60_000), (3, 2.5, 6.0, 16 << 20), (4, 1.0, 1.0, 30_000)] as [(UInt64, Double, Double, Int)])
    func dropsExactlyWhatARescanningQueueDrops(seed: UInt64, maxVideo: Double, maxAudio: Double, maxBytes: Int) {
        let limits = OutputQueue.Limits(maxVideoSeconds: maxVideo, maxAudioSeconds: maxAudio, maxBytes: maxBytes)
        let queue = OutputQueue(limits: limits)
        var reference = RescanningQueue(limits: limits)
        for step in randomSteps(seed: seed, count: 5000) {
            switch step {
            case .video(let packet), .audio(let packet):
                queue.offer(.packet(packet))
                reference.offer(.packet(packet))
            case .format(let description):
                queue.offer(.format(description))
                reference.offer(.format(description))
            case .pop:
                var item: MediaItem?
                if case .item(let popped) = queue.pop(timeoutSeconds: 0) { item = popped }
                #expect(describe(item) == describe(reference.pop()))
            case .discard:
                queue.discardPackets()
                reference.discardPackets()
            }
            #expect(queue.droppedVideo == reference.droppedVideo && queue.droppedAudio == reference.droppedAudio)
        }
        #expect(queue.pending.map(describe) == reference.items.map(describe))
        #expect(reference.droppedVideo > 0)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func runningTotalsStayEqualToARescan(seed: UInt64) {
        let limits = OutputQueue.Limits(maxVideoSeconds: 1, maxAudioSeconds: 2, maxBytes: 120_000)
        let queue = OutputQueue(limits: limits)
        var popped = 0, offered = 0, sawDrops = false
        for step in randomSteps(seed: seed, count: 6000) {
            switch step {
            case .video(let packet), .audio(let packet):
                queue.offer(.packet(packet))
                offered += 1
            case .format(let description):
                queue.offer(.format(description))
            case .pop:
                if case .item(.packet) = queue.pop(timeoutSeconds: 0) { popped += 1 }
            case .discard:
                queue.discardPackets()
            }
            let pending = queue.pending
            let totals = queue.totals
            #expect(totals == rescan(pending), "after \(step)")
            #expect(queue.backlog.bytes == totals.bytes)
            #expect(queue.count == pending.count)
            if totals.videoPackets + totals.audioPackets > 0 { #expect(totals.bytes <= limits.maxBytes) }
            sawDrops = sawDrops || (queue.droppedVideo > 0 && queue.droppedAudio > 0)
        }
        let rest = rescan(queue.pending)
        #expect(popped + queue.droppedVideo + queue.droppedAudio + rest.videoPackets + rest.audioPackets == offered,
                "every packet offered is popped, dropped (counted) or still queued")
        #expect(sawDrops, "the sequence exercises both kinds of drop")
    }

    @Test func backlogSpansTheNewestPacketToTheOldestOfEachKind() {
        let queue = OutputQueue(limits: .init(maxVideoSeconds: 10, maxAudioSeconds: 10))
        for n in 0..<30 {
            let time = MediaTime(count: Int64(n), rate: Rational(30))
            queue.offer(.packet(EncodedPacket(kind: .video, data: [1, 2, 3], pts: time, dts: time,
                                              duration: MediaTime(count: 1, rate: Rational(30)), isKeyframe: n == 0)))
        }
        let audioTime = MediaTime.milliseconds(500)
        queue.offer(.packet(EncodedPacket(kind: .audio, data: [4], pts: audioTime, dts: audioTime,
                                          duration: MediaTime(count: 1024, rate: Rational(48_000)), isKeyframe: true)))
        var backlog = queue.backlog
        #expect(backlog.bytes == 91)
        #expect(abs(backlog.videoSeconds - 29.0 / 30) < 1e-6 && abs(backlog.audioSeconds - (29.0 / 30 - 0.5)) < 1e-6)
        _ = queue.pop(timeoutSeconds: 0)
        backlog = queue.backlog
        #expect(backlog.bytes == 88)
        #expect(abs(backlog.videoSeconds - 28.0 / 30) < 1e-6)
        #expect(queue.totals.videoDuration.microseconds == 29 * MediaTime(count: 1, rate: Rational(30)).microseconds)
        #expect(queue.totals.audioPackets == 1 && queue.totals.audioDuration == MediaTime(count: 1024, rate: Rational(48_000)))
    }
}

@Suite struct SequencedFIFOTests {
    @Test func popsInOrderSkippingWhatWasRemovedFromTheMiddle() {
        var fifo = SequencedFIFO<String>()
        let a = fifo.append("a"), b = fifo.append("b"), c = fifo.append("c")
        #expect((a, b, c) == (0, 1, 2))
        #expect(fifo.remove(b) == "b")
        #expect(fifo.remove(b) == nil, "removed once")
        #expect(fifo[c] == "c" && fifo[b] == nil)
        #expect(fifo.count == 2 && fifo.elements == ["a", "c"])
        #expect(fifo.popFirst() == "a")
        #expect(fifo.first == "c", "the hole left by b is skipped")
        #expect(fifo.popFirst() == "c" && fifo.popFirst() == nil && fifo.isEmpty)
        #expect(fifo.append("d") == 3, "sequence numbers keep counting after the FIFO emptied")
        #expect(fifo[3] == "d" && fifo[0] == nil)
    }

    @Test func matchesAnArrayUnderRandomAppendsPopsAndRemovals() {
        var random = SeededGenerator(state: 42)
        var fifo = SequencedFIFO<Int>()
        var model: [(sequence: Int, value: Int)] = []
        for value in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                model.append((fifo.append(value), value))
            case 5..<8:
                #expect(fifo.popFirst() == model.first?.value)
                if !model.isEmpty { model.removeFirst() }
            default:
                guard !model.isEmpty else { continue }
                let index = Int.random(in: 0..<model.count, using: &random)
                #expect(fifo.remove(model[index].sequence) == model[index].value)
                model.remove(at: index)
            }
            #expect(fifo.count == model.count && fifo.first == model.first?.value)
        }
        #expect(fifo.elements == model.map(\.value))
        for entry in model { #expect(fifo[entry.sequence] == entry.value) }
    }
}
