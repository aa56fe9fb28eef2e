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
    private var items: [Element] = []
    private var head = 0
    private var closed = false

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Appends unless full or closed. Never blocks.
    @discardableResult
    public func offer(_ element: Element) -> Bool {
        let accepted = lock.withLock { () -> Bool in
            guard !closed, items.count - head < capacity else { return false }
            items.append(element)
            return true
        }
        if accepted { lock.signal() }
        return accepted
    }

    /// Runs `body` on the pending items under the lock, so a producer can apply its own drop policy
    /// (for example drop the oldest non-key video first) and then append. Returns `body`'s result.
    public func modify<T>(_ body: (inout [Element]) -> T) -> T {
        let result = lock.withLock { () -> T in
            compact()
            return body(&items)
        }
        lock.broadcast()
        return result
    }

    /// Takes the oldest item, waiting up to `timeoutSeconds` (forever when nil).
    public func pop(timeoutSeconds: Double? = nil) -> PopResult {
        let deadline = timeoutSeconds.map { MonotonicClock.now() + UInt64(max(0, $0) * 1e9) }
        return lock.withLock {
            while head == items.count {
                if closed { return .endOfStream }
                if let deadline {
                    if !lock.wait(untilMonotonic: deadline), head == items.count { return closed ? .endOfStream : .timedOut }
                } else {
                    lock.wait()
                }
            }
            let element = items[head]
            head += 1
            if head > 64 && head * 2 > items.count { compact() }
            return .item(element)
        }
    }

    /// Takes every pending item without waiting.
    public func drain() -> [Element] {
        lock.withLock {
            compact()
            defer { items.removeAll(keepingCapacity: true) }
            return items
        }
    }

    /// End of stream: consumers drain what is pending, then get `.endOfStream`; offers are refused.
    public func close() {
        lock.withLock { closed = true }
        lock.broadcast()
    }

    public var isClosed: Bool { lock.withLock { closed } }
    public var count: Int { lock.withLock { items.count - head } }

    private func compact() {
        if head > 0 {
            items.removeFirst(head)
            head = 0
        }
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
