import Testing
import StudioCore

@Suite struct VideoFrameTests {
    @Test func planeLayoutsFitAndAlign() {
        let planes = PixelFormat.i420.planeLayouts(width: 1280, height: 720)
        #expect(planes.count == 3)
        #expect(planes[0].stride == 1280 && planes[1].stride == 640)
        #expect(planes[1].offset == 1280 * 720)
        #expect(planes[2].offset == 1280 * 720 + 640 * 360)
        let odd = PixelFormat.i420.planeLayouts(width: 642, height: 362)
        #expect(odd.allSatisfy { $0.stride % 32 == 0 })
        #expect(odd[1].rows == 181)
    }

    @Test func poolRecyclesMemory() {
        let size = VideoFrame.byteCount(format: .nv12, width: 64, height: 64)
        let pool = FramePool(capacity: size, limit: 2)
        var first: UnsafeMutableRawPointer?
        do {
            let frame = VideoFrame.allocate(format: .nv12, width: 64, height: 64, pool: pool)
            first = frame.storage.bytes
        }
        let again = VideoFrame.allocate(format: .nv12, width: 64, height: 64, pool: pool)
        #expect(again.storage.bytes == first)
    }
}
