import Synchronization
import StudioCore
import StudioSystem

/// The bounded queue in front of one output. Producers (the fan-out, on the encoder threads) never
/// block; when the queued media exceeds its limits the queue drops, in this order:
/// 1. video, oldest first, a whole run up to the next queued keyframe: first the non-key rest of the GOP
///    in flight, then whole GOPs. If no later keyframe is queued, arriving video is skipped until the next
///    keyframe (P-frames depend on the frames before them), so what the consumer gets always decodes;
/// 2. audio only when no video is left to drop and audio alone is over its own (longer) limit.
/// Formats and end of stream are never dropped. Every dropped packet is counted per kind.
public final class OutputQueue: Sendable {
    public struct Limits: Sendable, Hashable {
        /// Queued video may span at most this much media time (newest packet minus oldest video packet).
        public var maxVideoSeconds: Double
        /// Queued audio may span at most this much; longer than video so audio is never dropped first.
        public var maxAudioSeconds: Double
        /// Total queued payload; over it, video goes first.
        public var maxBytes: Int

        public init(maxVideoSeconds: Double = 2.5, maxAudioSeconds: Double = 6, maxBytes: Int = 16 << 20) {
            self.maxVideoSeconds = maxVideoSeconds
            self.maxAudioSeconds = max(maxAudioSeconds, maxVideoSeconds)
            self.maxBytes = maxBytes
        }
    }

    /// Policy state. `@unchecked Sendable`: only touched inside `queue.modify`, i.e. under the queue's lock.
    private final class PolicyState: @unchecked Sendable {
        var skippingVideo = false
        var closed = false
        var newest: Int64 = .min
    }

    public let limits: Limits
    private let queue = BoundedQueue<MediaItem>(capacity: 1 << 30)
    private let state = PolicyState()
    private let video = Atomic<Int>(0)
    private let audio = Atomic<Int>(0)

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Adds an item (never blocks), then applies the drop policy. Ignored after `close()`.
    public func offer(_ item: MediaItem) {
        let limits = self.limits
        let state = self.state
        let (droppedVideo, droppedAudio) = queue.modify { items -> (Int, Int) in
            guard !state.closed else { return (0, 0) }
            if case .packet(let packet) = item {
                if packet.kind == .video, state.skippingVideo {
                    guard packet.isKeyframe else { return (1, 0) }
                    state.skippingVideo = false
                }
                state.newest = max(state.newest, packet.dts.microseconds)
            }
            items.append(item)
            return Self.enforce(&items, limits: limits, state: state)
        }
        if droppedVideo > 0 { video.add(droppedVideo, ordering: .relaxed) }
        if droppedAudio > 0 { audio.add(droppedAudio, ordering: .relaxed) }
    }

    /// Takes the oldest item, waiting up to `timeoutSeconds` (forever when nil). After `close()` the
    /// pending items still come out, then `.endOfStream`.
    public func pop(timeoutSeconds: Double? = nil) -> BoundedQueue<MediaItem>.PopResult {
        queue.pop(timeoutSeconds: timeoutSeconds)
    }

    /// End of stream: no more offers; the consumer drains and then sees `.endOfStream`.
    public func close() {
        let state = self.state
        queue.modify { _ in state.closed = true }
        queue.close()
    }

    /// Drops every queued packet (counted) but keeps formats; used when an output gives up.
    public func discardPackets() {
        let (v, a) = queue.modify { items -> (Int, Int) in
            var v = 0, a = 0
            items.removeAll { item in
                guard case .packet(let packet) = item else { return false }
                if packet.kind == .video { v += 1 } else { a += 1 }
                return true
            }
            return (v, a)
        }
        countDrop(video: v, audio: a)
    }

    /// Drops made by the consumer (waiting for a keyframe, stale audio) are counted here too.
    public func countDrop(video droppedVideo: Int = 0, audio droppedAudio: Int = 0) {
        if droppedVideo > 0 { video.add(droppedVideo, ordering: .relaxed) }
        if droppedAudio > 0 { audio.add(droppedAudio, ordering: .relaxed) }
    }

    public var droppedVideo: Int { video.load(ordering: .relaxed) }
    public var droppedAudio: Int { audio.load(ordering: .relaxed) }
    public var count: Int { queue.count }
    public var isClosed: Bool { queue.isClosed }

    /// The queued payload in bytes and the media time it spans per kind.
    public var backlog: (bytes: Int, videoSeconds: Double, audioSeconds: Double) {
        let state = self.state
        return queue.modify { items in
            let scan = Self.scan(items)
            func span(_ index: Int?) -> Double {
                guard let index, case .packet(let p) = items[index] else { return 0 }
                return Double(state.newest - p.dts.microseconds) / 1e6
            }
            return (scan.bytes, span(scan.oldestVideo), span(scan.oldestAudio))
        }
    }

    private static func scan(_ items: [MediaItem]) -> (bytes: Int, oldestVideo: Int?, oldestAudio: Int?) {
        var bytes = 0
        var oldestVideo: Int?, oldestAudio: Int?
        for (index, item) in items.enumerated() {
            guard case .packet(let packet) = item else { continue }
            bytes += packet.data.count
            if packet.kind == .video { if oldestVideo == nil { oldestVideo = index } } else if oldestAudio == nil { oldestAudio = index }
        }
        return (bytes, oldestVideo, oldestAudio)
    }

    private static func enforce(_ items: inout [MediaItem], limits: Limits, state: PolicyState) -> (Int, Int) {
        var droppedVideo = 0, droppedAudio = 0
        let maxVideo = Int64(limits.maxVideoSeconds * 1e6), maxAudio = Int64(limits.maxAudioSeconds * 1e6)
        func dts(_ index: Int) -> Int64 {
            if case .packet(let packet) = items[index] { return packet.dts.microseconds }
            return state.newest
        }
        while true {
            let scan = scan(items)
            let overBytes = scan.bytes > limits.maxBytes
            if let first = scan.oldestVideo, overBytes || state.newest - dts(first) > maxVideo {
                droppedVideo += dropVideoRun(&items, from: first, state: state)
                continue
            }
            if let first = scan.oldestAudio, overBytes || state.newest - dts(first) > maxAudio {
                items.remove(at: first)
                droppedAudio += 1
                continue
            }
            return (droppedVideo, droppedAudio)
        }
    }

    /// Removes the video packet at `start` and every later video packet before the next video keyframe.
    private static func dropVideoRun(_ items: inout [MediaItem], from start: Int, state: PolicyState) -> Int {
        var index = start
        var dropped = 0
        var reachedKeyframe = false
        while index < items.count {
            if case .packet(let packet) = items[index], packet.kind == .video {
                if packet.isKeyframe, dropped > 0 {
                    reachedKeyframe = true
                    break
                }
                items.remove(at: index)
                dropped += 1
            } else {
                index += 1
            }
        }
        if !reachedKeyframe { state.skippingVideo = true }
        return dropped
    }
}
