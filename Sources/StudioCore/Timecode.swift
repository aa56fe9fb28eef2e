import Foundation

/// Program time counted in frames of the program's rate, and written as SMPTE timecode, for the cut lists
/// (`studio export`). Program times are whole milliseconds (`program_ms`, the FLV clock) of frames on the
/// program's grid, `MediaTime(count: n, rate:)` rounded down to the millisecond; the nearest frame is
/// therefore the frame itself (a millisecond is far below half a frame at any rate up to 240 fps).
public struct FrameCount: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var frames: Int64
    public init(_ frames: Int64) { self.frames = frames }

    /// The frame nearest `milliseconds` of program time at `rate` (halves round up).
    public init(milliseconds: Int64, rate: Rational) { self.init(milliseconds, perSecond: 1000, rate: rate) }

    /// The frame nearest `microseconds` at `rate` (a wall-clock difference: where a node's file sits).
    public init(microseconds: Int64, rate: Rational) { self.init(microseconds, perSecond: 1_000_000, rate: rate) }

    private init(_ units: Int64, perSecond: Int64, rate: Rational) {
        // frames = units * num / (den * perSecond), rounded to nearest, in 128 bits.
        let denominator = Int64(rate.denominator) * perSecond
        let product = units.multipliedFullWidth(by: Int64(rate.numerator))
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

    /// Whether SMPTE counts `rate` in drop-frame timecode: 30000/1001 and 60000/1001 (frame numbers 0 and 1,
    /// or 0 to 3, skipped each minute but every tenth, so the timecode keeps to the wall clock).
    public static func isDropFrame(_ rate: Rational) -> Bool {
        rate.denominator == 1001 && (rate.numerator == 30000 || rate.numerator == 60000)
    }

    /// SMPTE timecode of `frames` (counted at the real `rate` from midnight, say) as ffmpeg's `-timecode`
    /// writes it: `HH:MM:SS;FF` in drop-frame for a drop-frame rate, else `HH:MM:SS:FF` (`text`).
    public static func smpte(_ frames: FrameCount, rate: Rational) -> String {
        guard isDropFrame(rate) else { return text(frames, rate: rate) }
        let base = base(rate), dropped = base / 15  // 2 at 29.97, 4 at 59.94
        let perTenMinutes = base * 600 - 9 * dropped, perMinute = base * 60 - dropped
        let dayFrames = 24 * 6 * perTenMinutes
        var count = ((frames.frames % dayFrames) + dayFrames) % dayFrames
        let tens = count / perTenMinutes, rest = count % perTenMinutes
        count += 9 * dropped * tens + (rest > dropped ? dropped * ((rest - dropped) / perMinute) : 0)
        let seconds = count / base
        return two(seconds / 3600) + ":" + two((seconds / 60) % 60) + ":" + two(seconds % 60) + ";" + two(count % base)
    }

    /// The frame (at `rate`, nearest) of wall-clock time `microseconds` (since 1970) counted from that
    /// day's midnight in `timeZone`: a time-of-day timecode (`export --time-of-day`, an ISO file's `TIMECODE`).
    public static func frameOfDay(microseconds: Int64, rate: Rational, timeZone: TimeZone) -> FrameCount {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let date = Date(timeIntervalSince1970: Double(microseconds) / 1e6)
        let midnight = Int64((calendar.startOfDay(for: date).timeIntervalSince1970 * 1000).rounded()) * 1000
        return FrameCount(microseconds: microseconds - midnight, rate: rate)
    }

    private static func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
