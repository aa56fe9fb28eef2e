import FrameDrawing
import Testing
import StudioCore
@testable import Graphics

@Suite struct KeyedPictureTests {
    @Test func keepsItsPlanes() {
        let frame = VideoFrame.allocate(format: .i420, width: 4, height: 2)
        let keyed = KeyedPicture(picture: frame, alpha: [UInt8](repeating: 128, count: 8))
        #expect(keyed.width == 4 && keyed.height == 2)
        #expect(keyed.alpha?.allSatisfy { $0 == 128 } == true)
    }

    @Test func solidColourWithOpacity() throws {
        let orange = YUVColor(RGBColor(red: 255, green: 128, blue: 0))
        let opaque = try KeyedPicture.solid(color: orange, width: 20, height: 10)
        #expect(opaque.alpha == nil)
        #expect(opaque.picture.averageColor(in: PixelRect(x: 0, y: 0, width: 20, height: 10)) == orange)
        #expect(opaque.picture.averageColor(in: PixelRect(x: 19, y: 9, width: 1, height: 1)) == orange)

        let quarter = try KeyedPicture.solid(color: orange, width: 20, height: 10, opacity: 0.25)
        #expect(quarter.alpha?.count == 200)
        #expect(quarter.alpha?.allSatisfy { $0 == 64 } == true)
        #expect(quarter.alpha(x: 19, y: 9) == 64)

        let error = #expect(throws: GraphicsError.self) { try KeyedPicture.solid(color: orange, width: 0, height: 10) }
        #expect(error?.description == "picture size 0x10 is outside 1x1...8192x8192")
    }
}
