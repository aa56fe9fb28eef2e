import Testing
import Synchronization
import FrameDrawing
import StudioCore
import StudioSystem
import TestSupport
@testable import Switcher

/// Per-camera picture settings on the program, judged on the delivered pictures: the camera is red on
/// its left half and blue on its right half, so a mirror, a crop or nothing at all each show plainly.
private let format = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))
private let red = YUVColor(red: 220, green: 30, blue: 30)
private let blue = YUVColor(red: 30, green: 30, blue: 220)
/// Sampled in every frame: well inside the left and the right half.
private let points = [PixelRect(x: 40, y: 90, width: 2, height: 2), PixelRect(x: 280, y: 90, width: 2, height: 2)]

/// One delivered frame: its colours at `points`, and whether it is the camera's very frame (same storage).
private struct Shown: Sendable {
    var pts: MediaTime
    var left: YUVColor
    var right: YUVColor
    var isCameraFrame: Bool
}

private final class ShownLog: Sendable {
    let list = Mutex<[Shown]>([])
}

private final class TwoColourProgram: Sendable {
    let switcher: ProgramSwitcher
    let events = RecordedEvents()
    /// The program clock, one frame at a time: every tick on time however busy the machine is.
    let pump = ClockPump(step: format.frameRate.periodNanoseconds + 1)
    let camera = CameraID("cam1")
    /// The camera's one frame (kept alive, so storage identity means something).
    let frame: VideoFrame
    private let shown = ShownLog()

    init() {
        let frame = VideoFrame.allocate(format: .i420, width: 320, height: 180, captureTime: MonotonicClock.now())
        frame.fill(PixelRect(x: 0, y: 0, width: 160, height: 180), with: red)
        frame.fill(PixelRect(x: 160, y: 0, width: 160, height: 180), with: blue)
        self.frame = frame
        let storage = frame.storage
        let shown = self.shown
        switcher = ProgramSwitcher(format: format, configuration: .init(lossTimeout: 3600), clock: pump.clock, events: events) { delivered, pts in
            let colors = points.map { delivered.averageColor(in: $0) ?? .black }
            shown.list.withLock { $0.append(Shown(pts: pts, left: colors[0], right: colors[1], isCameraFrame: delivered.storage === storage)) }
        }
        let slot = LatestValue<VideoFrame>()
        slot.publish(frame)
        switcher.addSource(camera, frames: slot)
        switcher.start()
        pump.start()
    }

    /// Stops the switcher, then its clock.
    func stop() {
        switcher.stop()
        pump.stop()
    }

    var all: [Shown] { shown.list.withLock { $0 } }


    /// Sets `settings` and waits for the frame that first shows them.
    func set(_ settings: PictureSettings) throws -> PictureOutcome {
        let reply = LatestValue<Result<PictureOutcome, SwitchError>>()
        try switcher.setPicture(settings, for: camera) { reply.publish($0) }
        let answer = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value, "no reply")
        return try answer.get()
    }

    /// The frames from `pts` on, once there are `count`.
    func frames(from pts: MediaTime, count: Int) throws -> [Shown] {
        #expect(waitUntil { all.filter { $0.pts >= pts }.count >= count })
        return Array(all.filter { $0.pts >= pts }.prefix(count))
    }

    /// Waits until the program shows the camera (the first-source cut is on air).
    func waitForCamera() {
        #expect(waitUntil { all.contains { close($0.left, red) } })
    }
}

private func close(_ a: YUVColor, _ b: YUVColor, within tolerance: Double = 6) -> Bool { a.distance(to: b) <= tolerance }

private func settings(_ change: (inout PictureSettings) -> Void) -> PictureSettings {
    var settings = PictureSettings()
    change(&settings)
    return settings
}

@Suite(.serialized) struct PictureTests {
    @Test func mirrorSwapsTheCamerasHalvesFromTheNextFrameWithAnEventAtItsPts() throws {
        let program = TwoColourProgram()
        defer { program.stop() }
        program.waitForCamera()

        let outcome = try program.set(settings { $0.mirror = true })
        #expect(outcome.camera == program.camera && outcome.settings.mirror && outcome.previous == PictureSettings())
        let frames = try program.frames(from: outcome.programTime, count: 3)
        // The frame before still shows the camera as it is; from the change's frame on it is mirrored.
        let before = try #require(program.all.last { $0.pts < outcome.programTime })
        #expect(close(before.left, red) && close(before.right, blue) && before.isCameraFrame, "\(before)")
        #expect(frames[0].pts == outcome.programTime)
        for frame in frames {
            #expect(close(frame.left, blue) && close(frame.right, red) && !frame.isCameraFrame, "\(frame)")
        }
        let event = try #require(program.events.all.first { $0.kind == .pictureChanged })
        #expect(event.camera == program.camera && event.programTime == outcome.programTime)
        #expect(event.details == ["mirror": "false -> true"])
        #expect(program.switcher.status.pictures == ["cam1": settings { $0.mirror = true }])
        #expect(program.switcher.picture(of: program.camera).mirror)
    }

    @Test func aCropChangesWhatIsShown() throws {
        let program = TwoColourProgram()
        defer { program.stop() }
        program.waitForCamera()
        // The left half only, scaled to the whole program: red everywhere.
        let outcome = try program.set(settings { $0.crop = RelativeRect(x: 0, y: 0, width: 0.5, height: 1) })
        let frame = try #require(try program.frames(from: outcome.programTime, count: 1).first)
        #expect(frame.pts == outcome.programTime)
        #expect(close(frame.left, red) && close(frame.right, red), "\(frame)")
        let event = try #require(program.events.all.first { $0.kind == .pictureChanged })
        #expect(event.details == ["crop": "none -> 0,0,0.5,1"])
    }

    @Test func identitySettingsPassTheCamerasFrameThroughUntouched() throws {
        let program = TwoColourProgram()
        defer { program.stop() }
        program.waitForCamera()
        let unset = program.all.filter { close($0.left, red) }
        #expect(unset.allSatisfy { $0.isCameraFrame }, "no settings: the camera's own frame")

        let mirrored = try program.set(settings { $0.mirror = true })
        #expect(try program.frames(from: mirrored.programTime, count: 2).allSatisfy { !$0.isCameraFrame })
        // Back to the defaults: the very same frame again, no copy.
        let plain = try program.set(PictureSettings())
        let frames = try program.frames(from: plain.programTime, count: 3)
        #expect(frames.allSatisfy { $0.isCameraFrame && close($0.left, red) && close($0.right, blue) }, "\(frames)")
        #expect(program.switcher.status.pictures.isEmpty)
        let events = program.events.all.filter { $0.kind == .pictureChanged }
        #expect(events.map(\.programTime) == [mirrored.programTime, plain.programTime])
        #expect(events.last?.details == ["mirror": "true -> false"])
        // Setting the same settings again changes nothing, so it logs nothing.
        let again = try program.set(PictureSettings())
        #expect(again.previous == PictureSettings())
        _ = try program.frames(from: again.programTime, count: 2)
        #expect(program.events.all.filter { $0.kind == .pictureChanged }.count == 2)
    }

    @Test func badSettingsAndUnknownCamerasAreRefusedAndChangeNothing() throws {
        let program = TwoColourProgram()
        defer { program.stop() }
        program.waitForCamera()
        let refused: [(PictureSettings, String)] = [
            (settings { $0.beauty = 140; $0.mirror = true }, "beauty must be between 0 and 100 (got 140)"),
            (settings { $0.rotation = 45 }, "rotate must be 0, 90, 180 or 270 (got 45)"),
            (settings { $0.brightness = -2 }, "brightness must be between -1 and 1 (got -2)"),
            (settings { $0.gamma = 0 }, "gamma must be between 0.1 and 10 (got 0)"),
            (settings { $0.crop = RelativeRect(x: 0.5, y: 0, width: 0.8, height: 1) }, "crop: "),
        ]
        for (bad, message) in refused {
            #expect {
                try program.switcher.setPicture(bad, for: program.camera)
            } throws: { error in
                guard case .invalidPicture(let why) = error as? SwitchError else { return false }
                return why.hasPrefix(message)
            }
        }
        #expect(throws: SwitchError.unknownCamera(CameraID("cam9"), available: [program.camera])) {
            try program.switcher.setPicture(settings { $0.mirror = true }, for: CameraID("cam9"))
        }
        #expect(program.switcher.picture(of: program.camera) == PictureSettings())
        // Frames well after the refusals still show the camera as it is, and nothing was logged.
        let after = program.all.count
        #expect(waitUntil { program.all.count >= after + 5 })
        #expect(program.all.suffix(5).allSatisfy { $0.isCameraFrame && close($0.left, red) && close($0.right, blue) })
        #expect(program.switcher.status.pictures.isEmpty)
        #expect(!program.events.all.contains { $0.kind == .pictureChanged })
    }

    @Test func aFrameThatCannotBeProcessedShowsTheCameraErrorSlateWithOneEventAndCamerasNotShownAreLeftAlone() throws {
        let events = RecordedEvents()
        let camera = CameraID("cam1")
        let switcher = ProgramSwitcher(format: format, configuration: .init(lossTimeout: 3600), events: events) { _, _ in }
        // A packed frame without planes: nothing can convert it.
        let broken = VideoFrame(format: .yuyv, width: 320, height: 180, planes: [], storage: FrameStorage(capacity: 16),
                                captureTime: MonotonicClock.now(), sequence: 1)
        let slot = LatestValue<VideoFrame>()
        slot.publish(broken)
        switcher.addSource(camera, frames: slot)
        try switcher.setPicture(settings { $0.mirror = true }, for: camera)
        // Another broken camera with settings, not shown: its frames are never touched.
        switcher.addSource(CameraID("cam2"), frames: slot)
        try switcher.setPicture(settings { $0.beauty = 50 }, for: CameraID("cam2"))
        switcher.start()
        defer { switcher.stop() }
        #expect(waitUntil { switcher.status.framesDelivered >= 10 })
        let status = switcher.status
        #expect(status.slate == "CAMERA ERROR cam1" && status.slateFrames >= 10, "\(status)")
        let errors = events.all.filter { $0.kind == .error && $0.details["error"]?.hasPrefix("picture settings on yuyv 320x180") == true }
        #expect(errors.count == 1, "\(events.all.filter { $0.kind == .error })")
        #expect(errors.first?.camera == camera && errors.first?.details["stage"] == "switcher")
        #expect(!events.all.contains { $0.kind == .error && $0.camera == CameraID("cam2") })
    }

    @Test func changesAreFailedWhenTheProgramStopsBeforeTheirFrame() throws {
        let events = RecordedEvents()
        let switcher = ProgramSwitcher(format: format, events: events) { _, _ in }
        switcher.addSource(CameraID("cam1"), frames: LatestValue<VideoFrame>())
        let reply = LatestValue<Result<PictureOutcome, SwitchError>>()
        try switcher.setPicture(settings { $0.flip = true }, for: CameraID("cam1")) { reply.publish($0) }
        #expect(switcher.picture(of: CameraID("cam1")).flip, "a pending change counts for the next one")
        switcher.stop()
        let answer = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 5).value)
        #expect(throws: SwitchError.stoppedBefore("the picture change of 'cam1'")) { try answer.get() }
    }
}
