import Testing
import Synchronization
import Capture
import FrameDrawing
import LivePictures
import MediaSupport
import StudioCore
import StudioSystem
import Switcher
import TestSupport

/// The scene tiles (composed at tile size on the tile thread by the switcher's `SceneThumbnails`, from
/// real test-pattern cameras) and the any-tile wait the console's one stream reads.
@Suite struct SceneTilesTests {
    typealias Rig = TilePicturesTests.Rig

    /// cam1 stretched over the left half (with a white border), cam2 over the right half, a red block
    /// in the bottom-right corner on top.
    static let duo = SceneDescription(name: "duo", layout: nil, layers: [
        LayerDescription(source: .camera("cam1"), rect: .fraction(RelativeRect(x: 0, y: 0, width: 0.5, height: 1)), fit: .stretch,
                         borderWidth: 16, borderColor: RGBColor(red: 255, green: 255, blue: 255)),
        LayerDescription(source: .camera("cam2"), rect: .fraction(RelativeRect(x: 0.5, y: 0, width: 0.5, height: 1)), fit: .stretch),
        LayerDescription(source: .color(RGBColor(red: 220, green: 20, blue: 20)), rect: .fraction(RelativeRect(x: 0.75, y: 0.75, width: 0.25, height: 0.25))),
    ])
    static let red = YUVColor(red: 220, green: 20, blue: 20)

    /// A switcher holding the rig's cameras and `scenes` (never started: its program thread plays no
    /// part in the tiles), the thumbnails of its scenes, and the tiles started with both.
    static func start(_ rig: Rig, scenes: [SceneDescription], previewScene: (@Sendable () -> String?)? = nil) throws -> (ProgramSwitcher, SceneThumbnails) {
        let switcher = ProgramSwitcher(format: ProgramFormat(width: 640, height: 360, frameRate: Rational(30)),
                                       configuration: .init(lossTimeout: 600), events: DiscardingEventSink()) { _, _ in }
        for camera in rig.cameras { switcher.addSource(camera.id, frames: camera.frames) }
        try switcher.setScenes(scenes)
        let thumbnails = SceneThumbnails(switcher: switcher, width: 320)
        var sources = rig.sources
        sources.scenes = TileScenes(names: { thumbnails.sceneNames }, onPreview: previewScene ?? { thumbnails.sceneOnPreview },
                                    compose: { thumbnails.compose($0, unless: $1) })
        rig.tiles.start(sources: sources)
        return (switcher, thumbnails)
    }

    static func frame(_ picture: TilePicture) throws -> VideoFrame {
        try picture.jpeg.withUnsafeBytes { try MJPEGDecoder().decode($0) }
    }

    /// The camera whose ident colour shows at `x` (a fraction of the picture's width) in the middle rows.
    static func camera(in frame: VideoFrame, at x: Double) -> CameraID? {
        frame.averageColor(in: RelativeRect(x: x, y: 0.3, width: 0.06, height: 0.4)).flatMap {
            TestPatternCamera.camera(showing: $0, among: ["cam1", "cam2"])
        }
    }

    /// Waits for a picture of `tile` for which `condition` holds (pictures keep coming while cameras run).
    static func waitForPicture(_ tiles: TilePictures, _ tile: String, _ condition: (VideoFrame) -> Bool) -> TilePicture? {
        var sequence: UInt64 = 0
        let deadline = MonotonicClock.now() + 20_000_000_000
        while MonotonicClock.now() < deadline {
            guard let picture = tiles.waitForNewer(tile, than: sequence, timeoutSeconds: 1) else { continue }
            sequence = picture.sequence
            if let frame = try? frame(picture), condition(frame) { return picture }
        }
        return nil
    }

    @Test func aSceneTileShowsItsLayersComposedAtTileSize() throws {
        let rig = try Rig(count: 2)
        defer { rig.stop() }
        _ = try Self.start(rig, scenes: [Self.duo])
        #expect(rig.tiles.tileNames == ["program", "preview", "cam1", "cam2", "duo"])
        #expect(rig.tiles.isTile("duo") && !rig.tiles.isTile("trio"))
        #expect(rig.tiles.subscribe("duo"))
        // Each camera's ident block (its left quarter) where the layout puts it: stretched into a half
        // (the first pictures may show a camera's "waiting" slate, before its first frame).
        let picture = try #require(Self.waitForPicture(rig.tiles, "duo") { Self.camera(in: $0, at: 0.03) == "cam1" && Self.camera(in: $0, at: 0.53) == "cam2" })
        #expect(picture.width == 320 && picture.height == 180)
        #expect(picture.captureTime > 0, "a composed picture is as old as its newest camera frame")
        let frame = try Self.frame(picture)
        // The colour layer on top, and cam1's border (16 px on the program, 8 on the tile).
        let block = try #require(frame.averageColor(in: RelativeRect(x: 0.82, y: 0.82, width: 0.14, height: 0.14)))
        #expect(block.distance(to: Self.red) < 40, "the red block reads \(block)")
        let border = try #require(frame.averageColor(in: PixelRect(x: 40, y: 0, width: 80, height: 4)))
        #expect(border.distance(to: .white) < 60, "cam1's border reads \(border)")
        #expect(rig.tiles.counters.sceneCompositions >= 1)
    }

    @Test func aSceneWhoseCamerasDidNotChangeIsNotComposedAgain() throws {
        let rig = try Rig(count: 2)
        defer { rig.stop() }
        let (switcher, _) = try Self.start(rig, scenes: [Self.duo])
        #expect(rig.tiles.subscribe("duo"))
        #expect(Self.waitForPicture(rig.tiles, "duo") { Self.camera(in: $0, at: 0.03) == "cam1" && Self.camera(in: $0, at: 0.53) == "cam2" } != nil)
        // The cameras stop: their frames stay as they are (and, with a 10-minute loss timeout, fresh).
        for camera in rig.cameras { camera.stop() }
        let settled = rig.tiles.counters
        #expect(waitUntil { rig.tiles.counters.unchanged >= settled.unchanged + 10 }, "the tile thread kept running rounds")
        // At most the round in flight when they stopped made one more.
        let still = rig.tiles.counters
        #expect(still.sceneCompositions <= settled.sceneCompositions + 1 && still.pictures <= settled.pictures + 1, "\(settled) -> \(still)")
        #expect(waitUntil { rig.tiles.counters.unchanged >= still.unchanged + 10 })
        #expect(rig.tiles.counters.sceneCompositions == still.sceneCompositions)
        #expect(rig.tiles.counters.pictures == still.pictures)
        // cam2 lost: the scene changes (its slate in cam2's half), so it is composed again; cam1 stays.
        let before = try #require(rig.tiles.latest("duo"))
        switcher.markSourceLost("cam2")
        let lost = try #require(rig.tiles.waitForNewer("duo", than: before.sequence, timeoutSeconds: 10))
        let frame = try Self.frame(lost)
        #expect(Self.camera(in: frame, at: 0.03) == "cam1")
        let slate = try #require(frame.averageColor(in: RelativeRect(x: 0.6, y: 0.02, width: 0.3, height: 0.15)))
        #expect(slate.distance(to: .grey(48)) < 30, "cam2's half shows \(slate), not the slate")
        #expect(rig.tiles.counters.sceneCompositions == still.sceneCompositions + 1)
    }

    @Test func newScenesAndASceneOnPreviewShowTheirLayout() throws {
        let rig = try Rig(count: 2)
        defer { rig.stop() }
        let (switcher, thumbnails) = try Self.start(rig, scenes: [Self.duo], previewScene: { "duo" })
        #expect(thumbnails.width == 320 && thumbnails.height == 180)
        for tile in ["duo", "preview"] { #expect(rig.tiles.subscribe(tile)) }
        // Preview on a scene: the preview tile shows it.
        #expect(Self.waitForPicture(rig.tiles, "preview") { Self.camera(in: $0, at: 0.03) == "cam1" && Self.camera(in: $0, at: 0.53) == "cam2" } != nil)
        // The scenes set again (as `studio reload` does): the tile shows the new layout.
        var swapped = Self.duo
        swapped.layers[0].source = .camera("cam2")
        swapped.layers[1].source = .camera("cam1")
        try switcher.setScenes([swapped, SceneDescription(name: "solo", layout: .full, sources: ["cam2"])])
        #expect(rig.tiles.tileNames == ["program", "preview", "cam1", "cam2", "duo", "solo"])
        #expect(Self.waitForPicture(rig.tiles, "duo") { Self.camera(in: $0, at: 0.03) == "cam2" && Self.camera(in: $0, at: 0.53) == "cam1" } != nil)
        // A scene gone: its tile has no picture (rather than a stale one), and preview on it neither.
        try switcher.setScenes([])
        #expect(!rig.tiles.isTile("duo"))
        #expect(waitUntil { rig.tiles.latest("preview") == nil })
    }

    @Test func oneReaderWaitsForAnyOfSeveralTiles() throws {
        // A request (`latest`) keeps its tile made for 0.2 s here; `waitForAny` makes nothing watched.
        let rig = try Rig(count: 2, tiles: TilePictures(idleAfterSeconds: 0.2))
        defer { rig.stop() }
        rig.start()
        #expect(rig.tiles.subscribe("cam1"))
        // Everything there is first, then only what is newer than what was sent.
        var sent: [String: UInt64] = [:]
        let first = rig.tiles.waitForAny(["cam1", "cam2"], newerThan: sent, timeoutSeconds: 10)
        #expect(first.map(\.tile) == ["cam1"], "cam2 is not watched: it has no picture")
        for (tile, picture) in first { sent[tile] = picture.sequence }
        let next = rig.tiles.waitForAny(["cam1", "cam2"], newerThan: sent, timeoutSeconds: 10)
        #expect(next.map(\.tile) == ["cam1"] && next[0].picture.sequence > sent["cam1"] ?? 0)
        for (tile, picture) in next { sent[tile] = picture.sequence }
        // A reader waiting on cam2 alone is woken by its first picture (made once it is watched), not by a poll.
        let waited = Mutex<(pictures: [String], seconds: Double)>(([], 0))
        let snapshot = sent
        let reader = NamedThread.start(name: "test.reader") {
            let start = MonotonicClock.now()
            let got = rig.tiles.waitForAny(["cam2"], newerThan: snapshot, timeoutSeconds: 15)
            waited.withLock { $0 = (got.map(\.tile), Double(MonotonicClock.now() - start) / 1e9) }
        }
        #expect(rig.waitForFrames(6, of: rig.cameras[1]))
        #expect(waited.withLock { $0.pictures }.isEmpty, "woken before cam2 had a picture")
        #expect(rig.tiles.subscribe("cam2"))
        reader.join(timeoutSeconds: 15)
        let result = waited.withLock { $0 }
        #expect(result.pictures == ["cam2"] && result.seconds < 10, "\(result)")
        // A reader that fell behind gets each tile's newest picture once, never the ones it missed.
        #expect(rig.waitForFrames(20, of: rig.cameras[0]))
        let late = rig.tiles.waitForAny(["cam1", "cam2"], newerThan: sent, timeoutSeconds: 10)
        #expect(late.map(\.tile) == ["cam1", "cam2"])
        for (tile, picture) in late {
            let newest = try #require(rig.tiles.latest(tile))
            #expect(picture.sequence <= newest.sequence && newest.sequence - picture.sequence <= 1, "\(tile): \(picture.sequence) of \(newest.sequence)")
            #expect(picture.sequence > (sent[tile] ?? 0) + 1 || tile == "cam2", "\(tile) skipped nothing")
        }
        // Unwatched, nothing newer than the newest comes: an empty answer when the time is up.
        for tile in ["cam1", "cam2"] { rig.tiles.unsubscribe(tile) }
        #expect(rig.waitForFrames(20, of: rig.cameras[0]))
        var newest: [String: UInt64] = [:]
        for (tile, picture) in rig.tiles.waitForAny(["cam1", "cam2"], newerThan: [:], timeoutSeconds: 0) { newest[tile] = picture.sequence }
        #expect(newest.count == 2)
        let start = MonotonicClock.now()
        #expect(rig.tiles.waitForAny(["cam1", "cam2"], newerThan: newest, timeoutSeconds: 0.3).isEmpty)
        #expect(MonotonicClock.now() - start >= 290_000_000)
    }
}
