import Testing
import Synchronization
import FrameDrawing
import StudioCore
import StudioSystem
import TestSupport
@testable import Switcher

/// Which cameras the switcher says it needs at full size (`DecodeDemands`): each source has a real
/// `CameraDemand`, read as a camera's thread reads it, on a program clock driven one frame at a time.
@Suite(.serialized) struct DecodeDemandTests {
    final class WakeCounts: Sendable {
        let counts = Mutex<[CameraID: Int]>([:])
    }

    /// A demand for its own wake-up to reach (made after it).
    final class DemandHolder: Sendable {
        let demand = Mutex<CameraDemand?>(nil)
    }

    static let format = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))

    final class Rig: Sendable {
        let switcher: ProgramSwitcher
        let events = RecordedEvents()
        let pump = ClockPump(step: DecodeDemandTests.format.frameRate.periodNanoseconds + 1)
        let demands: [CameraID: CameraDemand]
        let slots: [CameraID: LatestValue<VideoFrame>]
        /// Times each camera's demand turned full (its `wake`).
        let wakes = WakeCounts()

        /// - Parameter slowCameras: a camera woken to full has its full-size picture at once (its slot
        ///   holds one already), as a fast camera thread would; these never do (a take to them waits).
        init(cameras: Int = 4, scenes: [SceneDescription] = [], backups: [String: BackupRule] = [:], slowCameras: Set<CameraID> = []) throws {
            switcher = ProgramSwitcher(format: DecodeDemandTests.format, configuration: .init(lossTimeout: 3600), clock: pump.clock,
                                       events: events) { _, _ in }
            var demands: [CameraID: CameraDemand] = [:], slots: [CameraID: LatestValue<VideoFrame>] = [:]
            for index in 1...cameras {
                let id = CameraID("cam\(index)")
                let frame = VideoFrame.allocate(format: .i420, width: 320, height: 180, captureTime: MonotonicClock.now())
                frame.fill(with: YUVColor(red: 40 * index, green: 30, blue: 30))
                let slot = LatestValue<VideoFrame>()
                slot.publish(frame)
                let wakes = self.wakes, holder = DemandHolder(), picturesOnWake = !slowCameras.contains(id)
                let demand = CameraDemand(wake: {
                    wakes.counts.withLock { $0[id, default: 0] += 1 }
                    if picturesOnWake, let demand = holder.demand.withLock({ $0 }), demand.demand == .full { demand.noteFullPicture() }
                })
                holder.demand.withLock { $0 = demand }
                // Its slot holds a full-size picture already, as the camera would say.
                if picturesOnWake { demand.noteFullPicture() }
                demands[id] = demand
                slots[id] = slot
            }
            self.demands = demands
            self.slots = slots
            for (id, slot) in slots.sorted(by: { $0.key < $1.key }) { switcher.addSource(id, frames: slot, demand: demands[id]) }
            try switcher.setScenes(scenes)
            switcher.setBackups(backups)
            switcher.start()
            pump.start()
        }

        func stop() {
            switcher.stop()
            pump.stop()
        }

        /// The cameras whose demand is full now, by name.
        var full: [String] { demands.filter { $0.value.demand == .full }.keys.map(\.name).sorted() }

        func run(_ command: (@escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) -> Void) throws -> SwitchOutcome {
            let reply = LatestValue<Result<SwitchOutcome, SwitchError>>()
            command { reply.publish($0) }
            let answer = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value, "no reply")
            return try answer.get()
        }

        /// Waits until the program has delivered frame `number`.
        func waitForFrame(_ number: Int64) -> Bool { waitUntil { switcher.status.frameNumber >= number } }
    }

    @Test func onlyTheCamerasOnProgramAndPreviewAreNeededAtFullSize() throws {
        let rig = try Rig()
        defer { rig.stop() }
        // cam1, the first source, goes on program on the first frame.
        #expect(waitUntil { rig.switcher.status.programSource == "cam1" })
        #expect(rig.waitForFrame(2))
        #expect(rig.full == ["cam1"])

        // Preview: full from the moment the command is queued (before the frame that applies it).
        let preview = try rig.run { rig.switcher.setPreview(.camera("cam2"), completion: $0) }
        #expect(rig.full == ["cam1", "cam2"])
        #expect(rig.waitForFrame(preview.frameNumber + 2))
        #expect(rig.full == ["cam1", "cam2"])
        #expect(rig.wakes.counts.withLock { $0["cam2"] } == 1, "woken once when its demand turned full")

        // A cut swaps them: both still seen.
        let cut = try rig.run { rig.switcher.cut(completion: $0) }
        #expect(rig.waitForFrame(cut.frameNumber + 1))
        #expect(rig.switcher.status.programSource == "cam2" && rig.full == ["cam1", "cam2"])

        // A direct switch to cam3: cam3 and the preview (cam1) are needed; cam2 left program.
        let take = try rig.run { rig.switcher.switchProgram(to: "cam3", completion: $0) }
        #expect(rig.waitForFrame(take.frameNumber + 1))
        #expect(rig.full == ["cam1", "cam3"])
        #expect(rig.demands["cam2"]?.demand == .idle && rig.demands["cam4"]?.demand == .idle, "nobody needs them (no tiles, no backups)")
        #expect(rig.wakes.counts.withLock { $0["cam4"] } == nil, "never needed, never woken")
        #expect(rig.switcher.status.reducedFrames == 0)
        #expect(rig.switcher.status.heldTicks == 0, "every camera had its full picture in time")
    }

    /// A camera a backup rule names, on either side, stands by (reduced: its liveness is read from its
    /// pictures); one in a backup scene by its cameras; the rules set later count too.
    @Test func theCamerasOfBackupRulesStandBy() throws {
        let wide = SceneDescription(name: "wide", layout: .grid, sources: ["cam3", "cam4"])
        let rig = try Rig(cameras: 5, scenes: [wide], backups: ["cam1": BackupRule(backup: "cam2", back: .auto)])
        defer { rig.stop() }
        #expect(waitUntil { rig.switcher.status.programSource == "cam1" })
        #expect(rig.waitForFrame(2))
        #expect(rig.full == ["cam1"])
        #expect(rig.demands["cam2"]?.demand == .reduced && rig.demands["cam2"]?.currentReasons == .standby)
        #expect(rig.demands["cam3"]?.demand == .idle && rig.demands["cam5"]?.demand == .idle)
        rig.switcher.setBackups(["cam5": BackupRule(backup: "wide")])
        #expect(rig.demands["cam2"]?.demand == .idle)
        #expect(["cam3", "cam4", "cam5"].allSatisfy { rig.demands[CameraID($0)]?.demand == .reduced })
        #expect(rig.demands["cam1"]?.currentReasons == .seen, "the camera on program is seen, not standing by")
    }

    /// A take to a camera whose full-size picture is not decoded yet waits for it, at most 100 ms (3
    /// ticks at 30 fps), then goes ahead with what there is; the ticks it waited are counted.
    @Test func aTakeWaitsAtMostAMomentForTheFullPicture() throws {
        let rig = try Rig(slowCameras: ["cam3"])
        defer { rig.stop() }
        #expect(waitUntil { rig.switcher.status.programSource == "cam1" })
        #expect(rig.switcher.status.heldTicks == 0)
        _ = try rig.run { rig.switcher.switchProgram(to: "cam3", completion: $0) }
        #expect(rig.switcher.status.programSource == "cam3")
        #expect(rig.switcher.status.heldTicks == 3, "held \(rig.switcher.status.heldTicks) ticks")
        // A camera whose picture is there at once is not waited for.
        _ = try rig.run { rig.switcher.switchProgram(to: "cam2", completion: $0) }
        #expect(rig.switcher.status.programSource == "cam2" && rig.switcher.status.heldTicks == 3)
    }

    @Test func aSceneOnProgramOrPreviewNeedsAllItsCameras() throws {
        let quad = SceneDescription(name: "quad", layout: .grid, sources: ["cam2", "cam3"])
        let rig = try Rig(scenes: [quad])
        defer { rig.stop() }
        #expect(waitUntil { rig.switcher.status.programSource == "cam1" })
        let preview = try rig.run { rig.switcher.setPreview(.scene("quad"), completion: $0) }
        #expect(rig.waitForFrame(preview.frameNumber + 1))
        #expect(rig.full == ["cam1", "cam2", "cam3"])
        let onAir = try rig.run { rig.switcher.switchProgram(to: .scene("quad"), completion: $0) }
        _ = try rig.run { rig.switcher.setPreview(.camera("cam4"), completion: $0) }
        #expect(rig.waitForFrame(onAir.frameNumber + 2))
        #expect(rig.full == ["cam2", "cam3", "cam4"])
        // The scenes change under the program: the new scene's cameras are the ones needed.
        try rig.switcher.setScenes([SceneDescription(name: "quad", layout: .grid, sources: ["cam1", "cam4"])])
        #expect(rig.full == ["cam1", "cam4"])
    }

    @Test func aRunningTransitionNeedsBothItsEnds() throws {
        let rig = try Rig()
        defer { rig.stop() }
        #expect(waitUntil { rig.switcher.status.programSource == "cam1" })
        _ = try rig.run { rig.switcher.setPreview(.camera("cam2"), completion: $0) }
        let frames = 30
        let take = try rig.run { rig.switcher.auto(TransitionSpec(kind: .mix, frames: frames), completion: $0) }
        // During the mix the preview moves on to cam3: cam2, the mix's target, is still needed.
        let preview = try rig.run { rig.switcher.setPreview(.camera("cam3"), completion: $0) }
        #expect(preview.frameNumber < take.frameNumber + Int64(frames) - 1, "the preview came during the mix")
        #expect(rig.switcher.status.transition != nil)
        #expect(rig.full == ["cam1", "cam2", "cam3"])
        // After it: cam2 on program and cam1 on preview (an auto swaps them); cam3 is no longer seen.
        #expect(rig.waitForFrame(take.frameNumber + Int64(frames) + 1))
        #expect(rig.switcher.status.transition == nil && rig.switcher.status.programSource == "cam2")
        #expect(rig.full == ["cam1", "cam2"])
    }

    @Test func anOverlayOnAirNeedsItsCamera() throws {
        let rig = try Rig()
        defer { rig.stop() }
        #expect(waitUntil { rig.switcher.status.programSource == "cam1" })
        let layer = LayerDescription(source: .camera("cam4"), rect: .fraction(.whole))
        try rig.switcher.setOverlays([OverlayDescription(name: "guest", layers: [layer], on: false)])
        #expect(rig.full == ["cam1"])
        let reply = LatestValue<Result<OverlayOutcome, SwitchError>>()
        rig.switcher.setOverlay("guest", on: true) { reply.publish($0) }
        // Full from the request on, before the frame that shows the overlay.
        #expect(rig.full == ["cam1", "cam4"])
        let outcome = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value).get()
        #expect(rig.waitForFrame(outcome.frameNumber + 1))
        #expect(rig.full == ["cam1", "cam4"])
    }

    /// A camera whose full-size picture was not ready when it went on program: its reduced picture is
    /// shown (scaled: the cut still lands on its frame) and counted as a problem.
    @Test func aReducedPictureOnProgramIsShownScaledAndCounted() throws {
        let rig = try Rig()
        defer { rig.stop() }
        #expect(waitUntil { rig.switcher.status.programSource == "cam1" })
        var small = VideoFrame.allocate(format: .i420, width: 160, height: 90, captureTime: MonotonicClock.now())
        small.fill(with: YUVColor(red: 30, green: 200, blue: 30))
        small.reduction = 2
        rig.slots["cam4"]?.publish(small)
        let take = try rig.run { rig.switcher.switchProgram(to: "cam4", completion: $0) }
        #expect(rig.waitForFrame(take.frameNumber + 2))
        #expect(rig.switcher.status.reducedFrames >= 3, "\(rig.switcher.status.reducedFrames)")
        #expect(rig.switcher.status.slate == nil)
        #expect(rig.switcher.status.scaledFrames >= 3)
    }
}
