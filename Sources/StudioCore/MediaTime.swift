/// A point on the program timeline, in microseconds since the program's first frame.
/// Video and audio both derive their timestamps from one monotonic clock through this type,
/// so they cannot drift apart. FLV timestamps are `milliseconds`.
public struct MediaTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var microseconds: Int64
    public init(microseconds: Int64) { self.microseconds = microseconds }
    public static let zero = MediaTime(microseconds: 0)

    public static func milliseconds(_ ms: Int64) -> MediaTime { MediaTime(microseconds: ms * 1000) }
    public static func seconds(_ s: Double) -> MediaTime { MediaTime(microseconds: Int64((s * 1_000_000).rounded())) }

    /// Rounded down, as FLV does.
    public var milliseconds: Int64 { microseconds >= 0 ? microseconds / 1000 : -((-microseconds + 999) / 1000) }
    public var seconds: Double { Double(microseconds) / 1_000_000 }

    /// The time of `count` units of `1/rate` seconds, computed from the count so no error accumulates.
    public init(count: Int64, rate: Rational) {
        // count * den / num seconds, in microseconds, rounded to nearest; the product is taken in 128
        // bits so that no frame or sample count of a show that runs for weeks can overflow it.
        let denominator = Int64(rate.numerator)
        let product = count.multipliedFullWidth(by: Int64(rate.denominator) * 1_000_000)
        let rounded = product.low.addingReportingOverflow(UInt64(denominator / 2))
        let high = product.high + (rounded.overflow ? 1 : 0)
        microseconds = denominator.dividingFullWidth((high: high, low: rounded.partialValue)).quotient
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool { lhs.microseconds < rhs.microseconds }
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime { MediaTime(microseconds: lhs.microseconds + rhs.microseconds) }
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime { MediaTime(microseconds: lhs.microseconds - rhs.microseconds) }
    public var description: String { "\(milliseconds)ms" }
}

/// A positive rational number, such as a frame rate (30/1, 30000/1001).
public struct Rational: Hashable, Sendable, Codable, CustomStringConvertible {
    public var numerator: Int32
    public var denominator: Int32
    public init(_ numerator: Int32, _ denominator: Int32 = 1) {
        self.numerator = numerator
        self.denominator = denominator
    }
    public var doubleValue: Double { Double(numerator) / Double(denominator) }
    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }
    /// Length of one period in nanoseconds (for a frame rate: the frame interval).
    public var periodNanoseconds: UInt64 { UInt64(denominator) * 1_000_000_000 / UInt64(numerator) }
}
