import Testing
import Synchronization
import FrameDrawing
import StudioCore
import StudioSystem
@testable import Switcher

/// Backup cameras, frame by frame on a manual clock: each camera is a solid colour, so the centre of
/// every delivered frame says what was on air, and the clock moves one program frame at a time.
private let format = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))
private let colors: [CameraID: YUVColor] = [
    "cam1": YUVColor(red: 220, green: 30, blue: 30), "cam2": YUVColor(red: 30, green: 30, blue: 220),
    "cam3": YUVColor(red: 30, green: 200, blue: 30),
]

/// One delivered frame: its pts and what its centre shows (a camera's name, `slate`, or `?`).
private struct Shown: Sendable, Equatable {
    var pts: MediaTime
    var what: String
}

private final class ShownLog: Sendable {
    let list = Mutex<[Shown]>([])
}

private final class Studio: Sendable {
    let clock = ManualClock()
    let events = RecordedEvents()
    let switcher: ProgramSwitcher
    private let shown = ShownLog()
    private let slots: [CameraID: LatestValue<VideoFrame>]
    /// The cameras that get a fresh frame at each step (the others go stale).
    let delivering = Mutex<Set<CameraID>>(["cam1", "cam2", "cam3"])
    /// When each camera's newest frame was stamped.
    let stamped = Mutex<[CameraID: UInt64]>([:])
    private let tick = Mutex<Int64>(0)

    init(backups: [String: BackupRule], scenes: [SceneDescription] = []) throws {
        let shown = self.shown
        // Pictures are stamped by hand at each step, on the tick before the one that shows them: the
        // on-air wait (OnAirWaitTests) would wait for each next one, which comes only with the next step.
        switcher = ProgramSwitcher(format: format, configuration: .init(lossTimeout: 0.2, onAirWait: 0), clock: clock,
                                   events: events) { frame, pts in
            let centre = frame.averageColor(in: PixelRect(x: 150, y: 80, width: 20, height: 20)) ?? .black
            // A slate's text may cross the centre; its top quarter is plain background.
            let top = frame.averageColor(in: PixelRect(x: 150, y: 10, width: 20, height: 20)) ?? .black
            let what = colors.first { $0.value.distance(to: centre) <= 8 }?.key.name
                ?? (top.distance(to: ProgramSwitcher.slateColor) <= 8 ? "slate" : "?")
            shown.list.withLock { $0.append(Shown(pts: pts, what: what)) }
        }
        var slots: [CameraID: LatestValue<VideoFrame>] = [:]
        for id in colors.keys.sorted() { slots[id] = LatestValue<VideoFrame>() }
        self.slots = slots
        try switcher.setScenes(scenes)
        switcher.setBackups(backups)
        refresh()
        for id in colors.keys.sorted() { switcher.addSource(id, frames: slots[id]!) }
        switcher.start()
        #expect(clock.waitForSleepers(1), "the program thread never slept")
    }

    /// A fresh frame, stamped now, from every delivering camera.
    func refresh() {
        for id in delivering.withLock({ $0 }) {
            let frame = VideoFrame.allocate(format: .i420, width: 320, height: 180, captureTime: clock.now())
            frame.fill(with: colors[id]!)
            slots[id]!.publish(frame)
            stamped.withLock { $0[id] = clock.now() }
        }
    }

    /// Fresh camera frames, then one program frame; returns what it showed.
    @discardableResult
    func step() -> Shown? {
        refresh()
        let before = all.count
        let next = tick.withLock { $0 += 1; return $0 }
        clock.advance(to: FrameGrid(origin: switcher.origin, rate: format.frameRate).time(ofFrame: next))
        #expect(clock.waitForSleepers(1), "the program thread did not get back to sleep")
        let after = all
        #expect(after.count == before + 1, "one frame per step")
        return after.last
    }

    func steps(_ count: Int) -> [Shown] { (0..<count).compactMap { _ in step() } }

    var all: [Shown] { shown.list.withLock { $0 } }

    /// A camera's frame slot (to add it again: its device came back).
    func slot(_ id: CameraID) -> LatestValue<VideoFrame> { slots[id]! }

    /// Runs a command and waits for its reply (it goes to air on the next step).
    func run(_ command: (@escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) -> Void) throws -> SwitchOutcome {
        let reply = LatestValue<Result<SwitchOutcome, SwitchError>>()
        command { reply.publish($0) }
        step()
        let answer = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value, "no reply")
        return try answer.get()
    }
}

@Suite(.serialized) struct BackupTests {
    @Test func aLostCameraGivesWayToItsBackupOnTheVeryNextFrameAndManualStays() throws {
        let studio = try Studio(backups: ["cam1": BackupRule(backup: "cam2", back: .manual)])
        defer { studio.switcher.stop() }
        #expect(studio.steps(3).allSatisfy { $0.what == "cam1" })

        studio.switcher.markSourceLost("cam1")
        let next = try #require(studio.step())
        #expect(next.what == "cam2", "the frame after the loss showed \(next.what)")
        #expect(studio.switcher.status.program == .camera("cam2"))
        #expect(studio.switcher.status.backup == BackupStatus(lost: "cam1", onAir: "cam2", back: .manual))
        let taken = try #require(studio.events.all(.backupTaken).first)
        #expect(taken.programTime == next.pts && taken.camera == "cam1")
        #expect(taken.details["lost"] == "cam1" && taken.details["backup"] == "cam2" && taken.details["reason"] == "removed")
        #expect(taken.details["back"] == "manual" && taken.details["cut_back"] == "studio switch cam1")
        let cut = try #require(studio.events.all(.switchProgram).last)
        #expect(cut.camera == "cam2" && cut.programTime == next.pts && cut.details["reason"] == "backup" && cut.details["from"] == "cam1")
        #expect(!studio.all.contains { $0.what == "slate" }, "a slate went out")

        // Manual: the camera's device comes back, the backup stays on air until the operator cuts.
        studio.switcher.addSource("cam1", frames: studio.slot("cam1"))
        #expect(studio.steps(10).allSatisfy { $0.what == "cam2" })
        #expect(studio.switcher.status.backup?.onAir == "cam2")
        #expect(studio.events.all(.switchProgram).count == 2, "only the first source's and the backup's switch")
        let back = try studio.run { studio.switcher.switchProgram(to: "cam1", completion: $0) }
        #expect(studio.all.last == Shown(pts: back.programTime, what: "cam1"))
        #expect(studio.switcher.status.backup == nil)
    }

    @Test func silentFramesTakeTheBackupWhereTheSlateWouldBeAndAutoReturns() throws {
        let studio = try Studio(backups: ["cam1": BackupRule(backup: "cam2", back: .auto)])
        defer { studio.switcher.stop() }
        #expect(studio.steps(3).allSatisfy { $0.what == "cam1" })

        studio.delivering.withLock { _ = $0.remove("cam1") }
        let last = try #require(studio.stamped.withLock { $0["cam1"] })
        var timed: [(shown: Shown, at: UInt64)] = []
        while timed.count < 30, let frame = studio.step() {
            timed.append((frame, studio.clock.now()))
            if frame.what != "cam1" { break }
        }
        // The first frame past the loss timeout (0.2 s after cam1's newest frame), where the slate would be.
        let firstOther = try #require(timed.firstIndex { $0.shown.what != "cam1" })
        let due = try #require(timed.firstIndex { $0.at - last > 200_000_000 })
        #expect(firstOther == due, "the backup came \(firstOther - due) frames after the loss")
        let stale = timed.map(\.shown)
        #expect(stale[firstOther].what == "cam2", "showed \(stale[firstOther].what) instead of the backup")
        let taken = try #require(studio.events.all(.backupTaken).first)
        #expect(taken.programTime == stale[firstOther].pts && taken.details["reason"] == "silent" && taken.details["back"] == "auto")
        #expect(studio.switcher.status.backup == BackupStatus(lost: "cam1", onAir: "cam2", back: .auto))

        #expect(studio.steps(3).allSatisfy { $0.what == "cam2" })
        studio.delivering.withLock { _ = $0.insert("cam1") }
        let returned = try #require(studio.step())
        #expect(returned.what == "cam1", "the camera's first fresh frame did not bring it back")
        let cut = try #require(studio.events.all(.switchProgram).last)
        #expect(cut.camera == "cam1" && cut.programTime == returned.pts && cut.details["reason"] == "camera returned" && cut.details["from"] == "cam2")
        #expect(studio.switcher.status.backup == nil && studio.switcher.status.program == .camera("cam1"))
        #expect(!studio.all.contains { $0.what == "slate" }, "a slate went out")
    }

    @Test func aLostBackupFallsThroughToItsOwnAndACycleEndsOnTheSlate() throws {
        // A cycle the config would refuse: here it only ends the search.
        let studio = try Studio(backups: ["cam1": BackupRule(backup: "cam2"), "cam2": BackupRule(backup: "cam3"),
                                          "cam3": BackupRule(backup: "cam1")])
        defer { studio.switcher.stop() }
        studio.switcher.markSourceLost("cam2")
        #expect(studio.steps(2).allSatisfy { $0.what == "cam1" })
        studio.switcher.markSourceLost("cam1")
        #expect(studio.step()?.what == "cam3")
        let taken = try #require(studio.events.all(.backupTaken).first)
        #expect(taken.details["backup"] == "cam3" && taken.details["skipped"] == "cam2")
        #expect(studio.switcher.status.backup == BackupStatus(lost: "cam1", onAir: "cam3", back: .manual))

        // The backup on air is lost in turn: every camera of the chain is lost, so the slate.
        studio.switcher.markSourceLost("cam3")
        #expect(studio.steps(3).allSatisfy { $0.what == "slate" })
        #expect(studio.events.all(.backupTaken).count == 1)
        #expect(studio.switcher.status.program == .camera("cam3"))
    }

    @Test func aSceneGivesWayWhenItsMainCameraIsLostAndComesBack() throws {
        let pip = SceneDescription(name: "pip", layout: .pip, sources: ["cam1", "cam2"], corner: .topRight, size: 0.3)
        let studio = try Studio(backups: ["pip": BackupRule(backup: "cam3", back: .auto)], scenes: [pip])
        defer { studio.switcher.stop() }
        _ = try studio.run { studio.switcher.switchProgram(to: .scene("pip"), completion: $0) }
        // The inset's camera is not the main one: the scene stays, its layer shows the slate.
        studio.switcher.markSourceLost("cam2")
        #expect(studio.steps(2).allSatisfy { $0.what == "cam1" })
        #expect(studio.switcher.status.program == .scene("pip"))
        studio.switcher.markSourceLost("cam1")
        #expect(studio.step()?.what == "cam3")
        #expect(studio.events.all(.backupTaken).first?.details["lost"] == "pip")
        studio.switcher.addSource("cam1", frames: studio.slot("cam1"))
        #expect(studio.step()?.what == "cam1")
        #expect(studio.switcher.status.program == .scene("pip"))
        #expect(studio.events.all(.switchProgram).last?.details["reason"] == "camera returned")
    }
}
