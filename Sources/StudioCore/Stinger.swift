/// When a stinger's pictures and its cut land on the program's ticks. The clip's pictures are mapped to
/// the program by the clock, as a player's are: the transition's frame `i` is program time `i / rate`
/// after its start and shows the clip's newest picture at that time (a 25 fps sting on a 30 fps program
/// shows some pictures twice, a 60 fps one every other picture). It lasts as many program frames as
/// start within the clip's length; A is under the sting on the frames before `cutAt`, B from the first
/// frame at or after it.
public struct StingerTiming: Sendable, Hashable {
    /// Each picture's time from the clip's first (ns), rising.
    public let times: [Int64]
    /// The clip's length (ns): its last picture's time plus a picture's length.
    public let length: Int64
    /// A picture due within this of a tick counts as due at it (container time bases round times by a
    /// few ns either way: a 60 fps picture at 33_333_334 ns belongs to the 30 fps tick at 33_333_333).
    public static let tolerance: Int64 = 500_000

    public init(times: [Int64], length: Int64) {
        self.times = times
        self.length = length
    }

    /// Program time (ns) of the transition's frame `index` at `rate`.
    static func time(ofFrame index: Int, rate: Rational) -> Int64 {
        Int64(index) * 1_000_000_000 * Int64(rate.denominator) / Int64(rate.numerator)
    }

    /// Program frames the transition lasts at `rate`: those that start within the clip (at least one).
    public func frames(rate: Rational) -> Int {
        let period = 1_000_000_000 * Int64(rate.denominator)
        return max(1, Int((length * Int64(rate.numerator) + period - 1) / period))
    }

    /// The clip's picture shown on the transition's frame `index` at `rate`: the newest due by then.
    public func picture(atFrame index: Int, rate: Rational) -> Int {
        let time = Self.time(ofFrame: index, rate: rate) + Self.tolerance
        var low = 0, high = times.count  // the first picture later than `time`
        while low < high {
            let middle = (low + high) / 2
            if times[middle] <= time { low = middle + 1 } else { high = middle }
        }
        return max(0, low - 1)
    }

    /// The first of the transition's frames with B underneath (`frames(rate:)` when none has).
    public func cutFrame(at milliseconds: Int, rate: Rational) -> Int {
        let cut = Int64(milliseconds) * 1_000_000
        let frames = frames(rate: rate)
        return (0..<frames).first { Self.time(ofFrame: $0, rate: rate) + Self.tolerance >= cut } ?? frames
    }
}

/// A stinger's clip decoded ahead (at start and on `studio reload`), whole, at the program's size: each
/// picture I420 with its alpha plane (`width * height` bytes, 0 transparent, 255 opaque; nil for a clip
/// without alpha, which covers the whole picture). About 5 MB a picture at 1080p: a 1 s sting at 30 fps
/// holds 150 MB; `TransitionSpec.maxSeconds` bounds its length and `maximumBytes` its memory. Its sound
/// (nil for a clip without) is decoded with it, at the program's audio format (`AudioFormat.program`,
/// interleaved F32, 384 KB a second), from the first picture's time to the clip's end.
public struct StingerClip: Sendable {
    /// The most a stinger's pictures and sound may hold in memory: 1 GiB (about 6.9 s of 1080p30, 3.4 s
    /// of 1080p60).
    public static let maximumBytes = 1 << 30

    /// What one picture of `width` x `height` holds: I420 and its alpha plane.
    public static func bytes(perPictureOf width: Int, _ height: Int) -> Int {
        VideoFrame.byteCount(format: .i420, width: width, height: height) + width * height
    }

    public struct Picture: Sendable {
        public var frame: VideoFrame
        public var alpha: [UInt8]?
        public init(frame: VideoFrame, alpha: [UInt8]?) {
            self.frame = frame
            self.alpha = alpha
        }
    }

    /// The file, as the transition names it.
    public let path: String
    public let pictures: [Picture]
    public let timing: StingerTiming
    /// Its sound from its first picture's time, interleaved at `AudioFormat.program` (nil: it has none).
    public let sound: [Float]?
    /// Whether its pictures carry alpha (a clip without covers everything while it plays).
    public var hasAlpha: Bool { pictures.contains { $0.alpha != nil } }

    public init(path: String, pictures: [Picture], timing: StingerTiming, sound: [Float]? = nil) {
        precondition(pictures.count == timing.times.count && !pictures.isEmpty, "a picture for each time")
        self.path = path
        self.pictures = pictures
        self.timing = timing
        self.sound = sound
    }

    /// Why `cutAtMilliseconds` is not a cut point of this clip, naming both; nil when it is.
    public func problem(cutAtMilliseconds: Int) -> String? {
        let length = timing.length / 1_000_000
        guard cutAtMilliseconds < 0 || cutAtMilliseconds >= length else { return nil }
        return "cut_at_ms \(cutAtMilliseconds) is outside the stinger \(path), which lasts \(length) ms (give 0 to \(max(0, length - 1)))"
    }
}

/// A stinger's clip that cannot be used, in the operator's words, naming the file.
public struct StingerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
