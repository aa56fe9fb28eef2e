import Testing
import Synchronization
import StudioSystem

@Suite struct ManualClockTests {
    @Test func sleepersWakeWhenTimePassesTheirDeadline() {
        let clock = ManualClock(start: 1_000)
        let woke = Atomic<UInt64>(0)
        let thread = NamedThread.start(name: "test.sleeper") {
            clock.sleep(until: 5_000, unless: { false })
            woke.store(clock.now(), ordering: .sequentiallyConsistent)
        }
        #expect(clock.waitForSleepers(1))
        clock.advance(by: 3_000)  // 4000: not yet
        #expect(clock.waitForSleepers(1), "still asleep before its deadline")
        #expect(woke.load(ordering: .sequentiallyConsistent) == 0)
        clock.advance(to: 5_000)
        #expect(thread.join(timeoutSeconds: 10))
        #expect(woke.load(ordering: .sequentiallyConsistent) == 5_000)
        #expect(clock.waitingSleepers == 0)
    }

    @Test func aStoppedSleeperReturnsWithoutTheClockMoving() {
        let clock = ManualClock()
        let stop = Atomic<Bool>(false)
        let result = Atomic<Int>(-1)
        let thread = NamedThread.start(name: "test.sleeper") {
            let reached = clock.sleep(until: clock.now() + 1_000_000_000_000, unless: { stop.load(ordering: .sequentiallyConsistent) })
            result.store(reached ? 1 : 0, ordering: .sequentiallyConsistent)
        }
        #expect(clock.waitForSleepers(1))
        stop.store(true, ordering: .sequentiallyConsistent)
        #expect(thread.join(timeoutSeconds: 10), "the stop was noticed (ManualClock sleeps return every 50 ms)")
        #expect(result.load(ordering: .sequentiallyConsistent) == 0)
    }

    @Test func timeNeverGoesBackAndAPastDeadlineDoesNotSleep() {
        let clock = ManualClock(start: 10)
        clock.advance(to: 5)
        #expect(clock.now() == 10)
        clock.sleep(until: 10)
        #expect(clock.waitingSleepers == 0)
        #expect(!clock.waitForSleepers(1, timeoutSeconds: 0.05), "nobody sleeps")
    }

    @Test func monotonicClockSleepsUntilItsDeadline() {
        let clock: any Clock = .monotonic
        let deadline = clock.now() + 20_000_000
        #expect(clock.sleep(until: deadline, unless: { false }))
        #expect(clock.now() >= deadline)
    }
}

/// The audio clock on a manual clock: exactly the samples due, on the sample grid, whatever the
/// machine's load.
@Suite struct AudioClockTests {
    /// What the audio clock asked of its source.
    final class Record: Sendable {
        let chunks = Mutex<[AudioChunk]>([])
        let first = Mutex<Int64?>(nil)
        /// First sample of each chunk handed to `stalled`.
        let stalled = Mutex<[Int64]>([])
        let idles = Atomic<Int>(0)
        let stopFlag = Atomic<Bool>(false)
    }

    /// Runs an `AudioClock` on its own thread, recording what it is asked to fill.
    final class Pump: Sendable {
        let record: Record
        let thread: NamedThread

        init(clock: ManualClock, origin: UInt64, interval: UInt64 = 10_000_000) {
            let audio = AudioClock(format: .program, interval: interval, clock: clock)
            let record = Record()
            self.record = record
            thread = NamedThread.start(name: "test.audio") {
                audio.run(origin: origin, stop: { record.stopFlag.load(ordering: .sequentiallyConsistent) },
                          begin: { index in record.first.withLock { $0 = index } },
                          fill: { chunk in
                              for index in chunk.samples.indices { chunk.samples[index] = Float(chunk.firstSample) }
                          },
                          stalled: { chunk in record.stalled.withLock { $0.append(chunk.firstSample) } },
                          deliver: { chunk in record.chunks.withLock { $0.append(chunk) } },
                          idle: { record.idles.wrappingAdd(1, ordering: .sequentiallyConsistent) })
            }
        }

        var chunks: [AudioChunk] { record.chunks.withLock { $0 } }
        var first: Int64? { record.first.withLock { $0 } }
        var stalled: [Int64] { record.stalled.withLock { $0 } }
        var idles: Int { record.idles.load(ordering: .sequentiallyConsistent) }
        var delivered: Int64 { chunks.reduce(0) { $0 + Int64($1.frameCount) } }

        func stop() {
            record.stopFlag.store(true, ordering: .sequentiallyConsistent)
            #expect(thread.join(timeoutSeconds: 10))
        }
    }

    @Test func fillsExactlyTheSamplesDueInChunksOnTheGrid() throws {
        let clock = ManualClock()
        let origin = clock.now() + 20_000_000
        let pump = Pump(clock: clock, origin: origin)
        #expect(clock.waitForSleepers(1))
        #expect(pump.first == 0)
        #expect(pump.delivered == 0, "nothing is due before the origin")
        for step in 1...12 {
            clock.advance(by: 50_000_000)
            #expect(clock.waitForSleepers(1))
            let due = FrameGrid(origin: origin, rate: Rational(48_000)).frame(at: clock.now())
            #expect(pump.delivered == due, "step \(step)")
        }
        pump.stop()
        let chunks = pump.chunks
        var next: Int64 = 0
        for chunk in chunks {
            #expect(chunk.firstSample == next)
            #expect(chunk.pts == MediaTime(count: next, rate: Rational(48_000)))
            #expect(chunk.format == .program && chunk.frameCount <= 4800)
            #expect(chunk.samples.allSatisfy { $0 == Float(chunk.firstSample) }, "filled by the source")
            next += Int64(chunk.frameCount)
        }
        #expect(next == 12 * 2400 - 960)  // 0.58 s of samples since the origin
        #expect(pump.idles >= 12)
    }

    @Test func aStallIsCaughtUpInChunksOfAtMostATenthOfASecond() {
        let clock = ManualClock()
        let origin = clock.now()
        let pump = Pump(clock: clock, origin: origin)
        #expect(clock.waitForSleepers(1))
        clock.advance(by: 1_000_000_000)  // a one-second stall
        #expect(clock.waitForSleepers(1))
        pump.stop()
        let chunks = pump.chunks
        #expect(chunks.map(\.frameCount) == Array(repeating: 4800, count: 10))
        #expect(pump.delivered == 48_000)
    }

    /// A stop asked for while the clock catches up a backlog ends it at the next chunk: on a starved
    /// machine (a debug build in an emulated VM) the audio thread was always behind, and the server's
    /// stop waited 9 s for it. Both backlogs: a stall's silence, and a late wake-up's filled chunks.
    @Test(arguments: [(60_000_000_000 as UInt64, 3), (200_000_000, 1)])
    func aStopEndsACatchUpAtTheNextChunk(behind: UInt64, stopAfter: Int) {
        let clock = ManualClock()
        let origin = clock.now()
        let audio = AudioClock(format: .program, interval: 10_000_000, clock: clock)
        let delivered = Atomic<Int>(0), stopFlag = Atomic<Bool>(false)
        let thread = NamedThread.start(name: "test.audio") {
            audio.run(origin: origin, stop: { stopFlag.load(ordering: .sequentiallyConsistent) }, fill: { _ in }, deliver: { _ in
                if delivered.add(1, ordering: .sequentiallyConsistent).newValue == stopAfter { stopFlag.store(true, ordering: .sequentiallyConsistent) }
            })
        }
        #expect(clock.waitForSleepers(1))
        clock.advance(by: behind)
        #expect(thread.join(timeoutSeconds: 10))
        #expect(delivered.load(ordering: .sequentiallyConsistent) == stopAfter, "chunks delivered after the stop was asked for")
    }

    @Test func aStallIsSilenceUpToTheSampleDueNowThenTheSourceGoesOn() throws {
        let clock = ManualClock()
        let origin = clock.now()
        let pump = Pump(clock: clock, origin: origin)
        #expect(clock.waitForSleepers(1))
        #expect(clock.run(to: origin + 200_000_000, step: 10_000_000))
        let before = pump.delivered
        #expect(before == 9600, "0.2 s delivered before the stall")
        clock.advance(by: 5_000_000_000)  // the process stood still for 5 s
        #expect(clock.waitForSleepers(1))
        let resume = FrameGrid(origin: origin, rate: Rational(48_000)).frame(at: clock.now())
        clock.advance(by: 10_000_000)
        #expect(clock.waitForSleepers(1))
        pump.stop()
        let chunks = pump.chunks
        // The timeline has no hole: every sample up to now was delivered once.
        var next: Int64 = 0
        for chunk in chunks {
            #expect(chunk.firstSample == next)
            next += Int64(chunk.frameCount)
        }
        #expect(next == resume + 480)
        // The stalled time, from the sample after the last one delivered to the sample due at the wake-up,
        // is silence handed to `stalled` (never to the source's `fill`), in chunks of at most 0.1 s.
        let stalled = chunks.filter { $0.firstSample >= before && $0.firstSample < resume }
        #expect(pump.stalled == stalled.map(\.firstSample))
        #expect(stalled.reduce(0) { $0 + Int64($1.frameCount) } == resume - before)
        #expect(stalled.allSatisfy { $0.frameCount <= 4800 && $0.samples.allSatisfy { $0 == 0 } })
        // Before and after it the source fills (it writes the chunk's first sample index).
        let filled = chunks.filter { $0.firstSample < before || $0.firstSample >= resume }
        #expect(filled.allSatisfy { chunk in chunk.samples.allSatisfy { $0 == Float(chunk.firstSample) } })
        #expect(try #require(filled.last).firstSample == resume, "the source goes on at the sample due at the wake-up")
    }

    @Test func aLateWakeUpBelowTheStallThresholdIsFilledByTheSource() {
        let clock = ManualClock()
        let origin = clock.now()
        let pump = Pump(clock: clock, origin: origin)
        #expect(clock.waitForSleepers(1))
        clock.advance(by: 200_000_000)  // 0.2 s late: a loaded machine, not a stall
        #expect(clock.waitForSleepers(1))
        pump.stop()
        #expect(pump.stalled.isEmpty)
        #expect(pump.delivered == 9600)
        #expect(pump.chunks.allSatisfy { chunk in chunk.samples.allSatisfy { $0 == Float(chunk.firstSample) } })
    }

    @Test func anOriginLongPastStartsAtTheSampleDueNow() {
        let clock = ManualClock(start: 10_000_000_000)
        let origin = clock.now() - 2_000_000_000
        let pump = Pump(clock: clock, origin: origin)
        #expect(clock.waitForSleepers(1))
        #expect(pump.first == 96_000)
        clock.advance(by: 10_000_000)
        #expect(clock.waitForSleepers(1))
        pump.stop()
        #expect(pump.chunks.first?.firstSample == 96_000)
        #expect(pump.delivered == 480)
    }
}
