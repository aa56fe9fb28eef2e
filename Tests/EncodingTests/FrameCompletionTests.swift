import Testing
@testable import Encoding
import StudioCore
import TestSupport

/// The audio stage wakes its thread only for chunks that complete an AAC frame (`FrameCompletion`):
/// checked against a real `AACEncoder`, which sends a frame to libavcodec exactly when its buffer
/// reaches one.
@Suite struct FrameCompletionTests {
    /// Feeds `chunks` (first sample, frames) to an encoder and to the schedule; returns, per chunk,
    /// whether the encoder sent a frame and whether the schedule said it would.
    private func run(_ chunks: [(Int64, Int)]) throws -> [(sent: Bool, woke: Bool)] {
        let encoder = try AACEncoder()
        var completion = FrameCompletion(frameSize: encoder.frameSize, sampleRate: encoder.format.sampleRate)
        var result: [(sent: Bool, woke: Bool)] = []
        var sentSoFar = 0
        for (first, count) in chunks {
            let chunk = SyntheticMedia.audio(firstSample: first, count: count)
            let woke = completion.completesFrame(chunk)
            _ = try encoder.encode(chunk)
            let sent = encoder.framesSent
            result.append((sent: sent > sentSoFar, woke: woke))
            sentSoFar = sent
        }
        return result
    }

    @Test func tenMillisecondChunksWakeOncePerFrame() throws {
        let chunks = (0..<200).map { (Int64(5_000 + 480 * $0), 480) }
        let result = try run(chunks)
        #expect(result.allSatisfy { $0.sent == $0.woke })
        // 96,000 samples: 93 whole frames, 93 wake-ups instead of 200.
        #expect(result.filter(\.woke).count == 93)
    }

    @Test func chunksOfAnySizeWakeExactlyWhenAFrameGoesOut() throws {
        var chunks: [(Int64, Int)] = [], next: Int64 = 0
        for size in [100, 441, 1024, 2048, 1, 923, 4000, 480, 480, 17, 3000] {
            chunks.append((next, size))
            next += Int64(size)
        }
        let result = try run(chunks)
        #expect(result.map(\.woke) == result.map(\.sent))
    }

    /// Off the timeline (a gap the encoder fills with silence, an overlap it skips, a gap so long it
    /// starts over): the thread is woken, and no chunk that sends a frame is missed after it.
    @Test func gapsAndOverlapsWakeAndKeepTheFrames() throws {
        let long = Int64(AACEncoder.maximumSilenceFill * 48_000) + 12_345
        let chunks: [(Int64, Int)] = [(0, 480), (480, 480), (3_000, 480), (3_480, 480), (3_700, 480), (4_180, 480), (4_660, 480),
                                      (4_660 + long, 480), (5_140 + long, 480), (5_620 + long, 480), (6_100 + long, 480)]
        let result = try run(chunks)
        #expect(result[2].woke && result[4].woke && result[7].woke)
        #expect(result.allSatisfy { !$0.sent || $0.woke }, "\(result)")
        #expect(Array(result[8...]).allSatisfy { $0.sent == $0.woke }, "\(result)")
    }
}
