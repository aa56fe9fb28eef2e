#if canImport(Glibc)
import Glibc
#endif

/// A stereo-linked brickwall limiter: no output sample's magnitude exceeds `ceiling`, and below the
/// ceiling it passes the signal unchanged.
///
/// How: for every frame the gain that would bring it to the ceiling (`needed`, 1 below it); the least
/// `needed` over the next `window` frames (a sliding minimum); that minimum held and released slowly
/// (`release`), never above it; then averaged over `window` frames (a box filter: a smooth attack).
/// Every value in the average belongs to a window that contains the frame it is applied to, so each is
/// at most that frame's `needed`, and so is their mean: the output never exceeds the ceiling (a last
/// clamp catches float rounding only). The price is `latency` frames of delay (the look-ahead).
struct Limiter {
    /// Frames the limiter looks ahead and delays the signal: 96 (2 ms at 48 kHz).
    static let latency = 96
    private static let window = latency + 1
    private static let capacity = 128  // a power of two above `window`
    private static let mask = capacity - 1

    /// The ceiling as a linear magnitude, for the frames that come in from now on (each frame leaves
    /// limited to the ceiling it came in with: a change applies at its sample exactly).
    var ceiling: Float
    /// Per-frame approach of the held gain back to 1 (a 50 ms release at 48 kHz).
    private let release: Double
    private var delayed = [Float](repeating: 0, count: 2 * capacity)
    private var ceilings: [Float]
    // Sliding minimum of `needed`: a monotonic deque of (frame, gain), in rings.
    private var dequeFrames = [Int](repeating: 0, count: capacity)
    private var dequeGains = [Double](repeating: 1, count: capacity)
    private var head = 0, tail = 0
    // The box filter over the held gains.
    private var box = [Double](repeating: 1, count: window)
    private var boxSum = Double(window)
    private var held = 1.0
    private var frame = 0
    /// Frames whose gain was below 1 (the limiter acting), since the start.
    private(set) var limitedFrames = 0
    /// Samples the last clamp brought down by more than float rounding: 0 unless the gain computation
    /// is wrong (tests check it stays 0, so the clamp cannot hide a limiter that does not limit).
    private(set) var clampedSamples = 0

    init(ceiling: Float, sampleRate: Int, releaseSeconds: Double = 0.05) {
        self.ceiling = ceiling
        ceilings = [Float](repeating: ceiling, count: Self.capacity)
        release = 1 - exp(-1 / (releaseSeconds * Double(sampleRate)))
    }

    /// Limits interleaved stereo `samples` in place: each frame out is the frame `latency` frames before
    /// it in, at the gain its look-ahead chose.
    mutating func process(_ samples: UnsafeMutableBufferPointer<Float>) {
        let frames = samples.count / 2
        let ceiling = self.ceiling
        let window = Self.window, mask = Self.mask
        delayed.withUnsafeMutableBufferPointer { delayed in
        ceilings.withUnsafeMutableBufferPointer { ceilings in
        dequeFrames.withUnsafeMutableBufferPointer { dequeFrames in
        dequeGains.withUnsafeMutableBufferPointer { dequeGains in
        box.withUnsafeMutableBufferPointer { box in
            for index in 0..<frames {
                let left = samples[2 * index], right = samples[2 * index + 1]
                let peak = max(abs(left), abs(right))
                let needed = peak > ceiling ? Double(ceiling) / Double(peak) : 1
                // The deque keeps increasing gains from its head: drop what the new one undercuts.
                while tail != head, dequeGains[(tail - 1) & mask] >= needed { tail -= 1 }
                dequeFrames[tail & mask] = frame
                dequeGains[tail & mask] = needed
                tail += 1
                if dequeFrames[head & mask] <= frame - window { head += 1 }
                let least = dequeGains[head & mask]
                held = min(least, held + (1 - held) * release)
                let slot = frame % window
                boxSum += held - box[slot]
                box[slot] = held
                let gain = min(boxSum / Double(window), 1)
                // The frame that entered `latency` frames ago leaves now, at `gain`.
                let out = (frame - Self.latency) & mask
                let outLeft = delayed[2 * out], outRight = delayed[2 * out + 1], outCeiling = ceilings[out]
                let inSlot = frame & mask
                delayed[2 * inSlot] = left
                delayed[2 * inSlot + 1] = right
                ceilings[inSlot] = ceiling
                if gain < 1 { limitedFrames += 1 }
                let limitedLeft = Float(Double(outLeft) * gain), limitedRight = Float(Double(outRight) * gain)
                if max(abs(limitedLeft), abs(limitedRight)) > outCeiling * (1 + 1e-6) { clampedSamples += 1 }
                samples[2 * index] = min(max(limitedLeft, -outCeiling), outCeiling)
                samples[2 * index + 1] = min(max(limitedRight, -outCeiling), outCeiling)
                frame += 1
            }
        }}}}}
    }
}
