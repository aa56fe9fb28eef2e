import FrameDrawing
import StudioCore
import Testing
@testable import Graphics

@Suite struct PictureProcessorTests {
    static let grey = YUVColor(y: 100, u: 128, v: 128)
    static let red = YUVColor(red: 220, green: 30, blue: 30)

    /// A 64x48 grey I420 frame with a red 8x8 marker at (`x`, `y`).
    static func marked(x: Int, y: Int, format: PixelFormat = .i420) -> VideoFrame {
        let frame = VideoFrame.allocate(format: format, width: 64, height: 48)
        frame.fill(with: grey)
        frame.fill(PixelRect(x: x, y: y, width: 8, height: 8), with: red)
        return frame
    }

    /// True when `rect` of `frame` shows `color` (each component within 3).
    static func shows(_ frame: VideoFrame, _ rect: PixelRect, _ color: YUVColor) -> Bool {
        guard let seen = frame.averageColor(in: rect) else { return false }
        return abs(Int(seen.y) - Int(color.y)) <= 3 && abs(Int(seen.u) - Int(color.u)) <= 3 && abs(Int(seen.v) - Int(color.v)) <= 3
    }

    static func settings(_ change: (inout PictureSettings) -> Void) -> PictureSettings {
        var settings = PictureSettings()
        change(&settings)
        return settings
    }

    @Test func identityReturnsTheSameFrame() throws {
        let frame = Self.marked(x: 0, y: 0)
        let output = try PictureProcessor().process(frame, settings: PictureSettings())
        #expect(output.storage === frame.storage)
        // Beauty 0 is no beauty.
        let zero = try PictureProcessor().process(frame, settings: Self.settings { $0.beauty = 0 })
        #expect(zero.storage === frame.storage)
    }

    @Test func mirrorMovesTheLeftMarkerRight() throws {
        let frame = Self.marked(x: 0, y: 16)
        let output = try PictureProcessor().process(frame, settings: Self.settings { $0.mirror = true })
        #expect(output.width == 64 && output.height == 48 && output.format == .i420)
        #expect(Self.shows(output, PixelRect(x: 56, y: 16, width: 8, height: 8), Self.red))
        #expect(Self.shows(output, PixelRect(x: 0, y: 16, width: 8, height: 8), Self.grey))
        // The camera's frame is untouched.
        #expect(Self.shows(frame, PixelRect(x: 0, y: 16, width: 8, height: 8), Self.red))
    }

    @Test func flipMovesTheTopMarkerDown() throws {
        let output = try PictureProcessor().process(Self.marked(x: 16, y: 0), settings: Self.settings { $0.flip = true })
        #expect(Self.shows(output, PixelRect(x: 16, y: 40, width: 8, height: 8), Self.red))
        #expect(Self.shows(output, PixelRect(x: 16, y: 0, width: 8, height: 8), Self.grey))
    }

    @Test(arguments: [(90, 56, 0), (180, 56, 40), (270, 0, 40)])
    func rotationTurnsTheTopLeftCornerClockwise(rotation: Int, markerX: Int, markerY: Int) throws {
        let output = try PictureProcessor().process(Self.marked(x: 0, y: 0), settings: Self.settings { $0.rotation = rotation })
        let turned = rotation != 180
        #expect(output.width == (turned ? 48 : 64) && output.height == (turned ? 64 : 48))
        // The marker's corner, in the output's own size.
        let x = markerX == 0 ? 0 : output.width - 8, y = markerY == 0 ? 0 : output.height - 8
        #expect(Self.shows(output, PixelRect(x: x, y: y, width: 8, height: 8), Self.red), "rotate \(rotation)")
        #expect(Self.shows(output, PixelRect(x: 0, y: 0, width: 8, height: 8), Self.grey))
    }

    @Test func mirrorComesBeforeRotation() throws {
        // Mirrored first, the top-left marker is top-right, which a quarter turn puts bottom-right.
        let output = try PictureProcessor().process(Self.marked(x: 0, y: 0), settings: Self.settings {
            $0.mirror = true
            $0.rotation = 90
        })
        #expect(Self.shows(output, PixelRect(x: 40, y: 56, width: 8, height: 8), Self.red))
        #expect(Self.shows(output, PixelRect(x: 0, y: 0, width: 8, height: 8), Self.grey))
    }

    @Test func cropShowsOnlyItsRectangleAtItsSize() throws {
        let frame = VideoFrame.allocate(format: .i420, width: 64, height: 48)
        let colors = [YUVColor(red: 200, green: 0, blue: 0), YUVColor(red: 0, green: 200, blue: 0),
                      YUVColor(red: 0, green: 0, blue: 200), YUVColor(red: 200, green: 200, blue: 0)]
        for (index, color) in colors.enumerated() {
            frame.fill(PixelRect(x: index % 2 * 32, y: index / 2 * 24, width: 32, height: 24), with: color)
        }
        let output = try PictureProcessor().process(frame, settings: Self.settings {
            $0.crop = RelativeRect(x: 0.5, y: 0, width: 0.5, height: 0.5)
        })
        #expect(output.width == 32 && output.height == 24)
        #expect(Self.shows(output, PixelRect(x: 0, y: 0, width: 32, height: 24), colors[1]))
        for corner in [PixelRect(x: 0, y: 0, width: 2, height: 2), PixelRect(x: 30, y: 22, width: 2, height: 2)] {
            #expect(Self.shows(output, corner, colors[1]))
        }
    }

    @Test func cropComesBeforeRotation() throws {
        // The top-right quarter (32x24) with a marker in its top-left corner, turned a quarter: 24x32,
        // the marker top-right.
        let frame = Self.marked(x: 32, y: 0)
        let output = try PictureProcessor().process(frame, settings: Self.settings {
            $0.crop = RelativeRect(x: 0.5, y: 0, width: 0.5, height: 0.5)
            $0.rotation = 90
        })
        #expect(output.width == 24 && output.height == 32)
        #expect(Self.shows(output, PixelRect(x: 16, y: 0, width: 8, height: 8), Self.red))
        #expect(Self.shows(output, PixelRect(x: 0, y: 24, width: 8, height: 8), Self.grey))
    }

    @Test func cropRoundsToEvenPixels() throws {
        let frame = VideoFrame.allocate(format: .i420, width: 64, height: 48)
        frame.fill(with: Self.grey)
        let output = try PictureProcessor().process(frame, settings: Self.settings {
            $0.crop = RelativeRect(x: 0.1, y: 0.1, width: 0.33, height: 0.41)
        })
        #expect(output.width % 2 == 0 && output.height % 2 == 0)
        #expect(abs(output.width - 21) <= 2 && abs(output.height - 20) <= 2)
    }

    /// The mean of plane `index` (0 luma, 1 Cb, 2 Cr) of an I420 frame.
    static func mean(_ frame: VideoFrame, plane index: Int) -> Double {
        let width = index == 0 ? frame.width : (frame.width + 1) / 2
        var sum = 0
        for row in 0..<frame.planes[index].rows {
            let line = (frame.plane(index) + row * frame.planes[index].stride).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width { sum += Int(line[x]) }
        }
        return Double(sum) / Double(width * frame.planes[index].rows)
    }

    static let tinted = YUVColor(y: 100, u: 160, v: 96)

    static func colour(_ change: (inout PictureSettings) -> Void) throws -> (luma: Double, cb: Double, cr: Double) {
        let frame = VideoFrame.allocate(format: .i420, width: 64, height: 48)
        frame.fill(with: tinted)
        let output = try PictureProcessor().process(frame, settings: settings(change))
        return (mean(output, plane: 0), mean(output, plane: 1), mean(output, plane: 2))
    }

    @Test func brightnessShiftsLuma() throws {
        let brighter = try Self.colour { $0.brightness = 0.1 }
        #expect(abs(brighter.luma - 125.5) <= 1)
        #expect(brighter.cb == 160 && brighter.cr == 96)
        #expect(abs(try Self.colour { $0.brightness = -0.2 }.luma - 49) <= 1)
    }

    @Test func contrastSpreadsLumaAroundMidGrey() throws {
        // 100 is 27.5 below mid grey (127.5): twice the contrast, 55 below; half, 13.75 below.
        #expect(abs(try Self.colour { $0.contrast = 2 }.luma - 72.5) <= 1)
        #expect(abs(try Self.colour { $0.contrast = 0.5 }.luma - 113.75) <= 1)
    }

    @Test func gammaAboveOneLiftsTheMidtones() throws {
        // 255 * (100 / 255) ^ (1 / 2) = 159.7; ^ 2 = 39.2.
        #expect(abs(try Self.colour { $0.gamma = 2 }.luma - 159.7) <= 1)
        #expect(abs(try Self.colour { $0.gamma = 0.5 }.luma - 39.2) <= 1)
    }

    @Test func saturationScalesChromaAroundNeutral() throws {
        let half = try Self.colour { $0.saturation = 0.5 }
        #expect(abs(half.cb - 144) <= 1 && abs(half.cr - 112) <= 1 && half.luma == 100)
        let grey = try Self.colour { $0.saturation = 0 }
        #expect(grey.cb == 128 && grey.cr == 128)
        let double = try Self.colour { $0.saturation = 2 }
        #expect(abs(double.cb - 192) <= 1 && abs(double.cr - 64) <= 1)
    }

    @Test func otherFormatsAreConvertedToI420() throws {
        let frame = Self.marked(x: 0, y: 16, format: .nv12)
        let output = try PictureProcessor().process(frame, settings: Self.settings { $0.mirror = true })
        #expect(output.format == .i420)
        #expect(Self.shows(output, PixelRect(x: 56, y: 16, width: 8, height: 8), Self.red))
        let unchanged = try PictureProcessor().process(frame, settings: PictureSettings())
        #expect(unchanged.format == .i420 && Self.shows(unchanged, PixelRect(x: 0, y: 16, width: 8, height: 8), Self.red))
    }

    @Test func badSettingsAreRefusedByName() {
        #expect(throws: PictureError("rotate must be 0, 90, 180 or 270 (got 45)")) {
            try PictureProcessor().process(Self.marked(x: 0, y: 0), settings: Self.settings { $0.rotation = 45 })
        }
    }

    @Test func steadyStateReusesOutputMemory() throws {
        let processor = PictureProcessor()
        let frame = Self.marked(x: 0, y: 0)
        let settings = Self.settings {
            $0.mirror = true
            $0.beauty = 50
        }
        var addresses: Set<UnsafeMutableRawPointer> = []
        var recycled = 0
        for _ in 0..<5 {
            let output = try processor.process(frame, settings: settings)
            addresses.insert(output.storage.bytes)
            if output.storage.isRecycled { recycled += 1 }
        }
        #expect(addresses.count == 1)
        #expect(recycled == 4)
    }
}
