import Testing
import Synchronization
import Capture
import FrameDrawing
import StudioCore
import StudioSystem

private func smallFormat(_ pixelFormat: PixelFormat = .i420, width: Int = 320, height: Int = 180, rate: Int32 = 30) -> CameraFormat {
    CameraFormat(pixelFormat: pixelFormat, width: width, height: height, frameRate: Rational(rate))
}

/// Sum of the luma bytes in a region: changes when anything drawn there changes.
private func lumaChecksum(_ frame: VideoFrame, _ region: RelativeRect) -> Int {
    let rect = region.pixelRect(width: frame.width, height: frame.height)
    let base = frame.plane(0).assumingMemoryBound(to: UInt8.self)
    var sum = 0
    for row in rect.y..<rect.maxY {
        for column in rect.x..<rect.maxX { sum = sum &* 31 &+ Int(base[row * frame.planes[0].stride + column]) }
    }
    return sum
}

/// Waits for a frame newer than `version`.
private func nextFrame(_ camera: TestPatternCamera, after version: UInt64 = 0, timeout: Double = 2) throws -> (VideoFrame, UInt64) {
    let result = camera.frames.waitForNewer(than: version, timeoutSeconds: timeout)
    let frame = try #require(result.value, "no frame from \(camera.id) within \(timeout) s")
    try #require(result.version > version, "no new frame from \(camera.id) within \(timeout) s")
    return (frame, result.version)
}

@Suite(.serialized) struct TestPatternCameraTests {
    /// Load-independent: however late the capture thread runs, every tick of the camera's grid is either
    /// a captured frame or a counted drop, and each frame's number is the tick its capture time falls in
    /// (so two frames' numbers differ by their time apart times the rate, within one tick).
    @Test(arguments: [Int32(15), Int32(30)])
    func producesFramesOnItsOwnRateGrid(rate: Int32) throws {
        let format = smallFormat(rate: rate)
        let camera = try TestPatternCamera(id: "cam1", format: format)
        #expect(camera.state == .stopped)
        camera.start()
        var (frame, version) = try nextFrame(camera, timeout: 5)
        var seen: [(sequence: UInt64, captureTime: UInt64)] = [(frame.sequence, frame.captureTime)]
        let until = MonotonicClock.now() + 1_000_000_000
        while MonotonicClock.now() < until {
            (frame, version) = try nextFrame(camera, after: version, timeout: 5)
            seen.append((frame.sequence, frame.captureTime))
        }
        #expect(camera.state == .live)
        #expect(camera.currentFormat == format)
        camera.stop()
        let statistics = camera.statistics
        let latest = try #require(camera.frames.latest().value)

        // It kept producing: a handful of frames at the very least, more than one tick apart in time.
        #expect(statistics.framesCaptured >= 5, "\(statistics.framesCaptured) frames")
        #expect(seen.count >= 5)
        // Accounting: ticks 0...latest were each captured or dropped, none twice.
        #expect(statistics.framesCaptured + statistics.framesDropped == latest.sequence + 1,
                "captured \(statistics.framesCaptured) + dropped \(statistics.framesDropped) vs last tick \(latest.sequence)")
        #expect(statistics.lastFrameTime == latest.captureTime)
        // On the grid: numbers increase and match the capture times at this rate.
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.sequence < $1.sequence && $0.captureTime < $1.captureTime })
        let nanosecondsPerTick = 1e9 / Double(rate)
        for (earlier, later) in zip(seen, seen.dropFirst()) {
            let ticksApart = Double(later.captureTime - earlier.captureTime) / nanosecondsPerTick
            let numbersApart = Double(later.sequence - earlier.sequence)
            #expect(abs(ticksApart - numbersApart) < 1.001,
                    "frames \(earlier.sequence) and \(later.sequence) are \(ticksApart) ticks apart in time")
        }
        let sinceFirst = Double(latest.captureTime - seen[0].captureTime) / nanosecondsPerTick
        #expect(abs(sinceFirst - Double(latest.sequence - seen[0].sequence)) < 1.001)
    }

    @Test(arguments: [PixelFormat.i420, .nv12])
    func framesHaveTheConfiguredSizeAndFormat(pixelFormat: PixelFormat) throws {
        let format = smallFormat(pixelFormat, width: 640, height: 360)
        let camera = try TestPatternCamera(id: "cam2", format: format)
        camera.start()
        defer { camera.stop() }
        let (frame, _) = try nextFrame(camera)
        #expect(frame.format == pixelFormat)
        #expect(frame.width == 640 && frame.height == 360)
        #expect(frame.planes == pixelFormat.planeLayouts(width: 640, height: 360))
        #expect(frame.planes.count == (pixelFormat == .i420 ? 3 : 2))
        #expect(camera.currentFormat == format)
        #expect(camera.backend == .testPattern)
        #expect(camera.identity == "test-pattern:cam2")
    }

    @Test func defaultFormatIsTheProgramFormat() throws {
        let camera = try TestPatternCamera(id: "cam1")
        #expect(camera.format.pixelFormat == .i420)
        #expect(camera.format.width == ProgramFormat.default.width && camera.format.height == ProgramFormat.default.height)
        #expect(camera.format.frameRate == ProgramFormat.default.frameRate)
    }

    @Test func rejectsFormatsItCannotRender() {
        #expect(throws: CaptureError.self) { try TestPatternCamera(id: "cam1", format: smallFormat(.yuyv)) }
        #expect(throws: CaptureError.self) { try TestPatternCamera(id: "cam1", format: smallFormat(width: 321)) }
        #expect(throws: CaptureError.self) { try TestPatternCamera(id: "cam1", format: smallFormat(rate: 0)) }
        do {
            _ = try TestPatternCamera(id: "cam7", format: smallFormat(.bgra))
            Issue.record("bgra accepted")
        } catch {
            #expect(error.description.contains("cam7") && error.description.contains("bgra"))
        }
    }

    @Test(arguments: [PixelFormat.i420, .nv12])
    func identBlockShowsTheCamerasColour(pixelFormat: PixelFormat) throws {
        // Expected colours stated independently of the palette: red, green, blue, yellow.
        let expected: [(CameraID, (Int, Int, Int))] = [("cam1", (255, 0, 0)), ("cam2", (0, 255, 0)), ("cam3", (0, 0, 255)), ("cam4", (255, 255, 0))]
        let cameras = try expected.map { try TestPatternCamera(id: $0.0, format: smallFormat(pixelFormat)) }
        cameras.forEach { $0.start() }
        defer { cameras.forEach { $0.stop() } }
        for (camera, (id, rgb)) in zip(cameras, expected) {
            let (frame, _) = try nextFrame(camera)
            let color = try #require(frame.averageColor(in: TestPatternCamera.identRegion.centre(0.9)))
            let actual = color.rgb
            #expect(abs(actual.red - rgb.0) <= 6 && abs(actual.green - rgb.1) <= 6 && abs(actual.blue - rgb.2) <= 6,
                    "\(id): ident block is \(color), expected RGB \(rgb)")
            #expect(TestPatternCamera.camera(in: frame, among: expected.map(\.0)) == id)
            // The rest of the picture is not the ident colour (the block is where it is documented).
            let bars = try #require(frame.averageColor(in: TestPatternCamera.barsRegion))
            #expect(bars.distance(to: TestPatternCamera.identColor(for: id)) > 60)
        }
    }

    @Test func identColoursAreDistinctForTwelveCameras() {
        let colors = (1...12).map { TestPatternCamera.identColor(for: CameraID("cam\($0)")) }
        for i in colors.indices {
            for j in colors.indices where j > i {
                #expect(colors[i].distance(to: colors[j]) > 100, "cam\(i + 1) and cam\(j + 1) look alike")
            }
            // Never close to a neutral grey (slates).
            let rgb = colors[i].rgb
            #expect(max(rgb.red, rgb.green, rgb.blue) - min(rgb.red, rgb.green, rgb.blue) > 100)
        }
        #expect(TestPatternCamera.camera(showing: .grey(48), among: (1...12).map { CameraID("cam\($0)") }) == nil)
    }

    @Test func timecodeAndBoxMoveWhileTheNameStays() throws {
        let camera = try TestPatternCamera(id: "cam1", format: smallFormat())
        camera.start()
        defer { camera.stop() }
        let (first, version) = try nextFrame(camera)
        var (second, secondVersion) = try nextFrame(camera, after: version)
        while second.sequence < first.sequence + 2 { (second, secondVersion) = try nextFrame(camera, after: secondVersion) }
        #expect(lumaChecksum(first, TestPatternCamera.timecodeRegion) != lumaChecksum(second, TestPatternCamera.timecodeRegion))
        #expect(lumaChecksum(first, TestPatternCamera.sweepRegion) != lumaChecksum(second, TestPatternCamera.sweepRegion))
        #expect(lumaChecksum(first, TestPatternCamera.nameRegion) == lumaChecksum(second, TestPatternCamera.nameRegion))
        #expect(lumaChecksum(first, TestPatternCamera.barsRegion) == lumaChecksum(second, TestPatternCamera.barsRegion))
        // The name is drawn: white ink in the black name band.
        let name = try #require(first.averageColor(in: TestPatternCamera.nameRegion))
        #expect(name.y > YUVColor.black.y + 5)
    }

    @Test func timecodeText() {
        #expect(TestPatternCamera.timecode(frame: 0, framesPerSecond: 30) == "00:00:00:00")
        #expect(TestPatternCamera.timecode(frame: 29, framesPerSecond: 30) == "00:00:00:29")
        #expect(TestPatternCamera.timecode(frame: (3600 + 60 + 1) * 30 + 5, framesPerSecond: 30) == "01:01:01:05")
        #expect(TestPatternCamera.timecode(frame: 25 * 59, framesPerSecond: 25) == "00:00:59:00")
    }

    /// On a manual clock: the camera's ticks come as time is moved, whatever the machine's load.
    @Test func pauseStopsFramesAndResumeRestartsThem() throws {
        let clock = ManualClock()
        let camera = try TestPatternCamera(id: "cam1", format: smallFormat(), clock: clock)
        camera.start()
        defer { camera.stop() }
        _ = try nextFrame(camera)
        // Ten ticks at 5 ms steps, the capture thread doing what is due after each.
        func play(_ seconds: Double) {
            #expect(clock.waitForSleepers(1))
            #expect(clock.run(to: clock.now() + UInt64(seconds * 1e9), step: 5_000_000))
        }
        play(0.1)
        camera.pause()
        #expect(camera.state == .lost)
        play(0.1)  // a frame being rendered at pause() may still land
        let paused = camera.frames.latest()
        let capturedWhilePaused = camera.statistics.framesCaptured
        play(0.3)
        #expect(camera.frames.latest().version == paused.version)
        #expect(camera.statistics.framesCaptured == capturedWhilePaused)
        #expect(camera.state == .lost)

        camera.resume()
        play(0.04)  // the next tick
        let (frame, _) = try nextFrame(camera, after: paused.version, timeout: 1)
        #expect(frame.captureTime > (paused.value?.captureTime ?? 0))
        // The camera's clock kept running while paused: its frame numbers skipped the paused ticks.
        #expect(frame.sequence >= (paused.value?.sequence ?? 0) + 9)
        #expect(camera.state == .live)
    }

    @Test func stopJoinsTheThreadAndKeepsTheLastFrame() throws {
        let camera = try TestPatternCamera(id: "cam1", format: smallFormat())
        camera.start()
        _ = try nextFrame(camera)
        camera.stop()
        #expect(camera.state == .stopped)
        let version = camera.frames.latest().version
        MonotonicClock.sleep(seconds: 0.15)
        #expect(camera.frames.latest().version == version)
        #expect(camera.frames.latest().value != nil)
        // And it can start again.
        camera.start()
        _ = try nextFrame(camera, after: version)
        camera.stop()
    }

    @Test func discoveryYieldsNumberedCamerasAndSimulatesUnplug() throws {
        let discovery = try TestPatternDiscovery(count: 3, format: smallFormat())
        let added = Mutex<[CameraID]>([]), removed = Mutex<[CameraID]>([])
        discovery.start(onAdded: { camera in added.withLock { $0.append(camera.id) } },
                        onRemoved: { camera in removed.withLock { $0.append(camera.id) } })
        #expect(added.withLock { $0 } == ["cam1", "cam2", "cam3"])
        #expect(discovery.cameras.allSatisfy { $0.backend == .testPattern && $0.state == .stopped })
        discovery.cameras[1].start()
        discovery.simulateUnplug("cam2")
        #expect(removed.withLock { $0 } == ["cam2"])
        #expect(discovery.cameras[1].state == .stopped)
        discovery.simulatePlug("cam2")
        #expect(added.withLock { $0 } == ["cam1", "cam2", "cam3", "cam2"])
        discovery.stop()
        discovery.simulateUnplug("cam1")
        #expect(removed.withLock { $0 } == ["cam2"])
    }
}

@Suite struct TestPatternRedrawTests {
    static func checksum(_ frame: VideoFrame) -> [UInt64] {
        frame.planes.indices.map { index in
            let plane = frame.planes[index]
            let rowBytes = index == 0 ? frame.width : (frame.width + 1) / 2
            var hash: UInt64 = 14_695_981_039_346_656_037
            for row in 0..<plane.rows {
                let bytes = UnsafeRawBufferPointer(start: frame.plane(index) + row * plane.stride, count: rowBytes)
                for byte in bytes { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
            }
            return hash
        }
    }

    /// Recycled buffers are only partly redrawn; every picture must still equal a full redraw.
    @Test func partialRedrawOfRecycledBuffersEqualsAFullRender() {
        let format = CameraFormat(pixelFormat: .i420, width: 320, height: 180, frameRate: Rational(30))
        var full: [[UInt64]] = []
        var kept: [VideoFrame] = []   // keeping every frame alive forces fresh buffers
        TestPatternCamera.renderFrames(of: "cam2", format: format, count: 75) { frame in
            #expect(!frame.storage.isRecycled)
            kept.append(frame)
            full.append(Self.checksum(frame))
        }
        var recycled: [[UInt64]] = []
        var sawRecycled = false
        TestPatternCamera.renderFrames(of: "cam2", format: format, count: 75) { frame in
            sawRecycled = sawRecycled || frame.storage.isRecycled
            recycled.append(Self.checksum(frame))
        }
        #expect(sawRecycled)
        #expect(recycled == full)
        #expect(Set(full).count > 30, "the pictures move")
    }

    /// `--camera-noise`: every sample moves by at most the amplitude, differently in every frame, and the
    /// same camera name gives the same noisy pictures every time (`pattern-y4m` writes what the camera shows).
    @Test func noiseIsBoundedFreshEachFrameAndRepeatable() {
        let format = CameraFormat(pixelFormat: .i420, width: 320, height: 180, frameRate: Rational(30))
        var clean: [VideoFrame] = [], noisy: [VideoFrame] = [], again: [[UInt64]] = []
        TestPatternCamera.renderFrames(of: "cam1", format: format, count: 3) { clean.append($0) }
        TestPatternCamera.renderFrames(of: "cam1", format: format, count: 3, noise: 8) { noisy.append($0) }
        TestPatternCamera.renderFrames(of: "cam1", format: format, count: 3, noise: 8) { again.append(Self.checksum($0)) }
        #expect(noisy.map(Self.checksum) == again)
        var other: [[UInt64]] = []
        var otherClean: [[UInt64]] = []
        TestPatternCamera.renderFrames(of: "cam2", format: format, count: 1, noise: 8) { other.append(Self.checksum($0)) }
        TestPatternCamera.renderFrames(of: "cam2", format: format, count: 1) { otherClean.append(Self.checksum($0)) }
        #expect(other != otherClean, "another camera is noisy too")
        for (index, (a, b)) in zip(clean, noisy).enumerated() {
            var largest = 0, changed = 0
            for offset in 0..<(320 * 180) {
                let difference = abs(Int(a.plane(0).load(fromByteOffset: offset, as: UInt8.self)) - Int(b.plane(0).load(fromByteOffset: offset, as: UInt8.self)))
                largest = max(largest, difference)
                if difference > 0 { changed += 1 }
            }
            #expect(largest <= 8 && changed > 320 * 180 / 2, "frame \(index): largest change \(largest), \(changed) samples changed")
        }
        // The noise itself differs from frame to frame (the pattern's first frames barely move).
        let first = (0..<(320 * 180)).map { Int(noisy[0].plane(0).load(fromByteOffset: $0, as: UInt8.self)) - Int(clean[0].plane(0).load(fromByteOffset: $0, as: UInt8.self)) }
        let second = (0..<(320 * 180)).map { Int(noisy[1].plane(0).load(fromByteOffset: $0, as: UInt8.self)) - Int(clean[1].plane(0).load(fromByteOffset: $0, as: UInt8.self)) }
        #expect(first != second)
    }
}

/// The sync strip (`TestPatternCamera.syncRegion`): on a manual clock whose times map to a wall clock that
/// is at 1765000000.41 s when the camera starts, the frames that first reach a whole second are ticks 18
/// and 48 at 30 fps (0.41 + 18/30 = 1.01; tick 17 is at 0.977), marking seconds 1765000001 and
/// 1765000002 (1 and 2 modulo 8); every other frame's strip is black.
@Suite struct TestPatternSyncStripTests {
    @Test func theFirstFrameOfEachWallClockSecondShowsTheStrip() throws {
        let clock = ManualClock(start: 1_000_000_000)
        let base: Int64 = 1_765_000_000_410_000 - 1_000_000  // µs: x.41 s at the manual clock's 1 s
        let camera = try TestPatternCamera(id: "cam2", format: smallFormat(), clock: clock, wallTime: { base + Int64($0 / 1000) })
        camera.start()
        defer { camera.stop() }
        var (frame, version) = try nextFrame(camera)
        let grid = FrameGrid(origin: 1_000_000_000, rate: Rational(30))
        var marked: [[Int]] = []
        if let mark = TestPatternCamera.syncMark(in: frame) { marked.append([Int(frame.sequence), mark]) }
        for tick in Int64(1)..<70 {
            #expect(clock.waitForSleepers(1))
            clock.advance(by: grid.time(ofFrame: tick) - clock.now())
            (frame, version) = try nextFrame(camera, after: version)
            #expect(frame.sequence == UInt64(tick))
            if let mark = TestPatternCamera.syncMark(in: frame) { marked.append([Int(frame.sequence), mark]) }
            // The ident stays where other tests sample it.
            #expect(TestPatternCamera.camera(in: frame, among: ["cam1", "cam2", "cam3"]) == "cam2")
        }
        #expect(marked == [[18, 1], [48, 2]])
    }

    @Test func theMarkReadsTheSecondsBits() {
        let (black, white) = (YUVColor.black, YUVColor.white)
        #expect(TestPatternCamera.syncMark(showing: [black, white, white, white]) == nil)
        #expect(TestPatternCamera.syncMark(showing: [YUVColor.grey(40), white, white, white]) == nil)
        #expect(TestPatternCamera.syncMark(showing: [white, black, black, black]) == 0)
        #expect(TestPatternCamera.syncMark(showing: [white, white, black, white]) == 5)
        #expect(TestPatternCamera.syncMark(showing: [white, white, white, white]) == 7)
        #expect(TestPatternCamera.syncMark(showing: [white]) == nil)
    }
}
