import Testing
@testable import StudioServer

/// The node's download route reads `Range: bytes=N-` and `bytes=N-M` inside the file; anything else is refused (416).
@Suite struct RecordingFileRoutesTests {
    @Test func rangesInsideTheFileOnly() {
        #expect(RecordingFileRoutes.range("bytes=0-", size: 10)! == (0, 9))
        #expect(RecordingFileRoutes.range("bytes=4-", size: 10)! == (4, 9))
        #expect(RecordingFileRoutes.range("bytes=4-6", size: 10)! == (4, 6))
        #expect(RecordingFileRoutes.range("bytes=4-60", size: 10)! == (4, 9), "an end past the file is its end")
        for refused in ["bytes=10-", "bytes=6-4", "bytes=-5", "bytes=0-1,4-5", "items=0-", "bytes=a-", ""] {
            #expect(RecordingFileRoutes.range(refused, size: 10) == nil, "\(refused)")
        }
        #expect(RecordingFileRoutes.range("bytes=0-", size: 0) == nil, "an empty file has no range")
    }
}
