import Testing
import Synchronization
import StudioCore
import StudioSystem
@testable import Switcher

private let rate = Rational(30)
private let period = rate.periodNanoseconds
private let small = ProgramFormat(width: 320, height: 180, frameRate: rate)

/// What the program delivered: each frame's pts (as a frame number), the camera picture's sequence, and
/// when (on the switcher's manual clock).
private final class Deliveries: Sendable {
    struct Entry: Sendable {
        var tick: Int64
        var sequence: UInt64
        var at: UInt64
    }

    private let entries = Mutex<[Entry]>([])
    private let clock: ManualClock

    init(clock: ManualClock) { self.clock = clock }

    func record(_ frame: VideoFrame, _ pts: MediaTime) {
        let tick = Int64((Double(pts.microseconds) * 30 / 1e6).rounded())
        let entry = Entry(tick: tick, sequence: frame.sequence, at: clock.now())
        entries.withLock { $0.append(entry) }
    }

    var all: [Entry] { entries.withLock { $0 } }

    /// Waits (real time) until `count` frames are out.
    func wait(for count: Int, timeout: Double = 20) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        while entries.withLock({ $0.count }) < count {
            if MonotonicClock.now() >= deadline { return false }
            MonotonicClock.sleep(seconds: 0.001)
        }
        return true
    }
}

/// A camera the test drives by hand: picture `k` is captured 1 ms before tick `k` is due and reaches the
/// switcher `way` after that (3 ms: 2 ms after the tick, in this phase against the program clock);
/// `missing` pictures never come. Returns what the program delivered for ticks 0 to `ticks`.
private func feed(onAirWait: Double?, ticks: Int64, way: UInt64 = 3_000_000, missing: Set<Int64> = []) throws -> [Deliveries.Entry] {
    let clock = ManualClock()
    let origin = clock.now() + 100_000_000
    let grid = FrameGrid(origin: origin, rate: rate)
    let slot = LatestValue<VideoFrame>()
    func capture(_ k: Int64) -> UInt64 { grid.time(ofFrame: k) - 1_000_000 }
    func publish(_ k: Int64) {
        var frame = VideoFrame.allocate(format: .i420, width: 320, height: 180, captureTime: capture(k), sequence: UInt64(k))
        frame.arrivalTime = clock.now()
        slot.publish(frame)
    }
    publish(0)
    let deliveries = Deliveries(clock: clock)
    let switcher = ProgramSwitcher(format: small, configuration: .init(onAirWait: onAirWait), clock: clock,
                                   events: DiscardingEventSink()) { deliveries.record($0, $1) }
    switcher.addSource("cam1", frames: slot)
    switcher.start(origin: origin)
    defer { switcher.stop() }
    clock.advance(to: origin)
    try #require(deliveries.wait(for: 1), "tick 0 was never delivered")
    // Half-millisecond steps, and one on every tick and every arrival: the program thread sleeps, on its
    // tick or on its wait, between steps.
    var next: Int64 = 1
    let end = grid.time(ofFrame: ticks) + period / 2
    while clock.now() < end {
        while next <= ticks, capture(next) + way <= clock.now() {
            if !missing.contains(next) { publish(next) }
            next += 1
        }
        let now = clock.now()
        let step = [now + 500_000, grid.nextTick(after: now), capture(next) + way, end].filter { $0 > now }.min()!
        try #require(clock.run(to: step, step: step - now), "the program thread did not keep up")
    }
    try #require(deliveries.wait(for: Int(ticks) + 1))
    return deliveries.all
}

@Suite struct OnAirWaitTests {
    @Test func learnsACameraCadenceAndWaitsOnlyForThePictureOfTheTick() {
        var wait = OnAirWait(limit: period / 4)
        let grid = FrameGrid(origin: 1_000_000_000, rate: rate)
        func due(_ n: Int64) -> UInt64 { grid.time(ofFrame: n) }
        wait.observe("cam1", version: 1, capture: due(1) - 1_000_000, arrival: due(1) + 2_000_000)
        // One picture: no cadence yet, no wait.
        #expect(!wait.expectsPicture(of: "cam1", capture: due(1) - 1_000_000, due: due(2), previous: due(1)))
        wait.observe("cam1", version: 2, capture: due(2) - 1_000_000, arrival: due(2) + 2_000_000)
        // Newest from tick 2, next one captured before tick 3 is due: wait at tick 3.
        #expect(wait.expectsPicture(of: "cam1", capture: due(2) - 1_000_000, due: due(3), previous: due(2)))
        // Newest already captured after tick 2 was due: it is tick 3's, no wait.
        #expect(!wait.expectsPicture(of: "cam1", capture: due(2) + 1_000_000, due: due(3), previous: due(2)))
        // Next picture only after the tick is due: it is the next tick's.
        #expect(!wait.expectsPicture(of: "cam1", capture: due(1) + 100, due: due(2) - 100_000, previous: due(1) + 100))
        // A picture already missing: stalled, no wait.
        #expect(!wait.expectsPicture(of: "cam1", capture: due(2) - 1_000_000, due: due(4), previous: due(3)))
        // One gap (a missed picture) does not change the cadence...
        wait.observe("cam1", version: 3, capture: due(4) - 1_000_000, arrival: due(4) + 2_000_000)
        #expect(wait.expectsPicture(of: "cam1", capture: due(4) - 1_000_000, due: due(5), previous: due(4)))
        // ...three in a row do: the camera now sends every other tick.
        wait.observe("cam1", version: 4, capture: due(6) - 1_000_000, arrival: due(6) + 2_000_000)
        wait.observe("cam1", version: 5, capture: due(8) - 1_000_000, arrival: due(8) + 2_000_000)
        #expect(!wait.expectsPicture(of: "cam1", capture: due(8) - 1_000_000, due: due(9), previous: due(8)))
        #expect(wait.expectsPicture(of: "cam1", capture: due(8) - 1_000_000, due: due(10), previous: due(9)))
        // A slot that starts over (replugged) forgets the cadence.
        wait.observe("cam1", version: 1, capture: due(11), arrival: due(11))
        #expect(!wait.expectsPicture(of: "cam1", capture: due(11), due: due(13), previous: due(12)))
        // A camera whose pictures come long after their capture: the next one would come after the
        // limit, so no wait; one whose way fits the limit from this phase: wait.
        var slow = OnAirWait(limit: period / 4)
        slow.observe("cam2", version: 1, capture: due(1) - 1_000_000, arrival: due(1) + 30_000_000)
        slow.observe("cam2", version: 2, capture: due(2) - 1_000_000, arrival: due(2) + 30_000_000)
        #expect(!slow.expectsPicture(of: "cam2", capture: due(2) - 1_000_000, due: due(3), previous: due(2)))
        #expect(slow.expectsPicture(of: "cam2", capture: due(2) - 25_000_000, due: due(3), previous: due(2)))
        // Never with no limit.
        var never = OnAirWait(limit: 0)
        never.observe("cam1", version: 1, capture: due(1) - 1_000_000, arrival: due(1))
        never.observe("cam1", version: 2, capture: due(2) - 1_000_000, arrival: due(2))
        #expect(!never.expectsPicture(of: "cam1", capture: due(2) - 1_000_000, due: due(3), previous: due(2)))
    }

    @Test func aPictureCapturedBeforeItsTickButLateIsShownOnThatTick() throws {
        let limit = period / 4
        let waited = try feed(onAirWait: nil, ticks: 8)
        let grid = FrameGrid(origin: 0, rate: rate)
        // From tick 2 (two pictures teach the cadence) every tick shows its own picture, taken when it came.
        for entry in waited where entry.tick >= 2 {
            #expect(entry.sequence == UInt64(entry.tick), "tick \(entry.tick) showed picture \(entry.sequence)")
            let due = grid.time(ofFrame: entry.tick)
            let delay = entry.at - (waited[0].at + due)
            #expect(delay >= 2_000_000 && delay <= limit, "tick \(entry.tick) taken \(delay) ns after it was due")
        }
        // A camera whose pictures come 31 ms after their capture: no tick waits for one; each shows the
        // picture before its own, when due.
        let slow = try feed(onAirWait: nil, ticks: 8, way: 31_000_000)
        for entry in slow where entry.tick >= 1 {
            #expect(entry.sequence == UInt64(entry.tick - 1), "tick \(entry.tick) showed picture \(entry.sequence)")
            #expect(entry.at == slow[0].at + grid.time(ofFrame: entry.tick), "tick \(entry.tick) waited")
        }
        // Without the wait, each tick shows the picture before its own, a frame interval later.
        let unwaited = try feed(onAirWait: 0, ticks: 8)
        for entry in unwaited where entry.tick >= 1 {
            #expect(entry.sequence == UInt64(entry.tick - 1), "tick \(entry.tick) showed picture \(entry.sequence)")
            #expect(entry.at == unwaited[0].at + grid.time(ofFrame: entry.tick), "tick \(entry.tick) was not taken when due")
        }
    }

    @Test func aMissingPictureHoldsItsTickAtMostTheLimitAndAStalledCameraNotAtAll() throws {
        let limit = period / 4
        let entries = try feed(onAirWait: nil, ticks: 10, missing: [5, 6, 7])
        let grid = FrameGrid(origin: 0, rate: rate)
        func delay(_ entry: Deliveries.Entry) -> UInt64 { entry.at - (entries[0].at + grid.time(ofFrame: entry.tick)) }
        let byTick = Dictionary(entries.map { ($0.tick, $0) }, uniquingKeysWith: { first, _ in first })
        // Tick 5 waits out the limit (checked every half millisecond), then shows picture 4 again.
        let five = try #require(byTick[5])
        #expect(five.sequence == 4 && delay(five) >= limit && delay(five) <= limit + 1_000_000, "tick 5: \(five)")
        // Ticks 6 and 7: a picture is already missing, the camera stalled: no wait.
        for tick in [Int64(6), 7] {
            let entry = try #require(byTick[tick])
            #expect(entry.sequence == 4 && delay(entry) == 0, "tick \(tick): \(entry)")
        }
        // The gap did not change the cadence: tick 9 waits for its picture again.
        let nine = try #require(byTick[9])
        #expect(nine.sequence == 9 && delay(nine) >= 2_000_000 && delay(nine) <= limit, "tick 9: \(nine)")
        #expect(entries.map(\.tick) == Array(0...10), "every tick delivered once, in order")
    }
}
