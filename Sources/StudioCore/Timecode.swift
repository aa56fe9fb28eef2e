/// Program time counted in frames of the program's rate, and written as SMPTE timecode, for the cut lists
/// (`studio export`). Program times are whole milliseconds (`program_ms`, the FLV clock) of frames on the
/// program's grid, `MediaTime(count: n, rate:)` rounded down to the millisecond; the nearest frame is
/// therefore the frame itself (a millisecond is far below half a frame at any rate up to 240 fps).
public struct FrameCount: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var frames: Int64
    public init(_ frames: Int64) { self.frames = frames }

    /// The frame nearest `milliseconds` of program time at `rate` (halves round up).
    public init(milliseconds: Int64, rate: Rational) {
        // frames = ms * num / (den * 1000), rounded to nearest, in 128 bits.
        let denominator = Int64(rate.denominator) * 1000
        let product = milliseconds.multipliedFullWidth(by: Int64(rate.numerator))
        let (quotient, remainder) = denominator.dividingFullWidth(product)
        var frames = quotient
        if remainder * 2 >= denominator { frames += 1 } else if remainder * 2 <= -denominator { frames -= 1 }
        self.frames = frames
    }

    public static func < (a: FrameCount, b: FrameCount) -> Bool { a.frames < b.frames }
    public static func + (a: FrameCount, b: FrameCount) -> FrameCount { FrameCount(a.frames + b.frames) }
    public static func - (a: FrameCount, b: FrameCount) -> FrameCount { FrameCount(a.frames - b.frames) }
    public var description: String { "\(frames) frames" }

    /// The exact time of this frame as a rational number of seconds: frames × den / num.
    public func seconds(at rate: Rational) -> (numerator: Int64, denominator: Int64) {
        (frames * Int64(rate.denominator), Int64(rate.numerator))
    }
}

/// Non-drop-frame timecode (`HH:MM:SS:FF`): frames counted at the rate's nominal whole number of frames
/// per second (30 for 30000/1001, 24 for 24000/1001, 25 for 25), as CMX3600's `FCM: NON-DROP FRAME` and
/// every editor read it. At a fractional rate such timecode runs slower than the wall clock (by 0.1 %),
/// as NDF always does; the frames are exact.
public enum Timecode {
    /// Frames per timecode second: the rate rounded to the nearest whole number (at least 1).
    public static func base(_ rate: Rational) -> Int64 {
        max(1, (Int64(rate.numerator) + Int64(rate.denominator) / 2) / Int64(rate.denominator))
    }

    /// `HH:MM:SS:FF` of `frames` (hours wrap at 24, as a timecode's do).
    public static func text(_ frames: FrameCount, rate: Rational) -> String {
        let base = base(rate)
        let dayFrames = 24 * 3600 * base
        let count = ((frames.frames % dayFrames) + dayFrames) % dayFrames
        let seconds = count / base
        return two(seconds / 3600) + ":" + two((seconds / 60) % 60) + ":" + two(seconds % 60) + ":" + two(count % base)
    }

    /// The frame `HH:MM:SS:FF` names, or nil when it is not a valid timecode at `rate` (minutes and
    /// seconds below 60, frames below the base).
    public static func frames(_ text: String, rate: Rational) -> FrameCount? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let h = Int64(parts[0]), let m = Int64(parts[1]), let s = Int64(parts[2]), let f = Int64(parts[3]),
              h < 24, m < 60, s < 60, f < base(rate) else { return nil }
        return FrameCount(((h * 60 + m) * 60 + s) * base(rate) + f)
    }

    private static func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
