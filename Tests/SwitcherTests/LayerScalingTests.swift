import Testing
import FrameDrawing
import Graphics
import StudioCore
@testable import Switcher

/// A scaled camera layer shows exactly the camera scaled to its rectangle by libswscale, and nothing of
/// it lands outside (libswscale writes rows in blocks of 8 samples, past the end of a row of another
/// width: the compositor scales into a frame of its own, then copies), on noise so that any stray or
/// misplaced sample shows.
@Suite struct LayerScalingTests {
    private let cameras = ["cam1": noiseFrame(width: 200, height: 120, seed: 11), "cam2": noiseFrame(width: 200, height: 120, seed: 12)]

    /// `scene` composed at 320x180 from the two noise cameras.
    private func compose(_ layers: [LayerDescription]) throws -> VideoFrame {
        let scene = SceneDescription(name: "s", layout: nil, layers: layers, background: RGBColor(red: 0, green: 0, blue: 0))
        let compositor = Compositor(width: 320, height: 180, pool: FramePool(capacity: VideoFrame.byteCount(format: .i420, width: 320, height: 180)))
        let picture = compositor.render(scene: try PreparedScene(scene, width: 320, height: 180, texts: TextRenderer()), pictures: { camera in
            self.cameras[camera.name].map(CameraPicture.frame) ?? .slate(["NO CAMERA"])
        }, now: 1, sequence: 1)
        #expect(compositor.takeErrors().isEmpty)
        return picture.frame
    }

    /// The camera scaled whole to `width` x `height` on its own (the same libswscale conversion).
    private func scaled(_ name: String, width: Int, height: Int) throws -> [[[UInt8]]] {
        let scaler = FrameScaler(width: width, height: height, pool: FramePool(capacity: VideoFrame.byteCount(format: .i420, width: width, height: height)))
        return samples(of: try scaler.convert(cameras[name]!, sequence: 0))
    }

    private func layer(_ camera: String, _ rect: PixelRect) -> LayerDescription {
        LayerDescription(source: .camera(camera), rect: .pixels(x: rect.x, y: rect.y, width: rect.width, height: rect.height), fit: .stretch)
    }

    /// Which layer rectangle (index) covers sample (x, row) of plane `index`, nil for the background.
    private func owner(_ rects: [PixelRect], plane index: Int, x: Int, row: Int) -> Int? {
        rects.lastIndex { r in
            let (x0, y0) = index == 0 ? (r.x, r.y) : (r.x / 2, r.y / 2)
            let (w, h) = PlaneOps.size(ofPlane: index, width: r.width, height: r.height)
            return (x0..<(x0 + w)).contains(x) && (y0..<(y0 + h)).contains(row)
        }
    }

    private func check(_ rects: [PixelRect], names: [String]) throws {
        let picture = samples(of: try compose(zip(names, rects).map { layer($0, $1) }))
        let expected = try zip(names, rects).map { try scaled($0, width: $1.width, height: $1.height) }
        let black = YUVColor(RGBColor(red: 0, green: 0, blue: 0))
        for index in 0..<3 {
            let background = [black.y, black.u, black.v][index]
            var wrong = 0
            for row in picture[index].indices {
                for x in picture[index][row].indices {
                    let want: UInt8
                    if let layer = owner(rects, plane: index, x: x, row: row) {
                        let r = rects[layer], (x0, y0) = index == 0 ? (r.x, r.y) : (r.x / 2, r.y / 2)
                        want = expected[layer][index][row - y0][x - x0]
                    } else {
                        want = background
                    }
                    if picture[index][row][x] != want { wrong += 1 }
                }
            }
            #expect(wrong == 0, "plane \(index): \(wrong) samples differ from the cameras scaled on their own, for \(rects)")
        }
    }

    @Test func scaledLayersMatchTheirOwnScalingExactly() throws {
        // Side by side, the right one ending at the picture's edge (a spill would land on the left one's
        // next row), and one inset at an x that is no multiple of 16.
        try check([PixelRect(x: 0, y: 0, width: 160, height: 180), PixelRect(x: 160, y: 0, width: 160, height: 180),
                   PixelRect(x: 34, y: 20, width: 96, height: 54)], names: ["cam1", "cam2", "cam2"])
    }

    @Test func layersOfOtherWidthsLeaveTheirNeighboursAlone() throws {
        // 150 and 98 wide (not 16s: libswscale would write a few samples past them) with the background
        // and the other camera right beside them.
        try check([PixelRect(x: 0, y: 0, width: 150, height: 90), PixelRect(x: 150, y: 0, width: 98, height: 90),
                   PixelRect(x: 0, y: 90, width: 320, height: 90)], names: ["cam1", "cam2", "cam1"])
    }
}
