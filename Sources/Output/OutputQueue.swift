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
///
/// The queue keeps running totals (bytes, packets and duration per kind) and each kind's packets in
/// their own FIFO, updated on offer, pop and drop, so the policy never rescans the queued items.
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

    /// What is queued, kept up to date on every offer, pop and drop.
    public struct Totals: Sendable, Hashable {
        /// Payload bytes of the queued packets.
        public var bytes = 0
        public var videoPackets = 0
        public var audioPackets = 0
        /// Sum of the queued packets' durations, per kind.
        public var videoDuration = MediaTime.zero
        public var audioDuration = MediaTime.zero

        public init() {}

        mutating func add(_ packet: EncodedPacket, sign: Int) {
            bytes += sign * packet.data.count
            let duration = MediaTime(microseconds: Int64(sign) * packet.duration.microseconds)
            if packet.kind == .video {
                videoPackets += sign
                videoDuration = videoDuration + duration
            } else {
                audioPackets += sign
                audioDuration = audioDuration + duration
            }
        }
    }

    /// Everything behind the lock. `@unchecked Sendable`: only touched inside `lock.withLock`.
    private final class State: @unchecked Sendable {
        /// The pending items in order; dropped packets leave holes that `pop` skips.
        var items = SequencedFIFO<MediaItem>()
        /// Sequence numbers (in `items`) of the queued packets of each kind, oldest first.
        var video = SequencedFIFO<Int>()
        var audio = SequencedFIFO<Int>()
        var totals = Totals()
        /// Newest packet dts offered (µs).
        var newest: Int64 = .min
        var skippingVideo = false
        var closed = false
        var droppedVideo = 0
        var droppedAudio = 0
        /// Packets (of either kind) dropped because the queue was over its limits: congestion.
        var droppedForSpace = 0

        func packet(_ sequence: Int) -> EncodedPacket? {
            if case .packet(let packet)? = items[sequence] { return packet }
            return nil
        }

        func append(_ item: MediaItem) {
            let sequence = items.append(item)
            guard case .packet(let packet) = item else { return }
            if packet.kind == .video { _ = video.append(sequence) } else { _ = audio.append(sequence) }
            totals.add(packet, sign: 1)
        }

        /// Removes the oldest packet of `kind` from the queue.
        @discardableResult
        func removeOldest(_ kind: MediaKind) -> EncodedPacket? {
            guard let sequence = kind == .video ? video.popFirst() : audio.popFirst(),
                  case .packet(let packet)? = items.remove(sequence) else { return nil }
            totals.add(packet, sign: -1)
            return packet
        }

        func popFirst() -> MediaItem? {
            guard let item = items.popFirst() else { return nil }
            if case .packet(let packet) = item {
                if packet.kind == .video { _ = video.popFirst() } else { _ = audio.popFirst() }
                totals.add(packet, sign: -1)
            }
            return item
        }

        /// How far the oldest queued packet of `kind` lies behind the newest packet offered (µs).
        func span(_ kind: MediaKind) -> Int64? {
            guard let sequence = (kind == .video ? video : audio).first, let packet = packet(sequence) else { return nil }
            return newest - packet.dts.microseconds
        }
    }

    public let limits: Limits
    private let lock = ConditionLock()
    private let state = State()

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Adds an item (never blocks), then applies the drop policy. Ignored after `close()`.
    public func offer(_ item: MediaItem) {
        let state = self.state
        lock.withLock {
            guard !state.closed else { return }
            if case .packet(let packet) = item {
                if packet.kind == .video, state.skippingVideo {
                    guard packet.isKeyframe else {
                        state.droppedVideo += 1
                        state.droppedForSpace += 1
                        return
                    }
                    state.skippingVideo = false
                }
                state.newest = max(state.newest, packet.dts.microseconds)
            }
            state.append(item)
            enforceLimits()
        }
        lock.broadcast()
    }

    /// Takes the oldest item, waiting up to `timeoutSeconds` (forever when nil). After `close()` the
    /// pending items still come out, then `.endOfStream`.
    public func pop(timeoutSeconds: Double? = nil) -> BoundedQueue<MediaItem>.PopResult {
        let deadline = timeoutSeconds.map { MonotonicClock.now() + UInt64(max(0, $0) * 1e9) }
        let state = self.state
        return lock.withLock {
            while true {
                if let item = state.popFirst() { return .item(item) }
                if state.closed { return .endOfStream }
                if let deadline {
                    if !lock.wait(untilMonotonic: deadline), state.items.isEmpty { return state.closed ? .endOfStream : .timedOut }
                } else {
                    lock.wait()
                }
            }
        }
    }

    /// End of stream: no more offers; the consumer drains and then sees `.endOfStream`.
    public func close() {
        lock.withLock { state.closed = true }
        lock.broadcast()
    }

    /// Drops every queued packet (counted) but keeps formats; used when an output gives up.
    public func discardPackets() {
        let state = self.state
        lock.withLock {
            while state.removeOldest(.video) != nil { state.droppedVideo += 1 }
            while state.removeOldest(.audio) != nil { state.droppedAudio += 1 }
        }
    }

    /// Drops made by the consumer (waiting for a keyframe, stale audio) are counted here too.
    public func countDrop(video droppedVideo: Int = 0, audio droppedAudio: Int = 0) {
        lock.withLock {
            state.droppedVideo += droppedVideo
            state.droppedAudio += droppedAudio
        }
    }

    public var droppedVideo: Int { lock.withLock { state.droppedVideo } }
    public var droppedAudio: Int { lock.withLock { state.droppedAudio } }
    /// Of those, the packets dropped because the queue was over its limits (congestion), the ones the
    /// output warns about; the rest were dropped on purpose (waiting for a keyframe, a stale generation).
    public var droppedForSpace: Int { lock.withLock { state.droppedForSpace } }
    public var count: Int { lock.withLock { state.items.count } }
    public var isClosed: Bool { lock.withLock { state.closed } }
    public var totals: Totals { lock.withLock { state.totals } }

    /// A copy of the pending items, oldest first (diagnostics and tests; the policy never needs it).
    public var pending: [MediaItem] { lock.withLock { state.items.elements } }

    /// The queued payload in bytes and the media time it spans per kind (newest packet offered minus the
    /// oldest queued packet of the kind).
    public var backlog: (bytes: Int, videoSeconds: Double, audioSeconds: Double) {
        let state = self.state
        return lock.withLock {
            (state.totals.bytes, Double(state.span(.video) ?? 0) / 1e6, Double(state.span(.audio) ?? 0) / 1e6)
        }
    }

    // Must hold the lock.
    private func enforceLimits() {
        let maxVideo = Int64(limits.maxVideoSeconds * 1e6), maxAudio = Int64(limits.maxAudioSeconds * 1e6)
        while true {
            let overBytes = state.totals.bytes > limits.maxBytes
            if let span = state.span(.video), overBytes || span > maxVideo {
                dropVideoRun()
                continue
            }
            if let span = state.span(.audio), overBytes || span > maxAudio {
                state.removeOldest(.audio)
                state.droppedAudio += 1
                state.droppedForSpace += 1
                continue
            }
            return
        }
    }

    /// Removes the oldest queued video packet and every later one before the next video keyframe; with
    /// no later keyframe queued, arriving video is skipped until one comes. Must hold the lock.
    private func dropVideoRun() {
        var dropped = 0
        while let sequence = state.video.first, let packet = state.packet(sequence) {
            if packet.isKeyframe, dropped > 0 { return }
            state.removeOldest(.video)
            dropped += 1
            state.droppedVideo += 1
            state.droppedForSpace += 1
        }
        state.skippingVideo = true
    }
}

/// A FIFO whose elements can also be removed from the middle by the sequence number `append` gave
/// them (they leave holes that `popFirst` skips). Every operation is amortized O(1).
struct SequencedFIFO<Element> {
    private var slots: [Element?] = []
    /// Index in `slots` of the oldest slot; never a hole while `count > 0`.
    private var head = 0
    /// Sequence number of `slots[head]`.
    private var headSequence = 0
    /// Elements present (holes not counted).
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The oldest element.
    var first: Element? { count > 0 ? slots[head] : nil }

    /// The elements in order (O(n)).
    var elements: [Element] { slots[head...].compactMap { $0 } }

    /// Appends and returns the element's sequence number.
    mutating func append(_ element: Element) -> Int {
        if count == 0 {
            // Nothing (not even holes) worth keeping before the new element.
            headSequence += slots.count - head
            slots.removeAll(keepingCapacity: true)
            head = 0
        }
        slots.append(element)
        count += 1
        return headSequence + slots.count - 1 - head
    }

    subscript(sequence: Int) -> Element? {
        let index = head + sequence - headSequence
        return slots.indices.contains(index) && index >= head ? slots[index] : nil
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        return remove(headSequence)
    }

    /// Removes the element with this sequence number (nil if it is not there).
    @discardableResult
    mutating func remove(_ sequence: Int) -> Element? {
        let index = head + sequence - headSequence
        guard index >= head, index < slots.count, let element = slots[index] else { return nil }
        slots[index] = nil
        count -= 1
        // Keep the head on an element: skip the holes in front.
        while head < slots.count, slots[head] == nil, count > 0 {
            head += 1
            headSequence += 1
        }
        if head > 64, head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return element
    }
}
