import Foundation
import Testing
import Synchronization
import Capture
import FrameDrawing
import Switcher
import StudioCore
import StudioSystem
import TestSupport

/// Players (`PlayerCamera`) as the sources of a program (`ProgramSwitcher`), all on one `ManualClock`,
/// the first one on program; the program's frames read back (`NumberedClips`), tick by tick. Cameras
/// of one colour each (`colours`) and `scenes` may go with them.
final class PlayerProgramRig {
    /// The players' clock: `base`'s time, and while `hold()` is in force a sleeper that wakes stays put
    /// until `release()` (their threads held up, as by load).
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
        var isHeld: Bool { lock.withLock { held } }
        func hold() { lock.withLock { held = true } }
        func release() {
            lock.withLock { held = false }
            lock.broadcast()
        }
    }

    static let rate = Rational(30)
    let clock = ManualClock()
    let playerClock: HeldClock
    let origin: UInt64
    let grid: FrameGrid
    let switcher: ProgramSwitcher
    let players: [PlayerCamera]
    /// The program's events.
    let programEvents = RecordedEvents()
    /// What the program showed at each tick (nil: no clip's picture), and the players' events.
    final class Record: Sendable {
        let shown = Mutex<[(number: Int, tint: Int)?]>([])
        let events = Mutex<[StudioEvent]>([])
        /// The program's newest frame.
        let newest = Mutex<VideoFrame?>(nil)
    }
    let record = Record()
    private(set) var tick: Int64 = 0
    /// The colour cameras: each frame is published again, stamped now, before every tick.
    private let colourSources: [(slot: LatestValue<VideoFrame>, frame: VideoFrame)]

    /// A scratch directory for the clips `body` makes.
    static func withClips<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-onprogram-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    /// The players started and cued, the program on the first, its frame 0 out.
    init(_ specs: [PlayerSpec], colours: [(name: String, colour: YUVColor)] = [], scenes: [SceneDescription] = []) throws {
        let clock = clock, playerClock = HeldClock(base: clock)
        self.playerClock = playerClock
        origin = clock.now() + 10_000_000
        grid = FrameGrid(origin: origin, rate: Self.rate)
        let programOrigin = ProgramOrigin()
        programOrigin.set(origin)
        let record = record
        players = specs.map { spec in
            PlayerCamera(spec: spec, id: spec.name, rate: Self.rate, clock: playerClock, programOrigin: programOrigin,
                         log: { _ in }, emit: { event in record.events.withLock { $0.append(event) } })
        }
        switcher = ProgramSwitcher(format: ProgramFormat(width: 320, height: 180, frameRate: Self.rate), clock: clock,
                                   events: programEvents) { frame, _ in
            record.shown.withLock { $0.append(NumberedClips.read(frame)) }
            record.newest.withLock { $0 = frame }
        }
        colourSources = colours.map { _, colour in
            let frame = VideoFrame.allocate(format: .i420, width: 320, height: 180)
            frame.fill(with: colour)
            return (LatestValue<VideoFrame>(), frame)
        }
        for player in players {
            player.start()
            guard waitUntil(seconds: 10, every: 0.01, { player.frames.latest().value != nil }) else {
                throw NumberedClipError("\(player.id.name) showed no cued picture")
            }
            switcher.addSource(player.id, frames: player.frames, schedule: player.schedule)
        }
        for ((name, _), source) in zip(colours, colourSources) { switcher.addSource(CameraID(name), frames: source.slot) }
        publishColours()
        try switcher.setScenes(scenes)
        switcher.start(origin: origin)
        clock.advance(to: origin)
        guard waitUntil(seconds: 10, { record.shown.withLock { $0.count } == 1 }) else { throw NumberedClipError("the program's first frame") }
    }

    deinit {
        playerClock.release()
        switcher.stop()
        for player in players { player.stop() }
    }

    /// Runs the program tick by tick up to `last`, `before` called ahead of each (a command given there
    /// takes effect on that tick).
    func run(to last: Int64, before: (Int64) -> Void = { _ in }) throws {
        while tick < last {
            tick += 1
            publishColours()
            before(tick)
            // 10 ms past the tick: past the longest the program waits for a picture still to come (a
            // quarter frame, `OnAirWait`), short of the players' next tick (half a frame past).
            let sleepers = playerClock.isHeld ? 1 : 1 + players.count
            try #require(clock.run(to: grid.time(ofFrame: tick) + 10_000_000, step: 4_000_000, sleepers: sleepers), "tick \(tick)")
            try #require(waitUntil(seconds: 10) { record.shown.withLock { $0.count } == Int(tick) + 1 }, "the program's frame \(tick)")
        }
    }

    private func publishColours() {
        for source in colourSources {
            var frame = source.frame
            frame.captureTime = clock.now()
            source.slot.publish(frame)
        }
    }

    /// The program's newest frame's colour (a 2x2 block's average) at (`x`, `y`).
    func colour(at x: Int, _ y: Int) throws -> YUVColor {
        let frame = try #require(record.newest.withLock { $0 }, "no program frame")
        return try #require(frame.averageColor(in: PixelRect(x: x, y: y, width: 2, height: 2)))
    }

    /// The program's frames from tick `from` to `to`, as `"tint number"` (tint: the clip's, rounded to 10).
    func shown(_ ticks: ClosedRange<Int64>) -> [String] {
        record.shown.withLock { frames in ticks.map { frames[Int($0)].map { "\(($0.tint + 5) / 10 * 10) \($0.number)" } ?? "none" } }
    }

    var eventSummary: [String] {
        record.events.withLock { $0.map { "\($0.kind.rawValue) \($0.camera?.name ?? "") \($0.details["how"] ?? "")" } }
    }
}
