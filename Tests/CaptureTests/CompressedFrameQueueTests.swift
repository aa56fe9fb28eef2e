import Testing
@testable import Capture

/// The bounded queue between a camera and its passthrough ISO: frames that tell of refusals, and when the ISO is
/// behind, frames between keyframes refused before keyframes.
@Suite struct CompressedFrameQueueTests {
    static func frame(keyframe: Bool) -> CompressedVideoFrame {
        CompressedVideoFrame(codec: .h264, bytes: [0, 0, 1, 0x65], captureTime: 1, width: 640, height: 360, isKeyframe: keyframe)
    }

    @Test func keyframesAreRefusedLast() {
        let queue = CompressedFrameQueue(capacity: 8)
        // Six delta frames fill it to three quarters; the next ones are refused, keyframes still taken until full.
        for _ in 0..<8 { queue.offer(Self.frame(keyframe: false)) }
        #expect(queue.dropped == 2)
        queue.offer(Self.frame(keyframe: true))
        queue.offer(Self.frame(keyframe: true))
        #expect(queue.dropped == 2)
        queue.offer(Self.frame(keyframe: true))
        #expect(queue.dropped == 3 && queue.offered == 11)
        // Each frame says how many were refused before it: the consumer sees where.
        var refusals: [Int] = []
        queue.close()
        while case .item(let frame) = queue.pop(timeoutSeconds: 0) { refusals.append(frame.refusedBefore) }
        #expect(refusals == [0, 0, 0, 0, 0, 0, 2, 2])
    }
}
