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
}
