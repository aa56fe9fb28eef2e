import Testing
@testable import Capture

/// The jitter buffer's ring on its own: samples come out in the order they went in, across the end of
/// its storage, and a full ring drops its oldest whole frames.
@Suite struct AudioRingTests {
    /// Frames `range` of a stereo ramp (left n, right -n), so order and channel are both checked.
    private func frames(_ range: Range<Int>) -> [Float] { range.flatMap { [Float($0), -Float($0)] } }

    private func write(_ samples: [Float], to ring: inout AudioRing) -> Int {
        samples.withUnsafeBufferPointer { ring.write($0) }
    }

    /// Reads `count` frames; answers the samples and the runs they came in.
    private func read(_ count: Int, from ring: inout AudioRing) -> (samples: [Float], runs: Int, frames: Int) {
        var samples: [Float] = [], runs = 0
        let moved = ring.read(frames: count) { run in
            samples += run
            runs += 1
        }
        return (samples, runs, moved)
    }

    @Test func samplesComeOutInOrderAcrossTheEndOfTheStorage() {
        var ring = AudioRing(frames: 5, channels: 2)
        #expect(write(frames(0..<3), to: &ring) == 0)
        #expect(read(2, from: &ring).samples == frames(0..<2))
        // Frames 3..<6 fill slots 3, 4 and (wrapped) 0.
        #expect(write(frames(3..<6), to: &ring) == 0)
        #expect(ring.frames == 4)
        let all = read(10, from: &ring)
        #expect(all.samples == frames(2..<6))
        #expect(all.frames == 4)
        #expect(all.runs == 2, "a read across the end of the storage is two runs")
        #expect(ring.frames == 0)
        #expect(read(1, from: &ring).frames == 0)
    }

    @Test func aFullRingDropsItsOldestFrames() {
        var ring = AudioRing(frames: 4, channels: 2)
        #expect(write(frames(0..<3), to: &ring) == 0)
        #expect(write(frames(3..<6), to: &ring) == 2)
        #expect(read(4, from: &ring).samples == frames(2..<6))
        // More than the ring holds at once: only the newest frames stay.
        #expect(write(frames(10..<11), to: &ring) == 0)
        #expect(write(frames(20..<27), to: &ring) == 1)
        #expect(read(4, from: &ring).samples == frames(23..<27))
    }

    @Test func discardSkipsTheOldestFramesAcrossTheEnd() {
        var ring = AudioRing(frames: 4, channels: 2)
        _ = write(frames(0..<3), to: &ring)
        ring.discard(frames: 2)
        _ = write(frames(3..<6), to: &ring)
        ring.discard(frames: 2)
        #expect(read(4, from: &ring).samples == frames(4..<6))
        _ = write(frames(6..<8), to: &ring)
        ring.removeAll()
        #expect(ring.frames == 0)
        _ = write(frames(8..<9), to: &ring)
        #expect(read(4, from: &ring).samples == frames(8..<9))
    }
}
