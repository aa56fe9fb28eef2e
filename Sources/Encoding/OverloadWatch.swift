/// Tells a video encoder that cannot keep up from a passing hiccup: over each `window` of frames
/// offered to a stage, more than `dropLimit` of them refused by its full queue means the encoder is too
/// slow for the format here. The stage reports the start of an overload once (an `encoder_overloaded`
/// event, with the frames per second the encoder managed) and shows it in `status` until a window
/// passes within the limit. Pure logic: time (ns on the stage's clock) comes in as arguments.
public struct OverloadWatch: Sendable {
    /// What one overloaded window measured.
    public struct Overload: Sendable, Equatable {
        /// Frames the encoder took per second in the window.
        public var measuredFPS: Double
        /// Frames offered to the stage per second (the feed's rate).
        public var offeredFPS: Double
        /// Of the frames offered, the percentage its full queue refused.
        public var droppedPercent: Int
        public var windowSeconds: Double
    }

    public enum Change: Sendable, Equatable {
        /// The first overloaded window after the encoder kept up (or since the stage started).
        case began(Overload)
        /// A window within the limit after overloaded ones.
        case ended
    }

    /// Five seconds, like the drop warnings' interval.
    public static let defaultWindow: UInt64 = 5_000_000_000
    /// More than 10 % of the frames dropped: far beyond a hiccup (a keyframe that took long, a busy
    /// second), which the queue of 8 frames absorbs without a drop.
    public static let dropLimit = 0.10

    public let window: UInt64
    /// The overload now (updated every window while it lasts), nil while the encoder keeps up.
    public private(set) var current: Overload?
    private var windowStart: UInt64?
    private var encodedAtStart = 0
    private var offered = 0
    private var dropped = 0

    public init(window: UInt64 = OverloadWatch.defaultWindow) { self.window = max(window, 1) }

    /// Notes one frame offered at `now` (`dropped`: refused by the full queue); `encoded` is the number of
    /// frames the encoder has taken so far. Returns a change when a window closes with a new verdict.
    public mutating func note(at now: UInt64, dropped wasDropped: Bool, encoded: Int) -> Change? {
        guard let start = windowStart, now >= start else {
            windowStart = now
            encodedAtStart = encoded
            offered = 1
            dropped = wasDropped ? 1 : 0
            return nil
        }
        offered += 1
        if wasDropped { dropped += 1 }
        guard now - start >= window else { return nil }
        let seconds = Double(now - start) / 1e9
        let fraction = Double(dropped) / Double(offered)
        let overload = Overload(measuredFPS: Double(encoded - encodedAtStart) / seconds, offeredFPS: Double(offered) / seconds,
                                droppedPercent: Int((fraction * 100).rounded()), windowSeconds: seconds)
        windowStart = now
        encodedAtStart = encoded
        offered = 0
        dropped = 0
        if fraction > Self.dropLimit {
            defer { current = overload }
            return current == nil ? .began(overload) : nil
        }
        defer { current = nil }
        return current == nil ? nil : .ended
    }
}
