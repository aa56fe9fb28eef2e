import Testing
import StudioSystem

@Suite struct QueueTests {
    @Test func boundedQueueRefusesWhenFullAndCarriesEndOfStream() {
        let queue = BoundedQueue<Int>(capacity: 2)
        #expect(queue.offer(1))
        #expect(queue.offer(2))
        #expect(!queue.offer(3))
        queue.close()
        #expect(!queue.offer(4))
        guard case .item(1) = queue.pop(timeoutSeconds: 0) else { Issue.record("expected 1"); return }
        guard case .item(2) = queue.pop(timeoutSeconds: 0) else { Issue.record("expected 2"); return }
        guard case .endOfStream = queue.pop(timeoutSeconds: 0) else { Issue.record("expected end"); return }
    }

    @Test func popTimesOutAndWakesOnOffer() {
        let queue = BoundedQueue<Int>(capacity: 4)
        guard case .timedOut = queue.pop(timeoutSeconds: 0.01) else { Issue.record("expected timeout"); return }
        let thread = NamedThread.start(name: "test.producer") {
            MonotonicClock.sleep(seconds: 0.02)
            queue.offer(7)
        }
        guard case .item(7) = queue.pop(timeoutSeconds: 5) else { Issue.record("expected 7"); return }
        #expect(thread.join(timeoutSeconds: 5))
    }

    /// An item offered without waking waits for the next offer that wakes (or the close), in order: none
    /// is lost or overtaken.
    @Test func anOfferThatDoesNotWakeGoesWithTheNextThatDoes() {
        let queue = BoundedQueue<Int>(capacity: 8)
        let taken = LatestValue<[Int]>([])
        let consumer = NamedThread.start(name: "test.consumer") {
            var items: [Int] = []
            while case .item(let value) = queue.pop(timeoutSeconds: 10) {
                items.append(value)
                taken.publish(items)
            }
        }
        #expect(queue.offer(1, wake: false))
        #expect(queue.offer(2, wake: false))
        #expect(queue.offer(3))
        // Until the consumer has all three (each of its takes is a version: [1] and [1, 2] come first), or 10 s.
        var seen = taken.latest()
        let deadline = MonotonicClock.now() + 10_000_000_000
        while seen.value != [1, 2, 3], MonotonicClock.now() < deadline { seen = taken.waitForNewer(than: seen.version, timeoutSeconds: 1) }
        #expect(seen.value == [1, 2, 3])
        #expect(queue.offer(4, wake: false))
        queue.close()
        #expect(consumer.join(timeoutSeconds: 5))
        #expect(taken.latest().value == [1, 2, 3, 4])
    }

    @Test func latestValueKeepsOnlyTheNewest() {
        let slot = LatestValue<Int>()
        #expect(slot.latest().version == 0)
        slot.publish(1)
        slot.publish(2)
        let (value, version) = slot.latest()
        #expect(value == 2 && version == 2)
        let waited = slot.waitForNewer(than: 2, timeoutSeconds: 0.01)
        #expect(waited.version == 2)
    }

    @Test func syscallThrowsWithTheCallName() {
        #expect(throws: SystemError.self) {
            try syscall("close") { close(-1) }
        }
        do { try syscall("close") { close(-1) } } catch { #expect(error.call == "close" && error.errno == EBADF) }
    }
}
#if canImport(Glibc)
import Glibc
#endif

@Suite struct QueueReleaseTests {
    final class Token: Sendable {
        let released: LatestValue<Bool>
        init(_ released: LatestValue<Bool>) { self.released = released }
        deinit { released.publish(true) }
    }

    @Test func poppedItemsAreReleasedAtOnce() {
        let queue = BoundedQueue<Token>(capacity: 8)
        let released = LatestValue<Bool>()
        queue.offer(Token(released))
        queue.offer(Token(LatestValue<Bool>()))
        guard case .item = queue.pop(timeoutSeconds: 0) else { Issue.record("expected an item"); return }
        // The queue must not keep the popped token alive (it would keep video frames alive too).
        #expect(released.latest().value == true)
        #expect(queue.count == 1)
    }

    @Test func ringKeepsOrderAcrossWrapAndModify() {
        let queue = BoundedQueue<Int>(capacity: 100)
        var expected: [Int] = []
        var next = 0
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 1) { queue.offer(next); expected.append(next); next += 1 }
            if round % 5 == 0 { queue.modify { items in items.removeAll { $0 % 3 == 0 } }; expected.removeAll { $0 % 3 == 0 } }
            for _ in 0..<(round % 4) {
                guard case .item(let value) = queue.pop(timeoutSeconds: 0) else { break }
                #expect(value == expected.removeFirst())
            }
        }
        #expect(queue.drain() == expected)
        #expect(queue.count == 0)
    }
}
