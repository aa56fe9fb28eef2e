/// A bounded FIFO between two stages, carrying end-of-stream. Producers never block: `offer` refuses
/// when the queue is full and the producer decides what to drop (and counts it). Consumers block in
/// `pop` with an optional timeout.
///
/// `@unchecked Sendable`: all mutable state is guarded by `lock`.
public final class BoundedQueue<Element>: @unchecked Sendable {
    public enum PopResult {
        case item(Element)
        case timedOut
        case endOfStream
    }

    public let capacity: Int
    private let lock = ConditionLock()
    /// Pending items in order. Popped elements are released at once (a queue of frames must not keep
    /// frames alive after the consumer took them), hence the ring of optionals.
    private var ring: [Element?]
    private var head = 0
    private var count_ = 0
    private var closed = false

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        ring = Array(repeating: nil, count: min(capacity, 64))
    }

    /// Appends unless full or closed. Never blocks. With `wake` false a consumer waiting in `pop` is
    /// not woken for it: it takes the item with the next one offered with `wake` (or at `close`), so a
    /// producer whose items are only worth working on in groups (audio chunks that fill an encoder's
    /// frame) saves the consumer a wake-up per item.
    @discardableResult
    public func offer(_ element: Element, wake: Bool = true) -> Bool {
        let accepted = lock.withLock { () -> Bool in
            guard !closed, count_ < capacity else { return false }
            append(element)
            return true
        }
        if accepted && wake { lock.signal() }
        return accepted
    }

    /// Runs `body` on the pending items (oldest first) under the lock, so a producer can apply its own
    /// drop policy (for example drop the oldest non-key video first) and then append. Returns `body`'s result.
    public func modify<T>(_ body: (inout [Element]) -> T) -> T {
        let result = lock.withLock { () -> T in
            var items = takeAll()
            let result = body(&items)
            for item in items { append(item) }
            return result
        }
        lock.broadcast()
        return result
    }

    /// Takes the oldest item, waiting up to `timeoutSeconds` (forever when nil).
    public func pop(timeoutSeconds: Double? = nil) -> PopResult {
        let deadline = timeoutSeconds.map { MonotonicClock.now() + UInt64(max(0, $0) * 1e9) }
        return lock.withLock {
            while count_ == 0 {
                if closed { return .endOfStream }
                if let deadline {
                    if !lock.wait(untilMonotonic: deadline), count_ == 0 { return closed ? .endOfStream : .timedOut }
                } else {
                    lock.wait()
                }
            }
            let element = ring[head]!
            ring[head] = nil
            head = (head + 1) % ring.count
            count_ -= 1
            return .item(element)
        }
    }

    /// Takes every pending item without waiting.
    public func drain() -> [Element] {
        lock.withLock { takeAll() }
    }

    /// End of stream: consumers drain what is pending, then get `.endOfStream`; offers are refused.
    public func close() {
        lock.withLock { closed = true }
        lock.broadcast()
    }

    public var isClosed: Bool { lock.withLock { closed } }
    public var count: Int { lock.withLock { count_ } }

    // Must hold the lock.
    private func append(_ element: Element) {
        if count_ == ring.count {
            // Grow (up to what the items need; `modify` may hold more than `capacity`), keeping order.
            var grown: [Element?] = Array(repeating: nil, count: max(ring.count * 2, 1))
            for i in 0..<count_ { grown[i] = ring[(head + i) % ring.count] }
            ring = grown
            head = 0
        }
        ring[(head + count_) % ring.count] = element
        count_ += 1
    }

    // Must hold the lock.
    private func takeAll() -> [Element] {
        var items: [Element] = []
        items.reserveCapacity(count_)
        for i in 0..<count_ {
            let index = (head + i) % ring.count
            items.append(ring[index]!)
            ring[index] = nil
        }
        head = 0
        count_ = 0
        return items
    }
}

/// Keeps only the newest value: capture threads publish each frame here and the program clock takes
/// the newest on its tick, so a late frame is replaced, never queued up.
///
/// `@unchecked Sendable`: all mutable state is guarded by `lock`.
public final class LatestValue<Value>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Value?
    private var version: UInt64 = 0

    public init(_ initial: Value? = nil) {
        value = initial
        if initial != nil { version = 1 }
    }

    public func publish(_ newValue: Value) {
        lock.withLock {
            value = newValue
            version &+= 1
        }
        lock.broadcast()
    }

    public func clear() {
        lock.withLock { value = nil }
    }

    /// The newest value and its version (0 before the first publish).
    public func latest() -> (value: Value?, version: UInt64) {
        lock.withLock { (value, version) }
    }

    /// Waits until a value newer than `version` is published, or the timeout passes.
    public func waitForNewer(than version: UInt64, timeoutSeconds: Double) -> (value: Value?, version: UInt64) {
        let deadline = MonotonicClock.now() + UInt64(max(0, timeoutSeconds) * 1e9)
        return lock.withLock {
            while self.version <= version {
                if !lock.wait(untilMonotonic: deadline) { break }
            }
            return (value, self.version)
        }
    }
}
