import Foundation
import Testing
import Capture
import Control
import FrameDrawing
import StudioCore
import TestSupport

/// The compositor judged on what a real nginx-rtmp received, decoded at half the program's size (one
/// picture pixel is two program pixels): a PiP inset's edges, an overlay PNG with alpha, a FreeType
/// caption, a camera mirrored live, a scene changed by `studio reload`, and a wipe's edge frame by frame.
@Suite(.serialized) struct CompositionStreamTests {
    static let size = (width: 320, height: 180)

    /// The config: `corner` places the pip inset; a logo (left half opaque white, right half fully
    /// transparent) over cam1's ident block, a caption in a blue box, and a 10-frame wipe.
    static func config(corner: String) -> String {
        """
        scenes:
          - name: pip
            layout: pip
            sources: [cam1, cam2]
            corner: \(corner)
            size: 0.3
        overlays:
          - name: logo
            layers:
              - image: logo.png
                rect: [20, 200, 64, 64]
          - name: caption
            layers:
              - text: "STUDIO"
                rect: [0.55, 0.76, 0.4, 0.2]
                style: { size: 36, color: white, box: "#2040c0", box_opacity: 1, padding: 8, align: center }
        transition: { kind: wipe-right, frames: 10 }

        """
    }

    /// An RGB24 picture of `size`.
    struct Picture {
        let rgb: [UInt8]
        func color(_ x: Int, _ y: Int) -> YUVColor {
            let i = (y * CompositionStreamTests.size.width + x) * 3
            return YUVColor(red: Int(rgb[i]), green: Int(rgb[i + 1]), blue: Int(rgb[i + 2]))
        }
        /// The mean colour of a block of program pixels (x0..<x1, y0..<y1), in picture pixels.
        func mean(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) -> YUVColor {
            var sums = (0, 0, 0), count = 0
            for y in y0 / 2..<y1 / 2 {
                for x in x0 / 2..<x1 / 2 {
                    let i = (y * CompositionStreamTests.size.width + x) * 3
                    sums.0 += Int(rgb[i]); sums.1 += Int(rgb[i + 1]); sums.2 += Int(rgb[i + 2])
                    count += 1
                }
            }
            return YUVColor(red: sums.0 / count, green: sums.1 / count, blue: sums.2 / count)
        }
        func shows(_ camera: CameraID, x0: Int, y0: Int, x1: Int, y1: Int) -> Bool {
            TestPatternCamera.camera(showing: mean(x0, y0, x1, y1), among: ["cam1", "cam2", "cam3"], tolerance: 60) == camera
        }
    }

    @Test func whatTheCompositorDrawsIsWhatTheStreamShows() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try Self.config(corner: "top-right").write(to: config, atomically: true, encoding: .utf8)
        let graph = "color=black:s=64x64,format=rgba,geq=r=255:g=255:b=255:a='if(lt(X,32),255,0)'"
        _ = try MediaProbe.run(MediaProbe.ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", graph, "-frames:v", "1",
                                                   studio.directory.appendingPathComponent("logo.png").path])
        try studio.serve(["--config", config.path, "--cameras", "3", "--rtmp", nginx.url(stream: "compose")] + EndToEndTests.smallProgram)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        func cli(_ words: String) throws -> JSONValue {
            let result = try studio.run(words.split(separator: " ").map(String.init) + ["--json", "--socket", studio.socket])
            #expect(result.status == 0, "studio \(words): \(result)")
            return (try? JSONValue(parsing: result.output)) ?? .null
        }

        #expect(studio.waitForProgramFrames(10))
        let pipMS = try #require(try cli("scene pip")["program_ms"]?.intValue)
        #expect(studio.waitForProgramFrames(15))
        let logoMS = try #require(try cli("overlay logo on")["program_ms"]?.intValue)
        let captionMS = try #require(try cli("overlay caption on")["program_ms"]?.intValue)
        #expect(studio.waitForProgramFrames(15))
        let mirrorMS = try #require(try cli("picture cam1 --mirror")["program_ms"]?.intValue)
        #expect(studio.waitForProgramFrames(15))
        // The file changes the inset's corner; `studio reload` applies it live.
        try Self.config(corner: "bottom-right").write(to: config, atomically: true, encoding: .utf8)
        let reload = try studio.run(["reload", "--socket", studio.socket])
        #expect(reload.status == 0, "\(reload)")
        #expect(studio.waitForProgramFrames(15))
        _ = try cli("preview cam3")
        let wipe = try cli("auto")
        let wipeMS = try #require(wipe["program_ms"]?.intValue)
        #expect(wipe["transition"]?["kind"] == "wipe-right" && wipe["transition"]?["frames"]?.intValue == 10)
        #expect(studio.waitForProgramFrames(20))
        #expect(studio.stopServer() == .exited(0))

        // The stream, at half size, each frame at its program time.
        let file = try #require(nginx.recordings().first)
        let decoded = try MediaProbe.videoFrames(file)
        let pictures = try MediaProbe.tinyFrames(file, width: Self.size.width, height: Self.size.height).map(Picture.init)
        try #require(decoded.count == pictures.count && decoded.count > 60)
        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let connected = try #require(EndToEndTests.events(log, kind: "output_connected").first)
        let offset = try #require(Double(connected["details"]?["first_program_ms"]?.stringValue ?? ""))
        let times = decoded.map { ($0.ptsMilliseconds ?? -1) + offset }
        func frames(from: Int, to: Int) -> [Picture] { numbered(from: from, to: to).map(\.picture) }
        /// The frames from `from` to `to` with their frame number counted from `from` on the 30 fps grid
        /// (a tick the machine missed leaves a number out, never shifts one).
        func numbered(from: Int, to: Int) -> [(number: Int, picture: Picture)] {
            times.indices.filter { times[$0] >= Double(from) - 0.5 && times[$0] < Double(to) - 0.5 }
                .map { (Int(((times[$0] - Double(from)) * 30 / 1000).rounded()), pictures[$0]) }
        }

        // The pip inset (30 % of 640 = 192x108, 3 % margin, top right): x 428..620, y 20..128; cam2's ident
        // block is its left quarter, x 428..476. Within 2 px of the edges the scene gives.
        let pip = frames(from: pipMS, to: logoMS)
        #expect(pip.count >= 10)
        for picture in pip {
            #expect(picture.shows("cam2", x0: 432, y0: 24, x1: 440, y1: 124), "the inset's left edge, inside")
            #expect(!picture.shows("cam2", x0: 418, y0: 24, x1: 426, y1: 124), "the inset's left edge, outside")
            #expect(picture.shows("cam2", x0: 432, y0: 24, x1: 472, y1: 30) && !picture.shows("cam2", x0: 432, y0: 10, x1: 472, y1: 16),
                    "the inset's top edge")
            #expect(picture.shows("cam1", x0: 10, y0: 40, x1: 150, y1: 320), "cam1 full frame")
        }

        // The logo: its opaque half white, its transparent half leaves cam1's ident block as it was.
        let withLogo = frames(from: max(logoMS, captionMS), to: mirrorMS)
        #expect(withLogo.count >= 5)
        for picture in withLogo {
            #expect(picture.mean(24, 204, 48, 260).distance(to: YUVColor.white) < 30, "the logo's opaque half: \(picture.mean(24, 204, 48, 260))")
            #expect(picture.shows("cam1", x0: 56, y0: 204, x1: 80, y1: 260), "the logo's transparent half: \(picture.mean(56, 204, 80, 260))")
            // The caption: a blue box with white letters in it, inside its layer (0.55..0.95 x 0.76..0.96 of
            // the picture: x 352..608, y 274..346), and nothing of it above the layer.
            let blue = YUVColor(red: 0x20, green: 0x40, blue: 0xc0)
            let layer = (176..<304).flatMap { x in (137..<173).map { y in picture.color(x, y) } }
            let boxed = layer.filter { $0.distance(to: blue) < 40 }.count
            #expect(boxed * 5 >= layer.count, "the caption's box: \(boxed) of \(layer.count) pixels its colour")
            #expect(layer.contains { $0.y > 200 }, "white letters in the box")
            let above = (176..<304).map { x in picture.color(x, 120) }
            #expect(!above.contains { $0.distance(to: blue) < 25 }, "nothing of the caption above its layer")
        }
        // The mirror: cam1's ident block moves to the right quarter (below the inset), the left shows bars.
        let mirrored = frames(from: mirrorMS, to: wipeMS).prefix(10)
        #expect(mirrored.count >= 5)
        for picture in mirrored {
            #expect(picture.shows("cam1", x0: 500, y0: 150, x1: 630, y1: 250) && !picture.shows("cam1", x0: 10, y0: 40, x1: 150, y1: 180))
        }
        // The reload moved the inset to the bottom right (y 232..340; the caption covers it from y 274):
        // the last frames before the wipe show it there.
        let beforeWipe = try #require(frames(from: mirrorMS, to: wipeMS).last)
        #expect(beforeWipe.shows("cam2", x0: 432, y0: 236, x1: 472, y1: 270) && !beforeWipe.shows("cam2", x0: 432, y0: 24, x1: 472, y1: 124))

        // The wipe: on frame i of 10 the edge is at 640 * (i + 1) / 10; left of it the new picture (cam3),
        // right of it the old one, compared with the frames just before and after it on a row of static bars.
        let wipeFrames = numbered(from: wipeMS, to: wipeMS + 10 * 1000 / 30)
        #expect(wipeFrames.count >= 9 && wipeFrames.count <= 10 && wipeFrames.allSatisfy { (0..<10).contains($0.number) })
        let a = beforeWipe
        let b = try #require(frames(from: wipeMS + 10 * 1000 / 30, to: wipeMS + 20 * 1000 / 30).first)
        let row = 30  // program y 60: bars, ident blocks and the inset's bars, all still
        for (i, picture) in wipeFrames {
            let edge = 640 * (i + 1) / 10
            for x in stride(from: 4, to: 636, by: 16) where abs(x - edge) > 8 {
                let expected = x < edge ? b.color(x / 2, row) : a.color(x / 2, row)
                #expect(picture.color(x / 2, row).distance(to: expected) < 40, "wipe frame \(i), x \(x), edge \(edge)")
            }
        }
    }
}
