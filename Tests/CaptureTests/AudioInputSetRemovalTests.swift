import Testing
import Synchronization
import Capture
import StudioCore
import StudioSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// An input that gives a constant value and counts the set's calls on it (and on which thread).
final class CountingInput: ClockedAudioInput {
    let value: Float
    private struct Calls { var begins = 0, fills = 0, ends = 0, filledAfterEnd = false, endThread: pthread_t? }
    private let calls = Mutex(Calls())
    init(_ value: Float) { self.value = value }
    var description: String { "counting \(value)" }
    var status: AudioInputStatus { AudioInputStatus(state: "playing") }
    var begins: Int { calls.withLock { $0.begins } }
    var fills: Int { calls.withLock { $0.fills } }
    var ends: Int { calls.withLock { $0.ends } }
    var filledAfterEnd: Bool { calls.withLock { $0.filledAfterEnd } }
    var endThread: pthread_t? { calls.withLock { $0.endThread } }
    func begin(first: Int64, origin: UInt64) { calls.withLock { $0.begins += 1 } }
    func fill(_ block: inout AudioChunk) {
        calls.withLock { calls in
            calls.fills += 1
            if calls.ends > 0 { calls.filledAfterEnd = true }
        }
        for index in block.samples.indices { block.samples[index] = value }
    }
    func stalled(_ silence: AudioChunk) {}
    func end() {
        calls.withLock { calls in
            calls.ends += 1
            calls.endThread = pthread_self()
        }
    }
}

/// `AudioInputSet.remove`: a source's input taken out while the set runs (on a `ManualClock` the test
/// moves a block at a time, so every span comes when the test says).
@Suite struct AudioInputSetRemovalTests {
    /// The set, its clock and the spans it delivered.
    final class Delivered: Sendable {
        let spans = Mutex<[AudioInputBlocks]>([])
        /// The clock thread's id, from the first span.
        let clockThread = Mutex<pthread_t?>(nil)
    }

    final class Rig: Sendable {
        let clock = ManualClock()
        let delivered = Delivered()
        let set: AudioInputSet

        init(inputs: [any ClockedAudioInput]) {
            let delivered = delivered
            set = AudioInputSet(inputs: inputs, clock: clock) { span in
                delivered.clockThread.withLock { if $0 == nil { $0 = pthread_self() } }
                delivered.spans.withLock { $0.append(span) }
            }
        }

        func start() throws {
            set.start(origin: clock.now())
            #expect(clock.waitForSleepers(1))
        }

        /// One block of the clock: the set takes its changes and delivers that span. Answers it.
        @discardableResult
        func step() throws -> AudioInputBlocks {
            delivered.spans.withLock { $0 = [] }
            clock.advance(by: UInt64(set.chunkDuration * 1e9))
            try #require(clock.waitForSleepers(1), "the clock thread sleeps again")
            return try #require(delivered.spans.withLock { $0.last })
        }
    }

    @Test func aRemovedInputIsSilenceEndedOnTheClockThreadAndItsSlotIsTakenAgain() throws {
        let first = CountingInput(0.25), second = CountingInput(0.5)
        let rig = Rig(inputs: [ToneInput.silence, first, second])
        try rig.start()
        defer { rig.set.stop() }
        let before = try rig.step()
        #expect(before.blocks.count == 3 && before.blocks[1].samples.allSatisfy { $0 == 0.25 } && before.blocks[2].samples.allSatisfy { $0 == 0.5 })

        // Removed: its block is silence from the next span, the others go on, it is ended there (once,
        // on the clock's thread, after its last fill).
        #expect(rig.set.remove(at: 1) === first)
        #expect(rig.set.remove(at: 1) == nil, "a free slot has nothing to remove")
        #expect(rig.set.freeSlots == 1 && rig.set.nextSlot == 1)
        let after = try rig.step()
        #expect(after.blocks.count == 3 && after.blocks[1].samples.allSatisfy { $0 == 0 } && after.blocks[2].samples.allSatisfy { $0 == 0.5 })
        #expect(first.ends == 1 && !first.filledAfterEnd)
        let clockThread = try #require(rig.delivered.clockThread.withLock { $0 }), endThread = try #require(first.endThread)
        #expect(pthread_equal(endThread, clockThread) != 0, "ended on the clock's thread")

        // The next input takes the free slot: no new block, begun there, filled from the next span.
        let third = CountingInput(0.75)
        #expect(rig.set.add(third) == 1 && rig.set.count == 3 && rig.set.freeSlots == 0)
        let again = try rig.step()
        #expect(again.blocks.count == 3 && again.blocks[1].samples.allSatisfy { $0 == 0.75 })
        #expect(third.begins == 1 && third.fills >= 1)
        // With no free slot, one more.
        #expect(rig.set.add(CountingInput(1)) == 3 && rig.set.count == 4)
    }

    @Test func manyAddsAndRemovesDoNotGrowTheSetAndEndEachInputOnce() throws {
        let rig = Rig(inputs: [ToneInput.silence])
        try rig.start()
        var gone: [CountingInput] = []
        for round in 0..<200 {
            let input = CountingInput(Float(round % 7 + 1) / 8)
            let slot = rig.set.add(input)
            #expect(slot == 1, "round \(round): the freed slot is taken again")
            let span = try rig.step()
            #expect(span.blocks.count == 2 && span.blocks[1].samples.first == input.value)
            #expect(rig.set.remove(at: slot) === input)
            // Every other round the removal meets the next add at one wake-up: the old input ended and
            // the new one begun there, in the same slot.
            if round.isMultiple(of: 2) { try rig.step() }
            gone.append(input)
        }
        // Added and removed between two wake-ups: never begun, never filled, ended once all the same.
        let brief = CountingInput(1)
        rig.set.remove(at: rig.set.add(brief))
        try rig.step()
        #expect(brief.begins == 0 && brief.fills == 0 && brief.ends == 1)
        #expect(rig.set.count == 2 && rig.set.freeSlots == 1)
        rig.set.stop()
        #expect(gone.allSatisfy { $0.ends == 1 && !$0.filledAfterEnd }, "each removed input ended once: \(gone.map(\.ends))")
        #expect(gone.allSatisfy { $0.begins == 1 })
        // A removal after the stop ends nothing: the clock's last pass ended the inputs it had.
        let last = CountingInput(1)
        rig.set.add(last)
        #expect(rig.set.remove(at: 1) === last && last.ends == 0)
    }
}
