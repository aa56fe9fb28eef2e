import Foundation
import Testing
import Synchronization
import FrameDrawing
import Graphics
import StudioCore
import StudioSystem
import TestSupport
@testable import Switcher

/// Image and text layers and overlays (downstream keyers), judged on the delivered pictures: the cameras
/// are solid colours, the images real PNG files written by the ffmpeg CLI, the texts rendered by FreeType.
private let format = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))
private let red = YUVColor(red: 220, green: 30, blue: 30)
private let blue = YUVColor(red: 30, green: 30, blue: 220)
private let yellow = YUVColor(red: 255, green: 255, blue: 0)
private let paleBlue = YUVColor(red: 0, green: 0, blue: 255)

/// A running program over solid-colour cameras that keeps every delivered frame with its pts.
private final class Rig: Sendable {
    let switcher: ProgramSwitcher
    let events = RecordedEvents()
    /// The cameras' frames, as published (the program must never draw on them).
    let sources: [VideoFrame]
    private let log = Deliveries()

    init(colors: [YUVColor], scenes: [SceneDescription] = [], overlays: [OverlayDescription] = []) throws {
        let log = self.log
        switcher = ProgramSwitcher(format: format, configuration: .init(lossTimeout: 3600), events: events) { frame, pts in
            log.frames.withLock { list in
                list.append((pts, frame))
                if list.count > 120 { list.removeFirst(list.count - 120) }
            }
        }
        var sources: [VideoFrame] = []
        for (index, color) in colors.enumerated() {
            let frame = VideoFrame.allocate(format: .i420, width: format.width, height: format.height, captureTime: MonotonicClock.now())
            frame.fill(with: color)
            let slot = LatestValue<VideoFrame>()
            slot.publish(frame)
            switcher.addSource(CameraID("cam\(index + 1)"), frames: slot)
            sources.append(frame)
        }
        self.sources = sources
        try switcher.setScenes(scenes)
        try switcher.setOverlays(overlays)
        switcher.start()
    }

    /// The delivered frame with this pts, waiting for it.
    func frame(at pts: MediaTime) throws -> VideoFrame {
        let deadline = MonotonicClock.now() + 20_000_000_000
        while MonotonicClock.now() < deadline {
            if let found = log.frames.withLock({ $0.first { $0.pts == pts }?.frame }) { return found }
            MonotonicClock.sleep(seconds: 0.005)
        }
        throw TestFailure("no frame at \(pts)")
    }

    /// Waits until the program has delivered a frame (so the next command's frame has one before it).
    func waitUntilDelivering() throws {
        let deadline = MonotonicClock.now() + 20_000_000_000
        while log.frames.withLock({ $0.isEmpty }), MonotonicClock.now() < deadline { MonotonicClock.sleep(seconds: 0.005) }
        if log.frames.withLock({ $0.isEmpty }) { throw TestFailure("no frame delivered") }
    }

    /// The frame just before the one at `pts`.
    func frame(before pts: MediaTime) throws -> VideoFrame {
        _ = try frame(at: pts)
        return try #require(log.frames.withLock { list in list.last { $0.pts < pts }?.frame })
    }

    func overlay(_ name: String, on: Bool?) throws -> OverlayOutcome {
        let reply = LatestValue<Result<OverlayOutcome, SwitchError>>()
        switcher.setOverlay(name, on: on) { reply.publish($0) }
        return try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value, "no reply").get()
    }

    func cut(to source: ProgramSource) throws -> SwitchOutcome {
        let reply = LatestValue<Result<SwitchOutcome, SwitchError>>()
        switcher.switchProgram(to: source) { reply.publish($0) }
        return try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value, "no reply").get()
    }
}

/// The delivered frames, newest last (the last 120).
private final class Deliveries: Sendable {
    let frames = Mutex<[(pts: MediaTime, frame: VideoFrame)]>([])
}

private struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private func color(_ frame: VideoFrame, _ x: Int, _ y: Int) -> YUVColor {
    frame.averageColor(in: PixelRect(x: x, y: y, width: 2, height: 2)) ?? .black
}

private func close(_ a: YUVColor, _ b: YUVColor, within tolerance: Double = 8) -> Bool { a.distance(to: b) <= tolerance }

/// Half of `a` and half of `b`.
private func half(_ a: YUVColor, _ b: YUVColor) -> YUVColor {
    YUVColor(y: UInt8((Int(a.y) + Int(b.y)) / 2), u: UInt8((Int(a.u) + Int(b.u)) / 2), v: UInt8((Int(a.v) + Int(b.v)) / 2))
}

/// A temporary directory with a 64x32 RGBA PNG: x 0..<32 opaque yellow, 32..<48 blue at alpha 128,
/// 48..<64 green at alpha 0 (fully transparent).
private func logo() throws -> (directory: URL, path: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("overlays-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("logo.png").path
    let graph = "color=black:s=64x32,format=rgba,geq=r='if(lt(X,32),255,0)':g='if(lt(X,32),255,if(lt(X,48),0,255))'"
        + ":b='if(lt(X,32),0,if(lt(X,48),255,0))':a='if(lt(X,32),255,if(lt(X,48),128,0))'"
    _ = try MediaProbe.run(MediaProbe.ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", graph, "-frames:v", "1", path])
    return (directory, path)
}

/// A copy of a frame's bytes, to tell later whether anything wrote to it.
private func bytes(_ frame: VideoFrame) -> [UInt8] {
    let count = VideoFrame.byteCount(format: frame.format, width: frame.width, height: frame.height)
    return Array(UnsafeBufferPointer(start: frame.storage.bytes.assumingMemoryBound(to: UInt8.self), count: count))
}

@Suite(.serialized) struct OverlayTests {
    @Test func anOverlayPNGAppearsWithItsAlphaOnTheNextFrameAndLeavesTheRestAlone() throws {
        let (directory, path) = try logo()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Scaled 2x, stretched into 128x64 at (160, 20): opaque x 160..<224, half 224..<256, clear 256..<288.
        let layer = LayerDescription(source: .image(path), rect: .pixels(x: 160, y: 20, width: 128, height: 64), fit: .stretch)
        let rig = try Rig(colors: [red], overlays: [OverlayDescription(name: "logo", layers: [layer])])
        defer { rig.switcher.stop() }
        let before = bytes(rig.sources[0])
        #expect(rig.switcher.status.overlays == [OverlayStatus(name: "logo", on: false)])
        try rig.waitUntilDelivering()

        let on = try rig.overlay("logo", on: true)
        #expect(on.on && on.changed)
        let first = try rig.frame(at: on.programTime)
        #expect(close(color(first, 190, 50), yellow), "opaque part: \(color(first, 190, 50))")
        #expect(close(color(first, 240, 50), half(red, paleBlue), within: 10), "half-transparent part: \(color(first, 240, 50))")
        #expect(close(color(first, 272, 50), red), "transparent part: \(color(first, 272, 50))")
        #expect(close(color(first, 190, 90), red) && close(color(first, 150, 50), red) && close(color(first, 40, 140), red))
        // The frame before it had no overlay; the event has the first frame's program time.
        #expect(close(color(try rig.frame(before: on.programTime), 190, 50), red))
        let onEvent = try #require(rig.events.last(.overlayOn))
        #expect(onEvent.programTime == on.programTime && onEvent.details["overlay"] == "logo")
        #expect(rig.switcher.status.overlays == [OverlayStatus(name: "logo", on: true)])

        // Off again by toggling: the very next frame is without it.
        let off = try rig.overlay("logo", on: nil)
        #expect(!off.on && off.changed && off.programTime > on.programTime)
        #expect(close(color(try rig.frame(at: off.programTime), 190, 50), red))
        #expect(close(color(try rig.frame(before: off.programTime), 190, 50), yellow))
        #expect(rig.events.last(.overlayOff)?.programTime == off.programTime)
        // Asking for the state it is in changes nothing and emits nothing.
        let again = try rig.overlay("logo", on: false)
        #expect(!again.on && !again.changed && rig.events.last(.overlayOff)?.programTime == off.programTime)

        // The camera's frame went to program untouched (passed through): the overlay was drawn on a copy.
        let untouched = bytes(rig.sources[0]) == before
        #expect(untouched, "the camera's own frame was drawn on")
    }

    @Test func anOverlayStaysOnTopOfScenesAndTransitions() throws {
        let (directory, path) = try logo()
        defer { try? FileManager.default.removeItem(at: directory) }
        let layer = LayerDescription(source: .image(path), rect: .pixels(x: 0, y: 0, width: 64, height: 32), fit: .stretch)
        let scene = SceneDescription(name: "two", layout: .sideBySide, sources: ["cam1", "cam2"])
        let rig = try Rig(colors: [red, blue], scenes: [scene], overlays: [OverlayDescription(name: "bug", layers: [layer], on: true)])
        defer { rig.switcher.stop() }
        let cut = try rig.cut(to: .scene("two"))
        let frame = try rig.frame(at: cut.programTime)
        #expect(close(color(frame, 10, 10), yellow) && close(color(frame, 56, 10), red) && close(color(frame, 240, 10), blue))
        let reply = LatestValue<Result<SwitchOutcome, SwitchError>>()
        rig.switcher.setPreview(.camera("cam2")) { reply.publish($0) }
        _ = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 20).value).get()
        let started = LatestValue<Result<SwitchOutcome, SwitchError>>()
        rig.switcher.auto(TransitionSpec(kind: .mix, frames: 4)) { started.publish($0) }
        let take = try #require(started.waitForNewer(than: 0, timeoutSeconds: 20).value).get()
        let mixing = try rig.frame(at: take.programTime)
        #expect(close(color(mixing, 10, 10), yellow), "over the transition: \(color(mixing, 10, 10))")
        #expect(!close(color(mixing, 100, 100), red) && !close(color(mixing, 100, 100), blue), "mid-mix: \(color(mixing, 100, 100))")
    }

    @Test func aTextLayerShowsItsBoxAndLettersWhereTheLayerSays() throws {
        let style = TextStyle(size: 20, color: .black, box: .white, padding: 6, alignment: .left)
        let rendered = try TextRenderer().render("Jane", style: style)
        let layerRect = PixelRect(x: 40, y: 120, width: 200, height: 50)
        let layer = LayerDescription(source: .text("Jane", style), rect: .pixels(x: 40, y: 120, width: 200, height: 50))
        let rig = try Rig(colors: [blue], overlays: [OverlayDescription(name: "name", layers: [layer], on: true)])
        defer { rig.switcher.stop() }
        let frame = try rig.frame(at: try rig.cut(to: .camera("cam1")).programTime)
        // Left-aligned, centred vertically in the layer, at the rendered size (even edges).
        let height = (rendered.height + 1) & ~1, top = (layerRect.y + (layerRect.height - height) / 2) & ~1
        let box = PixelRect(x: layerRect.x, y: top, width: rendered.width, height: rendered.height)
        #expect(close(color(frame, box.x + 1, box.y + 1), .white), "box corner: \(color(frame, box.x + 1, box.y + 1))")
        #expect(close(color(frame, box.maxX - 4, box.maxY - 4), .white))
        #expect(close(color(frame, box.x - 4, box.y + 10), blue) && close(color(frame, box.maxX + 6, box.y + 10), blue))
        #expect(close(color(frame, box.x + 10, box.y - 6), blue) && close(color(frame, 200, 20), blue))
        // Inside the padding the letters are black: some pixels dark, most still the box's white.
        let inner = try #require(frame.region(PixelRect(x: box.x + 6, y: box.y + 6, width: (box.width - 12) & ~1, height: (box.height - 12) & ~1)))
        var dark = 0, lumas = 0
        for row in 0..<inner.height {
            let line = (inner.plane(0) + row * inner.planes[0].stride).assumingMemoryBound(to: UInt8.self)
            for x in 0..<inner.width where line[x] < 60 { dark += 1 }
            lumas += inner.width
        }
        #expect(dark > lumas / 20 && dark < lumas / 2, "\(dark) dark of \(lumas)")
    }

    @Test func aTextLargerThanItsLayerIsShrunkWholeIntoIt() throws {
        let style = TextStyle(size: 60, color: .black, box: .white, padding: 10)
        let rendered = try TextRenderer().render("Jane", style: style)
        let layer = PixelRect(x: 100, y: 100, width: 60, height: 20)
        #expect(rendered.height > layer.height && Double(rendered.width) / Double(rendered.height) < 2.5, "\(rendered.width)x\(rendered.height)")
        let text = LayerDescription(source: .text("Jane", style), rect: .pixels(x: layer.x, y: layer.y, width: layer.width, height: layer.height))
        let rig = try Rig(colors: [blue], overlays: [OverlayDescription(name: "name", layers: [text], on: true)])
        defer { rig.switcher.stop() }
        let frame = try rig.frame(at: try rig.cut(to: .camera("cam1")).programTime)
        // Where the picture differs from the camera: all inside the layer, its full height, and only
        // as wide as the whole box at that height (not cropped to fill the layer's width).
        var minX = Int.max, maxX = -1, minY = Int.max, maxY = -1
        for y in 0..<frame.height {
            let line = (frame.plane(0) + y * frame.planes[0].stride).assumingMemoryBound(to: UInt8.self)
            for x in 0..<frame.width where abs(Int(line[x]) - Int(blue.y)) > 12 {
                (minX, maxX, minY, maxY) = (min(minX, x), max(maxX, x), min(minY, y), max(maxY, y))
            }
        }
        #expect(minX >= layer.x && maxX < layer.maxX && minY >= layer.y && maxY < layer.maxY, "drawn at x \(minX)...\(maxX), y \(minY)...\(maxY)")
        let expectedWidth = Double(rendered.width) * Double(layer.height) / Double(rendered.height)
        #expect(maxY - minY >= layer.height - 4, "height \(maxY - minY + 1)")
        #expect(abs(Double(maxX - minX + 1) - expectedWidth) <= 4, "width \(maxX - minX + 1), expected about \(expectedWidth)")
    }

    @Test func anImageLayerInASceneIsFittedIntoItsRectangle() throws {
        let (directory, path) = try logo()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 64x32 fitted into 160x180 at (0, 0): 160x80, centred vertically, y 50..<130.
        let scene = SceneDescription(name: "logo", layout: nil, layers: [
            LayerDescription(source: .camera("cam1"), rect: .fraction(.whole)),
            LayerDescription(source: .image(path), rect: .pixels(x: 0, y: 0, width: 160, height: 180), fit: .fit),
            // Filled into 32x32 at (200, 0): the middle half of it, source x 16..<48.
            LayerDescription(source: .image(path), rect: .pixels(x: 200, y: 0, width: 32, height: 32), fit: .fill),
        ])
        let rig = try Rig(colors: [red], scenes: [scene])
        defer { rig.switcher.stop() }
        let frame = try rig.frame(at: try rig.cut(to: .scene("logo")).programTime)
        #expect(close(color(frame, 20, 60), yellow) && close(color(frame, 20, 124), yellow))
        #expect(close(color(frame, 20, 44), red) && close(color(frame, 20, 134), red), "letterbox: \(color(frame, 20, 44))")
        #expect(close(color(frame, 140, 90), red), "the transparent part: \(color(frame, 140, 90))")
        #expect(close(color(frame, 204, 14), yellow) && close(color(frame, 226, 14), half(red, paleBlue), within: 10),
                "filled: \(color(frame, 204, 14)), \(color(frame, 226, 14))")
        #expect(close(color(frame, 236, 14), red) && close(color(frame, 214, 36), red))
    }

    @Test func badImagesFontsAndNamesAreRefusedByName() throws {
        let rig = try Rig(colors: [red])
        defer { rig.switcher.stop() }
        func refusal(_ scenes: [SceneDescription]) -> String? {
            do { try rig.switcher.setScenes(scenes) } catch { return error.description }
            return nil
        }
        let missing = SceneDescription(name: "news", layout: nil, layers: [
            LayerDescription(source: .image("/nonexistent/logo.png"), rect: .fraction(.whole)),
        ])
        #expect(refusal([missing]) == "scene 'news', layer 1 (image /nonexistent/logo.png): image '/nonexistent/logo.png' not found")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("overlays-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let notAFont = directory.appendingPathComponent("font.ttf").path
        try Data("not a font".utf8).write(to: URL(fileURLWithPath: notAFont))
        let badFont = SceneDescription(name: "title", layout: nil, layers: [
            LayerDescription(source: .text("Hi", TextStyle(font: notAFont)), rect: .fraction(.whole)),
        ])
        let fontError = try #require(refusal([badFont]))
        #expect(fontError.hasPrefix("scene 'title', layer 1 (text \"Hi\"): font '\(notAFont)' cannot be loaded"), "\(fontError)")
        #expect(rig.switcher.status.scenes.isEmpty, "a refused set changes nothing")

        #expect(throws: SwitchError.unknownOverlay("logo", overlays: [])) { try rig.overlay("logo", on: true) }
        let overlay = OverlayDescription(name: "lower", layers: [LayerDescription(source: .image(notAFont), rect: .fraction(.whole))])
        #expect {
            try rig.switcher.setOverlays([overlay])
        } throws: { error in
            (error as? SwitchError)?.description.hasPrefix("overlay 'lower', layer 1 (image \(notAFont)): '\(notAFont)' is not a PNG or JPEG") == true
        }
        #expect(rig.switcher.status.overlays.isEmpty)
    }
}
