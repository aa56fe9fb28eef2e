import Foundation
import Testing
import Synchronization
import Capture
import Switcher
import StudioCore
import StudioSystem
import TestSupport

/// A player on program, the program and the player on one `ManualClock`: the program takes, for each
/// tick, the player's picture for that tick (`PictureSchedule`), so a player's thread held up (not
/// scheduled, starved of CPU) for a while changes nothing on program; held up for longer than it
/// decodes ahead, the program holds its last picture and the play goes on from the next, none skipped.
@Suite struct PlayerOnProgramTests {
    /// The player's clock: `base`'s time, and while `hold()` is in force a sleeper that wakes stays put
    /// until `release()` (its thread held up).
    final class HeldClock: Clock, @unchecked Sendable {
        // `held` is read and written only under `lock`.
        let base: ManualClock
        private let lock = ConditionLock()
        private var held = false
        init(base: ManualClock) { self.base = base }
        func now() -> UInt64 { base.now() }
        func sleep(until deadline: UInt64) {
            base.sleep(until: deadline)
            lock.withLock { while held { lock.wait() } }
        }
        func hold() { lock.withLock { held = true } }
        func release() {
            lock.withLock { held = false }
            lock.broadcast()
        }
    }

    /// Plays a 60-picture clip on program for 75 ticks, the player's thread held up from tick `from` for
    /// `ticks` program ticks; what the program showed at each tick, and the player's status.
    static func play(holding ticks: Int64, from start: Int64) throws -> (shown: [Int?], status: PlayerStatus?) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-onprogram-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("count.mp4").path
        try NumberedClips.make(clip, frames: 60, tint: 90)

        let clock = ManualClock(), playerClock = HeldClock(base: clock)
        let origin = clock.now() + 10_000_000, rate = Rational(30)
        let programOrigin = ProgramOrigin()
        programOrigin.set(origin)
        let camera = PlayerCamera(spec: PlayerSpec(name: "count", items: [clip]), id: "count", rate: rate, clock: playerClock,
                                  programOrigin: programOrigin, log: { _ in }, emit: { _ in })
        let shown = Mutex<[Int?]>([])
        let switcher = ProgramSwitcher(format: ProgramFormat(width: 320, height: 180, frameRate: rate), clock: clock,
                                       events: DiscardingEventSink()) { frame, _ in
            shown.withLock { $0.append(NumberedClips.read(frame)?.number) }
        }
        camera.start()
        defer {
            playerClock.release()
            switcher.stop()
            camera.stop()
        }
        try #require(waitUntil(seconds: 10, every: 0.01) { camera.frames.latest().value != nil }, "the player showed no cued picture")
        switcher.addSource(camera.id, frames: camera.frames, schedule: camera.schedule)
        switcher.start(origin: origin)
        clock.advance(to: origin)
        try #require(waitUntil(seconds: 10) { shown.withLock { $0.count } == 1 }, "the program's first frame")
        _ = camera.transport(.play(item: nil))
        let grid = FrameGrid(origin: origin, rate: rate)
        for tick in Int64(1)..<75 {
            if tick == start { playerClock.hold() }
            if tick == start + ticks { playerClock.release() }
            let held = tick >= start && tick < start + ticks
            // 10 ms past the tick: past the longest the program waits for a picture still to come (a quarter
            // frame, `OnAirWait`), short of the player's next tick (half a frame past).
            try #require(clock.run(to: grid.time(ofFrame: tick) + 10_000_000, step: 4_000_000, sleepers: held ? 1 : 2), "tick \(tick)")
            try #require(waitUntil(seconds: 10) { shown.withLock { $0.count } == Int(tick) + 1 }, "the program's frame \(tick)")
        }
        return (shown.withLock { $0 }, camera.player)
    }

    @Test func heldUpForLessThanItDecodesAheadThePlayerStillGivesTheProgramEveryPictureOnceInOrder() throws {
        let (shown, status) = try Self.play(holding: 6, from: 20)
        var numbers = shown.compactMap { $0 }
        #expect(numbers.count == shown.count, "every frame shows the clip: \(shown)")
        // Cued on 0 before the play, held on 59 after it: between them, each picture once.
        while numbers.first == 0 { numbers.removeFirst() }
        while numbers.last == 59 { numbers.removeLast() }
        #expect(numbers == Array(1...58), "\(shown)")
        #expect(status?.repeatedFrames == 0 && status?.skippedFrames == 0, "\(String(describing: status))")
    }

    @Test func heldUpForLongerTheProgramHoldsAPictureAndSkipsNone() throws {
        let (shown, status) = try Self.play(holding: 13, from: 20)
        let numbers = shown.compactMap { $0 }
        #expect(numbers.count == shown.count, "every frame shows the clip: \(shown)")
        var distinct: [Int] = []
        for number in numbers where distinct.last != number { distinct.append(number) }
        #expect(distinct == Array(0...59), "in order, none skipped: \(shown)")
        let repeats = numbers.count - distinct.count
        // The play slipped by the ticks its thread missed past what it had published: counted as repeated.
        let repeated = try #require(status?.repeatedFrames)
        #expect(repeated > 0 && repeated < 13 && status?.skippedFrames == 0, "\(String(describing: status)), \(repeats) repeats on program")
    }
}
