/// Interleaved samples between the stream's callback and the clock thread. Fixed capacity; a writer
/// that finds it full drops the oldest samples.
///
/// Samples move in at most two bulk copies each way (the part up to the end of the storage, then the
/// part from its start): every input's quanta pass through here under its lock, so no per-sample
/// index arithmetic.
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
        let capacity = storage.count
        guard capacity > 0, samples.count > 0 else { return 0 }
        var dropped = 0
        let overflow = count + samples.count - capacity
        if overflow > 0 {
            let drop = min(count, (overflow + channels - 1) / channels * channels)
            readIndex = (readIndex + drop) % capacity
            count -= drop
            dropped = drop / channels
        }
        let incoming = samples.count > capacity ? UnsafeBufferPointer(rebasing: samples.suffix(capacity)) : samples
        let writeIndex = (readIndex + count) % capacity
        storage.withUnsafeMutableBufferPointer { storage in
            let first = min(incoming.count, capacity - writeIndex)
            (storage.baseAddress! + writeIndex).update(from: incoming.baseAddress!, count: first)
            if first < incoming.count { storage.baseAddress!.update(from: incoming.baseAddress! + first, count: incoming.count - first) }
        }
        count += incoming.count
        return dropped
    }

    /// Moves up to `frames` frames out, oldest first, handing them to `body` in one or two runs
    /// (the second after the storage wraps); returns the frames moved.
    @discardableResult
    mutating func read(frames: Int, into body: (UnsafeBufferPointer<Float>) -> Void) -> Int {
        let samples = min(max(0, frames) * channels, count)
        guard samples > 0 else { return 0 }
        let capacity = storage.count
        storage.withUnsafeBufferPointer { storage in
            let first = min(samples, capacity - readIndex)
            body(UnsafeBufferPointer(start: storage.baseAddress! + readIndex, count: first))
            if first < samples { body(UnsafeBufferPointer(start: storage.baseAddress!, count: samples - first)) }
        }
        readIndex = (readIndex + samples) % capacity
        count -= samples
        return samples / channels
    }

    mutating func discard(frames: Int) {
        guard storage.count > 0 else { return }
        let samples = min(max(0, frames) * channels, count)
        readIndex = (readIndex + samples) % storage.count
        count -= samples
    }

    mutating func removeAll() {
        readIndex = 0
        count = 0
    }
}
