import FrameDrawing
import StudioCore
import Testing
@testable import Graphics

/// The beauty filter on a real noisy picture: skin-coloured on the left (two luma levels meeting at
/// a sharp vertical edge), blue on the right, luma noise everywhere.
@Suite struct BeautyFilterTests {
    static let width = 640, height = 360
    static let edgeX = 160
    static let skinDark = YUVColor(y: 90, u: 108, v: 152)
    static let skinLight = YUVColor(y: 170, u: 108, v: 152)
    static let blue = YUVColor(y: 100, u: 190, v: 110)
    /// Inside the skin, away from the edge and from the blue by more than the filter's reach.
    static let skinAreas = [PixelRect(x: 16, y: 16, width: 120, height: 328), PixelRect(x: 184, y: 16, width: 112, height: 328)]
    static let blueArea = PixelRect(x: 360, y: 16, width: 264, height: 328)

    static func noisyPicture(seed: UInt64 = 7) -> VideoFrame {
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        frame.fill(PixelRect(x: 0, y: 0, width: edgeX, height: height), with: skinDark)
        frame.fill(PixelRect(x: edgeX, y: 0, width: 320 - edgeX, height: height), with: skinLight)
        frame.fill(PixelRect(x: 320, y: 0, width: 320, height: height), with: blue)
        var state = seed
        for y in 0..<height {
            let row = (frame.plane(0) + y * frame.planes[0].stride).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = (Int(state >> 59) * 3 - 45) / 2 // -22...24: about 13 codes standard deviation
                row[x] = UInt8(clamping: Int(row[x]) + noise)
            }
        }
        return frame
    }

    static func luma(_ frame: VideoFrame, _ x: Int, _ y: Int) -> Int {
        Int(frame.plane(0).load(fromByteOffset: y * frame.planes[0].stride + x, as: UInt8.self))
    }

    /// The sum of the squared 4-neighbour Laplacian of luma over `rect`: the picture's fine detail.
    static func laplacianEnergy(_ frame: VideoFrame, in rect: PixelRect) -> Double {
        var sum = 0.0
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let l = 4 * luma(frame, x, y) - luma(frame, x - 1, y) - luma(frame, x + 1, y) - luma(frame, x, y - 1) - luma(frame, x, y + 1)
                sum += Double(l * l)
            }
        }
        return sum
    }

    /// The edge's height: mean luma one pixel right of the edge minus one pixel left, over the rows.
    static func stepHeight(_ frame: VideoFrame) -> Double {
        let rows = 16..<(height - 16)
        return Double(rows.reduce(0) { $0 + luma(frame, edgeX + 1, $1) - luma(frame, edgeX - 2, $1) }) / Double(rows.count)
    }

    static func beauty(_ strength: Int) -> PictureSettings {
        var settings = PictureSettings()
        settings.beauty = strength
        return settings
    }

    @Test func smoothsSkinKeepsTheEdgeAndLeavesBlueAlone() throws {
        let picture = Self.noisyPicture()
        let output = try PictureProcessor().process(picture, settings: Self.beauty(100))
        #expect(output.storage !== picture.storage)
        for area in Self.skinAreas {
            let ratio = Self.laplacianEnergy(output, in: area) / Self.laplacianEnergy(picture, in: area)
            #expect(ratio < 0.1, "skin area \(area): high-frequency energy kept \(ratio)")
            // Smoothing keeps the skin's brightness.
            let before = picture.averageColor(in: area)!, after = output.averageColor(in: area)!
            #expect(abs(Int(before.y) - Int(after.y)) <= 1)
        }
        let step = Self.stepHeight(picture), kept = Self.stepHeight(output)
        #expect(step > 70)
        #expect(kept > step * 0.8 && kept < step * 1.1, "edge step \(step) became \(kept)")
        let blueRatio = Self.laplacianEnergy(output, in: Self.blueArea) / Self.laplacianEnergy(picture, in: Self.blueArea)
        #expect(blueRatio > 0.97, "blue area: high-frequency energy kept \(blueRatio)")
        // Chroma is not the filter's business.
        #expect(PictureProcessorTests.mean(output, plane: 1) == PictureProcessorTests.mean(picture, plane: 1))
    }

    @Test func strengthScalesTheSmoothing() throws {
        let picture = Self.noisyPicture(seed: 11)
        let processor = PictureProcessor()
        var energies: [Double] = []
        for strength in [0, 30, 60, 100] {
            let output = try processor.process(picture, settings: Self.beauty(strength))
            energies.append(Self.laplacianEnergy(output, in: Self.skinAreas[0]))
            if strength == 0 { #expect(output.storage === picture.storage) }
        }
        #expect(energies == energies.sorted(by: >) && Set(energies).count == 4, "\(energies)")
    }

    /// A noisy skin picture of any size (a gradient under the noise).
    static func noisySkin(width: Int, height: Int) -> VideoFrame {
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        frame.fill(with: skinDark)
        var state: UInt64 = 3
        for y in 0..<height {
            let row = (frame.plane(0) + y * frame.planes[0].stride).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                row[x] = UInt8(clamping: 60 + x + Int(state >> 59))
            }
        }
        return frame
    }

    @Test(arguments: [(2, 2), (3, 5), (5, 3), (63, 47), (64, 48), (101, 33)])
    func inPlaceAndCopyingAgreeAtAnySize(width: Int, height: Int) throws {
        // Beauty alone writes into a new frame; after a colour step that changes no byte it works in
        // the colour step's frame, in place. Every pixel must come out the same either way.
        let picture = Self.noisySkin(width: width, height: height)
        let processor = PictureProcessor()
        let copied = try processor.process(picture, settings: Self.beauty(100))
        var inPlace = Self.beauty(100)
        inPlace.saturation = 1.0001
        let changed = try processor.process(picture, settings: inPlace)
        #expect(copied.width == width && copied.height == height && changed.width == width && changed.height == height)
        var differing = 0, smoothed = 0
        for y in 0..<height {
            for x in 0..<width {
                if Self.luma(copied, x, y) != Self.luma(changed, x, y) { differing += 1 }
                if Self.luma(copied, x, y) != Self.luma(picture, x, y) { smoothed += 1 }
            }
        }
        #expect(differing == 0)
        #expect(width * height < 16 || smoothed > 0)
    }

    @Test func beautyComesAfterTheGeometry() throws {
        // Mirrored, the skin is on the right; the smoothing follows it there.
        var settings = Self.beauty(100)
        settings.mirror = true
        let picture = Self.noisyPicture()
        let output = try PictureProcessor().process(picture, settings: settings)
        let mirroredSkin = PixelRect(x: Self.width - 136, y: 16, width: 120, height: 328)
        let mirroredBlue = PixelRect(x: 16, y: 16, width: 264, height: 328)
        #expect(Self.laplacianEnergy(output, in: mirroredSkin) < 0.2 * Self.laplacianEnergy(picture, in: Self.skinAreas[0]))
        #expect(Self.laplacianEnergy(output, in: mirroredBlue) > 0.97 * Self.laplacianEnergy(picture, in: Self.blueArea))
    }
}
