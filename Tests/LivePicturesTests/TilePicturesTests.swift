import Testing
import Synchronization
import Capture
import LivePictures
import StudioCore
import StudioSystem
import Switcher
import TestSupport

/// The live tiles with real test-pattern cameras (real frames, real libswscale and MJPEG encoder); the
/// pictures are decoded back with Capture's MJPEG decoder (libavcodec).
@Suite struct TilePicturesTests {
    /// Running cameras and a tile service reading them, stopped by `stop()`.
    final class Rig: Sendable {
        let cameras: [TestPatternCamera]
        let tiles: TilePictures
        let lateTicks = Atomic<Int64>(0)
        let preview = Mutex<String?>(nil)

        init(count: Int = 2, format: CameraFormat = CameraFormat(pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(30)),
             tiles: TilePictures = TilePictures()) throws {
            cameras = try (1...count).map { try TestPatternCamera(id: CameraID("cam\($0)"), format: format) }
            self.tiles = tiles
            for camera in cameras { camera.start() }
        }

        var sources: TileSources {
            let cameras = cameras
            return TileSources(camera: { name in cameras.first { $0.id.name == name }?.frames }, cameraNames: { cameras.map(\.id.name) },
                               previewCamera: { [self] in preview.withLock { $0 } }, lateTicks: { [self] in lateTicks.load(ordering: .relaxed) })
        }

        func start() { tiles.start(sources: sources) }

        /// Waits until `camera` has delivered `count` more frames (a stretch of real time that is long
        /// compared with the tile thread's 100 ms rounds).
        func waitForFrames(_ count: Int, of camera: TestPatternCamera) -> Bool {
            var version = camera.frames.latest().version
            for _ in 0..<count {
                let next = camera.frames.waitForNewer(than: version, timeoutSeconds: 10).version
                guard next > version else { return false }
                version = next
            }
            return true
        }

        func stop() {
            tiles.stop()
            for camera in cameras { camera.stop() }
        }
    }

    /// Which camera a tile's JPEG shows (by its ident block), with the picture's size.
    static func decode(_ picture: TilePicture, among cameras: [CameraID]) throws -> (camera: CameraID?, width: Int, height: Int) {
        let frame = try picture.jpeg.withUnsafeBytes { bytes in try MJPEGDecoder().decode(bytes) }
        return (TestPatternCamera.camera(in: frame, among: cameras), frame.width, frame.height)
    }

    @Test func eachCameraTileShowsItsCameraAt320Wide() throws {
        let rig = try Rig(count: 3)
        defer { rig.stop() }
        rig.start()
        let ids = rig.cameras.map(\.id)
        for id in ids { #expect(rig.tiles.subscribe(id.name)) }
        #expect(!rig.tiles.subscribe("cam9"), "no such camera: no tile")
        #expect(rig.tiles.tileNames == ["program", "preview", "cam1", "cam2", "cam3"])
        for id in ids {
            let picture = try #require(rig.tiles.waitForNewer(id.name, than: 0, timeoutSeconds: 10))
            #expect(Array(picture.jpeg.prefix(2)) == [0xFF, 0xD8])
            #expect(picture.width == 320 && picture.height == 180)
            #expect(picture.captureTime > 0 && picture.sequence >= 1)
            let shown = try Self.decode(picture, among: ids)
            #expect(shown.camera == id)
            #expect(shown.width == 320 && shown.height == 180)
        }
    }

    @Test func previewShowsItsCameraAndNothingForAScene() throws {
        let rig = try Rig(count: 2)
        defer { rig.stop() }
        rig.preview.withLock { $0 = "cam2" }
        rig.start()
        let ids = rig.cameras.map(\.id)
        let picture = try #require(rig.tiles.waitForNewer("preview", than: 0, timeoutSeconds: 10))
        #expect(try Self.decode(picture, among: ids).camera == "cam2")
        rig.preview.withLock { $0 = "cam1" }
        var newest = picture
        #expect(waitUntil { () -> Bool in
            guard let next = rig.tiles.waitForNewer("preview", than: newest.sequence, timeoutSeconds: 1) else { return false }
            newest = next
            return (try? Self.decode(next, among: ids).camera) == "cam1"
        })
        // A scene on preview (no camera): no picture rather than the previous camera's.
        rig.preview.withLock { $0 = nil }
        #expect(waitUntil { rig.tiles.latest("preview") == nil })
    }

    @Test func nothingIsMadeWithoutWatchers() throws {
        // A request keeps its tile made for 0.2 s here (2 s by default).
        let rig = try Rig(count: 2, tiles: TilePictures(idleAfterSeconds: 0.2))
        defer { rig.stop() }
        rig.start()
        // A second of frames from the cameras, ten rounds' time of the tile thread: it never ran one.
        #expect(rig.waitForFrames(30, of: rig.cameras[0]))
        #expect(rig.tiles.counters.pictures == 0)
        #expect(rig.tiles.counters.cpuNanoseconds == 0)
        // The program's frames are not kept either: offered while no one watches, the tile has nothing.
        rig.tiles.offerProgram(try #require(rig.cameras[0].frames.latest().value))
        // Watched: pictures come.
        #expect(rig.tiles.subscribe("cam1"))
        #expect(rig.tiles.waitForNewer("cam1", than: 0, timeoutSeconds: 10) != nil)
        #expect(rig.tiles.counters.pictures > 0)
        // Unwatched again: they stop (after the request's 0.2 s and the round in flight).
        rig.tiles.unsubscribe("cam1")
        #expect(rig.waitForFrames(10, of: rig.cameras[0]))
        let after = rig.tiles.counters.pictures
        #expect(rig.waitForFrames(30, of: rig.cameras[0]))
        #expect(rig.tiles.counters.pictures == after)
        #expect(rig.tiles.subscribe("program"))
        #expect(rig.waitForFrames(15, of: rig.cameras[0]))
        #expect(rig.tiles.latest("program") == nil, "a program frame offered while unwatched was kept")
    }

    final class Told: Sendable { let values = Mutex<[Bool]>([]) }

    /// The cameras' pictures are wanted (told once per change) while a camera tile is watched; the
    /// program tile alone does not want them.
    @Test func theCamerasAreWantedWhileACameraTileIsWatched() throws {
        let rig = try Rig(count: 2, tiles: TilePictures(idleAfterSeconds: 0.2))
        defer { rig.stop() }
        let told = Told()
        var sources = rig.sources
        sources.camerasWatched = { watched in told.values.withLock { $0.append(watched) } }
        rig.tiles.start(sources: sources)
        #expect(rig.tiles.subscribe("program"))
        #expect(rig.waitForFrames(10, of: rig.cameras[0]))
        #expect(told.values.withLock { $0 }.isEmpty, "the program tile wanted the cameras")
        #expect(rig.tiles.subscribe("cam2"))
        #expect(waitUntil { told.values.withLock { $0 } == [true] })
        rig.tiles.unsubscribe("cam2")
        #expect(waitUntil { told.values.withLock { $0 } == [true, false] })
        #expect(rig.waitForFrames(10, of: rig.cameras[0]))
        #expect(told.values.withLock { $0 } == [true, false], "told again without a change")
        rig.tiles.unsubscribe("program")
    }

    @Test func aSlowReaderNeverHoldsTheProducerBack() throws {
        let rig = try Rig(count: 1)
        defer { rig.stop() }
        rig.start()
        #expect(rig.tiles.subscribe("cam1"))
        let first = try #require(rig.tiles.waitForNewer("cam1", than: 0, timeoutSeconds: 10))
        // The reader does not come back for a while; the producer goes on without it...
        #expect(waitUntil { rig.tiles.counters.pictures >= Int64(first.sequence) + 4 })
        // ...and the reader then gets the newest picture, having missed the ones between (never queued).
        let next = try #require(rig.tiles.latest("cam1"))
        #expect(next.sequence >= first.sequence + 4)
        #expect(next.captureTime > first.captureTime)
        // The tile thread keeps to about 10 pictures a second per tile (a 30 fps camera: two of three
        // frames are never encoded), whatever the reader does.
        #expect(rig.waitForFrames(60, of: rig.cameras[0]))
        let made = rig.tiles.counters.pictures
        #expect(made <= Int64(next.sequence) + 25, "\(made) pictures in two seconds after \(next.sequence)")
    }

    @Test func theProgramFallingBehindPausesTheTiles() throws {
        let rig = try Rig(count: 1, tiles: TilePictures(pacer: TilePacer(backoffRounds: 1_000_000)))
        defer { rig.stop() }
        rig.start()
        #expect(rig.tiles.subscribe("cam1"))
        #expect(rig.tiles.waitForNewer("cam1", than: 0, timeoutSeconds: 10) != nil)
        rig.lateTicks.store(3, ordering: .relaxed)
        #expect(waitUntil { rig.tiles.counters.skippedProgramBehind >= 2 })
        let paused = rig.tiles.counters.pictures
        #expect(rig.waitForFrames(15, of: rig.cameras[0]))
        #expect(rig.tiles.counters.pictures == paused)
    }

    @Test func aSpentCPUBudgetSkipsRounds() throws {
        // A budget of a microsecond a second: the first round spends it, the rest of each second is skipped.
        let rig = try Rig(count: 2, tiles: TilePictures(pacer: TilePacer(budget: 0.000_001)))
        defer { rig.stop() }
        rig.start()
        for name in ["cam1", "cam2"] { #expect(rig.tiles.subscribe(name)) }
        #expect(waitUntil { rig.tiles.counters.skippedOverBudget >= 25 })
        let counters = rig.tiles.counters
        #expect(counters.pictures >= 2)
        #expect(counters.pictures <= 2 * (counters.skippedOverBudget / 5 + 2), "\(counters)")
    }

    @Test func theProgramTileShowsWhatGoesToTheEncoderAndTheProgramKeepsTime() throws {
        let format = CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30))
        let rig = try Rig(count: 4, format: format)
        defer { rig.stop() }
        let tiles = rig.tiles
        let switcher = ProgramSwitcher(format: ProgramFormat(width: 1280, height: 720, frameRate: Rational(30)),
                                       events: DiscardingEventSink(), deliver: { frame, _ in tiles.offerProgram(frame) })
        for camera in rig.cameras { switcher.addSource(camera.id, frames: camera.frames) }
        switcher.start()
        defer { switcher.stop() }
        switcher.switchProgram(to: CameraID("cam3")) { _ in }
        let ids = rig.cameras.map(\.id)
        let sources = rig.sources
        tiles.start(sources: TileSources(camera: sources.camera, cameraNames: sources.cameraNames, previewCamera: sources.previewCamera,
                                         lateTicks: { switcher.status.lateTicks }))
        for name in ["program", "preview"] + ids.map(\.name) { #expect(tiles.subscribe(name)) }
        #expect(waitUntil { switcher.status.program == .camera("cam3") })
        var picture = try #require(tiles.waitForNewer("program", than: 0, timeoutSeconds: 10))
        #expect(waitUntil { () -> Bool in
            guard let next = tiles.waitForNewer("program", than: picture.sequence, timeoutSeconds: 1) else { return false }
            picture = next
            return (try? Self.decode(next, among: ids).camera) == "cam3"
        })
        // Five seconds of program with every tile made: the program keeps time. On an idle machine not one
        // tick is late; a busy CI machine may make the program late by itself now and then (at most 2 %
        // here), and then the tiles must have backed off.
        let start = switcher.status.frameNumber, lateBefore = switcher.status.lateTicks
        #expect(waitUntil(seconds: 30) { switcher.status.frameNumber >= start + 150 })
        let late = switcher.status.lateTicks - lateBefore
        #expect(late <= 3, "\(late) late ticks in 150 frames")
        if late > 0 { #expect(waitUntil { tiles.counters.skippedProgramBehind > 0 }, "the tiles backed off when the program was late") }
        #expect(tiles.counters.pictures >= 5 * 4)
    }
}

