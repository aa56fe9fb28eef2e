import Testing
import Synchronization
import FrameDrawing
import StudioCore
import StudioSystem
import TestSupport
@testable import Switcher

/// Scenes, preview/program and transitions, judged on the delivered pictures: each source is a solid
/// colour, so every place of the program says which source it shows.
private let format = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))
private let red = YUVColor(red: 220, green: 30, blue: 30)
private let blue = YUVColor(red: 30, green: 30, blue: 220)
private let green = YUVColor(red: 30, green: 200, blue: 30)
private let yellow = YUVColor(red: 220, green: 220, blue: 30)

/// One delivered frame, reduced to the colours at the points a test asked for.
private struct Sample: Sendable {
    var pts: MediaTime
    var colors: [YUVColor]
}

private final class SampleLog: Sendable {
    let list = Mutex<[Sample]>([])
}

private final class Program: Sendable {
    let switcher: ProgramSwitcher
    let events = RecordedEvents()
    /// The program clock, one frame at a time: every tick on time however busy the machine is.
    let pump = ClockPump(step: format.frameRate.periodNanoseconds + 1)
    private let samples = SampleLog()

    /// Sources named cam1... in the given colours; `points` are sampled (a 2x2 block each) in every frame.
    init(colors: [YUVColor], points: [(x: Int, y: Int)], scenes: [SceneDescription] = []) throws {
        let samples = self.samples
        let switcher = ProgramSwitcher(format: format, configuration: .init(lossTimeout: 3600), clock: pump.clock, events: events) { frame, pts in
            let colors = points.map { frame.averageColor(in: PixelRect(x: $0.x, y: $0.y, width: 2, height: 2)) ?? .black }
            samples.list.withLock { $0.append(Sample(pts: pts, colors: colors)) }
        }
        self.switcher = switcher
        for (index, color) in colors.enumerated() {
            let frame = VideoFrame.allocate(format: .i420, width: 320, height: 180, captureTime: MonotonicClock.now())
            frame.fill(with: color)
            let slot = LatestValue<VideoFrame>()
            slot.publish(frame)
            switcher.addSource(CameraID("cam\(index + 1)"), frames: slot)
        }
        try switcher.setScenes(scenes)
        switcher.start()
        pump.start()
    }

    /// Stops the switcher, then its clock.
    func stop() {
        switcher.stop()
        pump.stop()
    }

    var all: [Sample] { samples.list.withLock { $0 } }


    /// Runs a command and waits for its reply.
    func run(_ command: (@escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) -> Void) throws -> SwitchOutcome {
        let reply = LatestValue<Result<SwitchOutcome, SwitchError>>()
        command { reply.publish($0) }
        let answer = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value, "no reply")
        return try answer.get()
    }

    /// The samples of frames at or after `pts`, once `count` of them are there.
    func frames(from pts: MediaTime, count: Int) throws -> [Sample] {
        #expect(waitUntil { all.filter { $0.pts >= pts }.count >= count })
        return Array(all.filter { $0.pts >= pts }.prefix(count))
    }
}

private func close(_ a: YUVColor, _ b: YUVColor, within tolerance: Double = 6) -> Bool { a.distance(to: b) <= tolerance }

@Suite(.serialized) struct CompositionTests {
    @Test func aPipSceneInsetsTheSecondCameraWhereTheSceneSays() throws {
        // Inset: 30 % of the width and height (96x54), a margin of 3 % of the width (9.6 px) from the top and
        // right edges, edges on even pixels: x 214..310, y 10..64.
        let inset = (x0: 214, y0: 10, x1: 310, y1: 64)
        let points = [(inset.x0 + 3, inset.y0 + 3), (inset.x1 - 5, inset.y1 - 5),  // inside, near two corners
                      (inset.x0 - 5, inset.y0 + 10), (inset.x1 - 10, inset.y1 + 3),  // just outside, left and below
                      (40, 140)]  // far away
        let scene = SceneDescription(name: "pip", layout: .pip, sources: ["cam1", "cam2"], corner: .topRight, size: 0.3)
        let program = try Program(colors: [red, blue], points: points.map { (x: $0.0, y: $0.1) }, scenes: [scene])
        defer { program.stop() }
        let cut = try program.run { program.switcher.switchProgram(to: .scene("pip"), completion: $0) }
        let frame = try #require(try program.frames(from: cut.programTime, count: 1).first)
        #expect(frame.pts == cut.programTime)
        #expect(close(frame.colors[0], blue) && close(frame.colors[1], blue), "inside the inset: \(frame.colors[0]), \(frame.colors[1])")
        #expect(close(frame.colors[2], red) && close(frame.colors[3], red), "around the inset: \(frame.colors[2]), \(frame.colors[3])")
        #expect(close(frame.colors[4], red))
        #expect(program.switcher.status.tally == ["pip": .program, "cam1": .program, "cam2": .program])
        let event = try #require(program.events.all.last { $0.kind == .switchProgram })
        #expect(event.details["scene"] == "pip" && event.programTime == cut.programTime && event.camera == nil)
    }

    @Test func aGridOfFourShowsEachCameraInItsQuadrant() throws {
        let points = [(80, 45), (240, 45), (80, 135), (240, 135)]
        let scene = SceneDescription(name: "quad", layout: .grid, sources: ["cam1", "cam2", "cam3", "cam4"])
        let program = try Program(colors: [red, blue, green, yellow], points: points.map { (x: $0.0, y: $0.1) }, scenes: [scene])
        defer { program.stop() }
        let cut = try program.run { program.switcher.switchProgram(to: .scene("quad"), completion: $0) }
        let frame = try #require(try program.frames(from: cut.programTime, count: 1).first)
        for (color, expected) in zip(frame.colors, [red, blue, green, yellow]) { #expect(close(color, expected), "\(color) for \(expected)") }
    }

    @Test func aMixBlendsMonotonicallyOverExactlyNFramesFromItsStartEvent() throws {
        let program = try Program(colors: [red, blue], points: [(160, 90)])
        defer { program.stop() }
        _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
        let frames = 10
        let take = try program.run { program.switcher.auto(TransitionSpec(kind: .mix, frames: frames), completion: $0) }
        #expect(take.transition?.frames == frames)
        let samples = try program.frames(from: take.programTime, count: frames + 2)
        let started = try #require(program.events.first(.transitionStarted))
        #expect(started.programTime == take.programTime && started.details["frames"] == "10" && started.details["to"] == "cam2")
        // Frame i of N shows (i + 1) / N of B: V (red's high, blue's low) falls by 1/N of the way each frame.
        let v = samples.map { Double($0.colors[0].v) }
        let (a, b) = (Double(red.v), Double(blue.v))
        for i in 0..<frames {
            let expected = a + (b - a) * Double(i + 1) / Double(frames)
            #expect(abs(v[i] - expected) <= 2, "frame \(i): V \(v[i]), expected \(expected)")
        }
        #expect(zip(v, v.dropFirst()).allSatisfy { $0 >= $1 }, "monotonic: \(v)")
        #expect(close(samples[frames].colors[0], blue))
        let ended = try #require(program.events.first(.transitionEnded))
        #expect(ended.programTime == samples[frames - 1].pts && ended.details["taken_over"] == "false")
        // At its end program and preview swap.
        #expect(waitUntil { program.switcher.status.program == .camera("cam2") && program.switcher.status.preview == .camera("cam1") })
    }

    @Test func aWipeMovesItsEdgeOneNthOfTheWidthPerFrame() throws {
        let columns = stride(from: 4, to: 320, by: 16).map { (x: $0, y: 90) }
        let program = try Program(colors: [red, blue], points: columns)
        defer { program.stop() }
        _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
        let frames = 8
        let take = try program.run { program.switcher.auto(TransitionSpec(kind: .wipeRight, frames: frames), completion: $0) }
        let samples = try program.frames(from: take.programTime, count: frames)
        for (i, sample) in samples.enumerated() {
            let edge = 320 * (i + 1) / frames
            for (column, color) in zip(columns, sample.colors) {
                let expected = column.x + 2 <= edge ? blue : red
                #expect(close(color, expected), "frame \(i), x \(column.x), edge \(edge): \(color)")
            }
        }
    }

    @Test func previewCutAndAutoAgreeWithTallyAndEvents() throws {
        let scene = SceneDescription(name: "two", layout: .sideBySide, sources: ["cam2", "cam3"])
        let program = try Program(colors: [red, blue, green], points: [(80, 90), (240, 90)], scenes: [scene])
        defer { program.stop() }
        #expect(waitUntil { program.switcher.status.program == .camera("cam1") })
        let preview = try program.run { program.switcher.setPreview(.scene("two"), completion: $0) }
        #expect(waitUntil { program.switcher.status.tally == ["cam1": .program, "two": .preview, "cam2": .preview, "cam3": .preview] })
        let previewEvent = try #require(program.events.first(.preview))
        #expect(previewEvent.details["preview"] == "two" && previewEvent.programTime == preview.programTime)
        let cut = try program.run { program.switcher.cut(completion: $0) }
        #expect(cut.source == .scene("two") && cut.previous == .camera("cam1"))
        let frame = try #require(try program.frames(from: cut.programTime, count: 1).first)
        #expect(close(frame.colors[0], blue) && close(frame.colors[1], green))
        #expect(waitUntil { program.switcher.status.tally == ["cam1": .preview, "two": .program, "cam2": .program, "cam3": .program] })
        let tallies = program.events.all.filter { $0.kind == .tally }
        #expect(tallies.last?.details["program"] == "cam2,cam3,two" && tallies.last?.details["preview"] == "cam1")
        #expect(tallies.last?.programTime == cut.programTime)

        // A camera in both: cam2 on program in the scene and on preview by itself.
        _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
        #expect(waitUntil { program.switcher.status.tally["cam2"] == .both })
    }

    /// Tally's one rule while a transition runs: both sides are on program, every layer of a scene too.
    @Test func bothSidesOfARunningTransitionAndEveryLayerOfItsSceneAreOnProgram() throws {
        let scene = SceneDescription(name: "two", layout: .sideBySide, sources: ["cam2", "cam3"])
        let program = try Program(colors: [red, blue, green], points: [(160, 90)], scenes: [scene])
        defer { program.stop() }
        #expect(waitUntil { program.switcher.status.program == .camera("cam1") })
        _ = try program.run { program.switcher.setPreview(.scene("two"), completion: $0) }
        let take = try program.run { program.switcher.auto(TransitionSpec(kind: .mix, frames: 300), completion: $0) }
        #expect(waitUntil { program.switcher.status.transition != nil })
        // What it leaves and what it brings, each camera of the scene: all seen on program while it runs.
        #expect(program.switcher.status.tally == ["cam1": .program, "two": .both, "cam2": .both, "cam3": .both])
        let during = try #require(program.events.all.last { $0.kind == .tally })
        #expect(during.details["program"] == "cam1,cam2,cam3,two" && during.programTime == take.programTime)
        // Once it ends (a cut completes it), what it left is on preview only.
        _ = try program.run { program.switcher.cut(completion: $0) }
        #expect(waitUntil { program.switcher.status.tally == ["cam1": .preview, "two": .program, "cam2": .program, "cam3": .program] })
    }

    @Test func aCutDuringATransitionCompletesItAtOnce() throws {
        let program = try Program(colors: [red, blue], points: [(160, 90)])
        defer { program.stop() }
        _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
        let take = try program.run { program.switcher.auto(TransitionSpec(kind: .mix, frames: 300), completion: $0) }
        #expect(waitUntil { program.all.filter { $0.pts > take.programTime }.count >= 3 })
        // auto again while it runs: refused, saying what runs.
        #expect(throws: SwitchError.self) { _ = try program.run { program.switcher.auto(completion: $0) } }
        let cut = try program.run { program.switcher.cut(completion: $0) }
        #expect(cut.source == .camera("cam2"))
        let frame = try #require(try program.frames(from: cut.programTime, count: 1).first)
        #expect(close(frame.colors[0], blue))
        let ended = try #require(program.events.first(.transitionEnded))
        #expect(ended.details["taken_over"] == "true" && ended.programTime == cut.programTime)
        #expect(Int(ended.details["shown"] ?? "") ?? 0 >= 3)
    }

    @Test func aLostCameraInASceneShowsTheSlateInItsLayerOnly() throws {
        let scene = SceneDescription(name: "pip", layout: .pip, sources: ["cam1", "cam2"], corner: .bottomLeft, size: 0.5)
        let program = try Program(colors: [red, blue], points: [(30, 120), (250, 40)], scenes: [scene])
        defer { program.stop() }
        _ = try program.run { program.switcher.switchProgram(to: .scene("pip"), completion: $0) }
        program.switcher.markSourceLost("cam2")
        // The slate's top quarter is plain slate colour: the inset's top-left area shows it.
        #expect(waitUntil { program.all.last.map { close($0.colors[0], ProgramSwitcher.slateColor) } ?? false })
        let last = try #require(program.all.last)
        #expect(close(last.colors[1], red))
        #expect(program.switcher.status.slate == nil)
    }

    @Test func badCommandsAreRefusedWithTheirReason() throws {
        let scene = SceneDescription(name: "pip", layout: .pip, sources: ["cam1", "cam2"])
        let program = try Program(colors: [red, blue], points: [], scenes: [scene])
        defer { program.stop() }
        #expect(throws: SwitchError.nothingOnPreview) { _ = try program.run { program.switcher.cut(completion: $0) } }
        #expect(throws: SwitchError.unknownSource("nope", cameras: ["cam1", "cam2"], scenes: ["pip"])) {
            _ = try program.switcher.source(named: "nope")
        }
        #expect(try program.switcher.source(named: "pip") == .scene("pip"))
        for frames in [0, 10_000] {
            #expect(throws: SwitchError.self) { try program.switcher.setDefaultTransition(TransitionSpec(kind: .mix, frames: frames)) }
        }
        let outside = SceneDescription(name: "x", layout: nil, layers: [
            LayerDescription(source: .camera("cam1"), rect: .pixels(x: 300, y: 0, width: 100, height: 100)),
        ])
        #expect(throws: SwitchError.invalidScene("scene 'x': the rectangle 100x100+300+0 reaches outside the 320x180 program")) {
            try program.switcher.setScenes([outside])
        }
        #expect(program.switcher.status.scenes == ["pip"], "a refused set of scenes changes nothing")
    }
}
