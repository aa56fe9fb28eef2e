import Foundation
import Testing
import Synchronization
import Capture
import FrameDrawing
import StudioCore
import StudioSystem
import TestSupport
@testable import Switcher

/// Stinger transitions judged on the program's pictures: cam1 red (A), cam2 blue (B), and a sting whose
/// left half is opaque grey, its luma telling its picture (`40 + 7 * k`), its right half transparent.
private let format = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))
private let red = YUVColor(red: 220, green: 30, blue: 30)
private let blue = YUVColor(red: 30, green: 30, blue: 220)
/// A point under the sting's opaque half, and one under its transparent half.
private let opaque = (x: 80, y: 90), clear = (x: 240, y: 90)

private struct Sample: Sendable {
    var pts: MediaTime
    var opaque: YUVColor
    var clear: YUVColor
}

private final class StingerProgram: Sendable {
    let switcher: ProgramSwitcher
    let events = RecordedEvents()
    let pump = ClockPump(step: format.frameRate.periodNanoseconds + 1)
    private final class Log: Sendable { let samples = Mutex<[Sample]>([]) }
    private let log = Log()

    init(stingers: [StingerClip]) throws {
        let log = log
        switcher = ProgramSwitcher(format: format, configuration: .init(lossTimeout: 3600), clock: pump.clock, events: events) { frame, pts in
            func at(_ point: (x: Int, y: Int)) -> YUVColor { frame.averageColor(in: PixelRect(x: point.x, y: point.y, width: 2, height: 2)) ?? .black }
            log.samples.withLock { $0.append(Sample(pts: pts, opaque: at(opaque), clear: at(clear))) }
        }
        for (index, color) in [red, blue].enumerated() {
            let frame = VideoFrame.allocate(format: .i420, width: 320, height: 180, captureTime: MonotonicClock.now())
            frame.fill(with: color)
            let slot = LatestValue<VideoFrame>()
            slot.publish(frame)
            switcher.addSource(CameraID("cam\(index + 1)"), frames: slot)
        }
        switcher.setStingers(stingers)
        switcher.start()
        pump.start()
    }

    func stop() {
        switcher.stop()
        pump.stop()
    }

    func run(_ command: (@escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) -> Void) throws -> SwitchOutcome {
        let reply = LatestValue<Result<SwitchOutcome, SwitchError>>()
        command { reply.publish($0) }
        return try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value, "no reply").get()
    }

    func frames(from pts: MediaTime, count: Int) throws -> [Sample] {
        let all = { self.log.samples.withLock { $0.filter { $0.pts >= pts } } }
        try #require(waitUntil { all().count >= count })
        return Array(all().prefix(count))
    }
}

private func close(_ a: YUVColor, _ b: YUVColor, within tolerance: Double = 6) -> Bool { a.distance(to: b) <= tolerance }

/// The sting's picture `k`'s colour (25 colours, repeating).
private func stingColor(_ k: Int) -> YUVColor { YUVColor(y: UInt8(StingClips.luma(k)), u: 128, v: 128) }

/// Which of the sting's pictures `color` is (nil: not a sting picture).
private func stingPicture(_ color: YUVColor) -> Int? {
    guard abs(Int(color.u) - 128) <= 4, abs(Int(color.v) - 128) <= 4 else { return nil }
    return Int((Double(Int(color.y) - 40) / 7).rounded())
}

/// A sting of `count` pictures at `fps`, program-size, left half opaque.
func syntheticSting(fps: Int64, count: Int, path: String = "sting.mov") -> StingerClip {
    var alpha = [UInt8](repeating: 0, count: 320 * 180)
    for row in 0..<180 { for x in 0..<160 { alpha[row * 320 + x] = 255 } }
    let pictures = (0..<count).map { k in
        let frame = VideoFrame.allocate(format: .i420, width: 320, height: 180)
        frame.fill(with: stingColor(k))
        return StingerClip.Picture(frame: frame, alpha: alpha)
    }
    let times = (0..<Int64(count)).map { $0 * 1_000_000_000 / fps }
    return StingerClip(path: path, pictures: pictures, timing: StingerTiming(times: times, length: Int64(count) * 1_000_000_000 / fps))
}

/// Runs a stinger (cut at 400 ms) from cam1 to cam2 and checks every frame: the sting's picture for the
/// tick in the opaque half (`expected(i)`), A before tick 12 and B from it in the clear half; then B alone.
func checkStinger(_ clip: StingerClip, frames: Int, expected: (Int) -> Int) throws {
    let program = try StingerProgram(stingers: [clip])
    defer { program.stop() }
    _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
    let spec = TransitionSpec(kind: .stinger, clip: clip.path, cutAtMilliseconds: 400)
    let take = try program.run { program.switcher.auto(spec, completion: $0) }
    #expect(take.transition?.frames == frames)
    let samples = try program.frames(from: take.programTime, count: frames + 2)
    for (i, sample) in samples.prefix(frames).enumerated() {
        #expect(stingPicture(sample.opaque) == expected(i) % 25, "tick \(i): \(sample.opaque) is not sting picture \(expected(i))")
        #expect(close(sample.clear, i < 12 ? red : blue), "tick \(i): \(sample.clear) under the sting, expected \(i < 12 ? "A" : "B")")
    }
    // Over: B alone, everywhere.
    #expect(close(samples[frames].opaque, blue) && close(samples[frames].clear, blue), "\(samples[frames])")
    let started = try #require(program.events.first(.transitionStarted))
    #expect(started.details["kind"] == "stinger" && started.details["clip"] == clip.path && started.details["cut_at_ms"] == "400")
    #expect(started.details["frames"] == String(frames) && started.programTime == take.programTime)
    // The switch is recorded where every transition's is: its last frame (the transition's end).
    let ended = try #require(program.events.first(.transitionEnded))
    #expect(ended.programTime == samples[frames - 1].pts && ended.details["shown"] == String(frames))
    let switched = try #require(program.events.all.last { $0.kind == .switchProgram })
    #expect(switched.camera == "cam2" && switched.details["via"] == "stinger" && switched.programTime == ended.programTime)
    #expect(waitUntil { program.switcher.status.program == .camera("cam2") && program.switcher.status.preview == .camera("cam1") })
}

@Suite(.serialized) struct StingerTests {
    @Test func a25fpsStingOnA30fpsProgramShowsItsPictureByTheClockAndCutsUnderneathAt400ms() throws {
        try checkStinger(syntheticSting(fps: 25, count: 25), frames: 30) { $0 * 25 / 30 }
    }

    @Test func a60fpsStingShowsEveryOtherPicture() throws {
        try checkStinger(syntheticSting(fps: 60, count: 30), frames: 15) { $0 * 2 }
    }

    /// Tally's rule while it runs, as for any transition: both sides on program.
    @Test func bothSidesAreOnProgramWhileItRunsAndACutCompletesIt() throws {
        let program = try StingerProgram(stingers: [syntheticSting(fps: 25, count: 250)])
        defer { program.stop() }
        _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
        let take = try program.run { program.switcher.auto(TransitionSpec(kind: .stinger, clip: "sting.mov", cutAtMilliseconds: 400), completion: $0) }
        #expect(take.transition?.frames == 300)
        #expect(waitUntil { program.switcher.status.tally == ["cam1": .program, "cam2": .both] })
        let cut = try program.run { program.switcher.cut(completion: $0) }
        #expect(cut.source == .camera("cam2"))
        let after = try #require(try program.frames(from: cut.programTime, count: 1).first)
        #expect(close(after.opaque, blue) && close(after.clear, blue))
    }

    @Test func aStingerWhoseClipIsNotLoadedOrWhoseCutIsOutsideItIsRefused() throws {
        let program = try StingerProgram(stingers: [syntheticSting(fps: 25, count: 25)])
        defer { program.stop() }
        _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
        let missing = TransitionSpec(kind: .stinger, clip: "other.mov", cutAtMilliseconds: 400)
        #expect { _ = try program.run { program.switcher.auto(missing, completion: $0) } } throws: { "\($0)".contains("other.mov is not loaded") }
        let late = TransitionSpec(kind: .stinger, clip: "sting.mov", cutAtMilliseconds: 1000)
        #expect { try program.switcher.setDefaultTransition(late) } throws: {
            "\($0)".contains("cut_at_ms 1000") && "\($0)".contains("sting.mov") && "\($0)".contains("1000 ms")
        }
        // The default transition as set: a stinger's frames are its clip's.
        try program.switcher.setDefaultTransition(TransitionSpec(kind: .stinger, clip: "sting.mov", cutAtMilliseconds: 200))
        #expect(program.switcher.status.defaultTransition.frames == 30)
        #expect(program.switcher.status.program == .camera("cam1"))
    }

    /// Its start is told (`watchStingers`, where its sound starts) with its clip and the pts of its first
    /// frame: the one showing the sting's picture 0, the frame before it still all A.
    @Test func aStingersStartIsToldWithItsClipAndThePtsOfTheFrameShowingItsFirstPicture() throws {
        final class Told: Sendable { let starts = Mutex<[(path: String, pts: MediaTime)]>([]) }
        let told = Told()
        let program = try StingerProgram(stingers: [syntheticSting(fps: 30, count: 30)])
        defer { program.stop() }
        program.switcher.watchStingers { clip, pts in told.starts.withLock { $0.append((clip.path, pts)) } }
        _ = try program.run { program.switcher.setPreview(.camera("cam2"), completion: $0) }
        let take = try program.run { program.switcher.auto(TransitionSpec(kind: .stinger, clip: "sting.mov", cutAtMilliseconds: 400), completion: $0) }
        #expect(waitUntil { told.starts.withLock { !$0.isEmpty } })
        let starts = told.starts.withLock { $0 }
        let start = try #require(starts.first)
        #expect(starts.count == 1 && start.path == "sting.mov" && start.pts == take.programTime, "\(starts) \(take.programTime)")
        let period = MediaTime(microseconds: 1_000_000 / 30 + 1_000)  // a frame and a bit: the frame before
        let around = try program.frames(from: start.pts - period, count: 2)
        #expect(close(around[0].opaque, red) && close(around[1].opaque, stingColor(0)), "\(around) from \(start.pts)")
    }
}
