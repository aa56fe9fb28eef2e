/// Interleaved samples between the stream's callback and the clock thread. Fixed capacity; a writer
/// that finds it full drops the oldest samples.
struct AudioRing {
    private var storage: [Float]
    private var readIndex = 0
    private(set) var count = 0
    let channels: Int

    init(frames: Int, channels: Int) {
        self.channels = channels
        storage = [Float](repeating: 0, count: frames * channels)
    }

    var frames: Int { count / channels }
    var capacityFrames: Int { storage.count / channels }

    /// Appends; returns the number of frames dropped to make room.
    mutating func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
        var dropped = 0
        let overflow = count + samples.count - storage.count
        if overflow > 0 {
            let drop = min(count, (overflow + channels - 1) / channels * channels)
            readIndex = (readIndex + drop) % storage.count
            count -= drop
            dropped = drop / channels
        }
        let incoming = samples.count > storage.count ? UnsafeBufferPointer(rebasing: samples.suffix(storage.count)) : samples
        var writeIndex = (readIndex + count) % storage.count
        for sample in incoming {
            storage[writeIndex] = sample
            writeIndex = writeIndex + 1 == storage.count ? 0 : writeIndex + 1
        }
        count += incoming.count
        return dropped
    }

    /// Moves up to `frames` frames into `destination` (starting at `offset` samples); returns frames moved.
    mutating func read(frames: Int, into destination: inout [Float], offset: Int) -> Int {
        let samples = min(frames * channels, count)
        for index in 0..<samples { destination[offset + index] = storage[(readIndex + index) % storage.count] }
        readIndex = (readIndex + samples) % storage.count
        count -= samples
        return samples / channels
    }

    mutating func discard(frames: Int) {
        let samples = min(frames * channels, count)
        readIndex = (readIndex + samples) % storage.count
        count -= samples
    }

    mutating func removeAll() {
        readIndex = 0
        count = 0
    }
}
