import Foundation

/// A time the operator typed that is not one, with the forms that are accepted.
public struct HistoryTimeError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The times people type when they ask the history (`studio log --since -2h --from 00:41:10`), read in one
/// place: wall times (ISO 8601, `today`, `yesterday`, `-2h`), relative to an injected "now" and time zone,
/// and program times (`HH:MM:SS[.mmm]`, the program's clock from its first frame).
public enum HistoryTime {
    /// What `wallTime` accepts, for its error messages and the commands' help.
    public static let wallTimeForms = "an ISO 8601 date or date-time (2024-05-01, 2024-05-01T18:03, 2024-05-01T18:03:04Z, "
        + "2024-05-01 18:03:04.250+02:00; without an offset: local time), today, yesterday, or a time ago "
        + "(-90s, -30m, -2h, -7d)"

    /// What `programMilliseconds` accepts.
    public static let programTimeForms = "program time as HH:MM:SS or HH:MM:SS.mmm (e.g. 00:41:10 or 1:02:03.250)"

    /// A wall time: `today` and `yesterday` are the start of that day in `timeZone`; `-30m` is 30 minutes
    /// before `now` (units s, m, h, d); a date alone is its midnight in `timeZone`, a date-time without an
    /// offset is in `timeZone`, one with `Z` or `+HH:MM` is in that offset.
    public static func wallTime(_ text: String, now: Date, timeZone: TimeZone) throws(HistoryTimeError) -> Date {
        let word = text.trimmingCharacters(in: .whitespaces).lowercased()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        switch word {
        case "now": return now
        case "today": return calendar.startOfDay(for: now)
        case "yesterday":
            let today = calendar.startOfDay(for: now)
            guard let yesterday = calendar.date(byAdding: .day, value: -1, to: today) else { throw invalidWall(text) }
            return yesterday
        default: break
        }
        if word.hasPrefix("-") {
            let body = word.dropFirst()
            guard let unit = body.last, let amount = Int(body.dropLast()), amount >= 0, amount <= 100_000 else {
                throw invalidWall(text)
            }
            let seconds: Double
            switch unit {
            case "s": seconds = 1
            case "m": seconds = 60
            case "h": seconds = 3600
            case "d": seconds = 86_400
            default: throw invalidWall(text)
            }
            return now.addingTimeInterval(-Double(amount) * seconds)
        }
        return try isoTime(text, calendar: calendar)
    }

    /// `YYYY-MM-DD`, then optionally `T` or a space, `HH:MM`, `:SS`, `.fff`, and `Z` or `±HH:MM` / `±HHMM`.
    private static func isoTime(_ text: String, calendar: Calendar) throws(HistoryTimeError) -> Date {
        var scanner = Digits(Array(text.utf8))
        guard let year = scanner.number(4), scanner.take("-"), let month = scanner.number(2), scanner.take("-"),
              let day = scanner.number(2) else { throw invalidWall(text) }
        var components = DateComponents(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
        var milliseconds = 0
        var offsetSeconds: Int?
        if !scanner.atEnd {
            guard scanner.take("T") || scanner.take("t") || scanner.take(" "),
                  let hour = scanner.number(2), scanner.take(":"), let minute = scanner.number(2) else { throw invalidWall(text) }
            components.hour = hour
            components.minute = minute
            if scanner.take(":") {
                guard let second = scanner.number(2) else { throw invalidWall(text) }
                components.second = second
                if scanner.take(".") {
                    guard let (fraction, digits) = scanner.fraction() else { throw invalidWall(text) }
                    milliseconds = Int((Double(fraction) / pow(10, Double(digits)) * 1000).rounded(.down))
                }
            }
            if scanner.take("Z") || scanner.take("z") {
                offsetSeconds = 0
            } else if let sign = scanner.sign() {
                var hours: Int?, minutes: Int?
                var compact = scanner
                if let hhmm = compact.number(4) {  // +HHMM
                    scanner = compact
                    (hours, minutes) = (hhmm / 100, hhmm % 100)
                } else if let hh = scanner.number(2), scanner.take(":") {  // +HH:MM
                    (hours, minutes) = (hh, scanner.number(2))
                }
                guard let hours, let minutes, hours <= 23, minutes <= 59 else { throw invalidWall(text) }
                offsetSeconds = sign * (hours * 3600 + minutes * 60)
            }
        }
        guard scanner.atEnd else { throw invalidWall(text) }
        var zoned = calendar
        if let offsetSeconds, let zone = TimeZone(secondsFromGMT: offsetSeconds) { zoned.timeZone = zone }
        // Reject what the calendar would roll over (2024-02-30, 25:00) rather than answer another day.
        guard let hour = components.hour, let minute = components.minute, let second = components.second,
              (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second),
              let date = zoned.date(from: components),
              zoned.component(.day, from: date) == day, zoned.component(.month, from: date) == month else {
            throw HistoryTimeError("no such date or time of day; expected \(wallTimeForms)")
        }
        // Whole milliseconds, exactly as the store keeps times.
        return Date(timeIntervalSince1970: Double(Int64(date.timeIntervalSince1970.rounded()) * 1000 + Int64(milliseconds)) / 1000)
    }

    private static func invalidWall(_ text: String) -> HistoryTimeError {
        HistoryTimeError("expected \(wallTimeForms)\(text.isEmpty ? ", got nothing" : "")")
    }

    /// What `durationMilliseconds` accepts.
    public static let durationForms = "a whole number and a unit: s, m, h, d or w (e.g. 90d, 12h, 30m, 2w)"

    /// A length of time (`studio prune --older-than 90d`) in milliseconds: a positive whole number and a unit
    /// (`s`, `m`, `h`, `d`, `w`), up to 100 years.
    public static func durationMilliseconds(_ text: String) throws(HistoryTimeError) -> Int64 {
        let word = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [Character: Int64] = ["s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000]
        let digits = word.dropLast()
        guard let unit = word.last, let size = units[unit], !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw HistoryTimeError("expected \(durationForms)\(text.isEmpty ? ", got nothing" : ", got \"\(text)\"")")
        }
        // Too many digits for a number is too long a time, not a malformed one: say which.
        let limit = 100 * 365 * 86_400_000 / size
        guard let amount = Int64(digits), amount <= limit else {
            throw HistoryTimeError("\"\(text)\" is longer than 100 years (at most \(limit)\(unit))")
        }
        guard amount > 0 else { throw HistoryTimeError("expected a length of time above zero, got \"\(text)\"") }
        return amount * size
    }

    /// Program time in milliseconds from `H:MM:SS` or `HH:MM:SS.mmm` (hours of any length, minutes and
    /// seconds below 60, up to three fraction digits).
    public static func programMilliseconds(_ text: String) throws(HistoryTimeError) -> Int64 {
        let invalid = HistoryTimeError("expected \(programTimeForms)\(text.isEmpty ? ", got nothing" : "")")
        var scanner = Digits(Array(text.utf8))
        guard let hours = scanner.number(1...6), scanner.take(":"), let minutes = scanner.number(2), scanner.take(":"),
              let seconds = scanner.number(2), minutes < 60, seconds < 60 else { throw invalid }
        var milliseconds = 0
        if scanner.take(".") {
            guard let (fraction, digits) = scanner.fraction(), digits <= 3 else { throw invalid }
            milliseconds = fraction * [1, 100, 10, 1][digits]
        }
        guard scanner.atEnd else { throw invalid }
        return Int64(((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds)
    }

    /// `HH:MM:SS.mmm` (hours grow past 99 when they must); negative times get a `-`.
    public static func programText(_ milliseconds: Int64) -> String {
        let magnitude = milliseconds.magnitude
        let seconds = magnitude / 1000
        let text = String(format: "%02llu:%02llu:%02llu.%03llu", seconds / 3600, (seconds / 60) % 60, seconds % 60, magnitude % 1000)
        return milliseconds < 0 ? "-" + text : text
    }
}

/// Reads ASCII digits and punctuation off the front of a time.
private struct Digits {
    private let bytes: [UInt8]
    private var index = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func take(_ character: Character) -> Bool {
        guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
        index += 1
        return true
    }

    /// Exactly `count` digits.
    mutating func number(_ count: Int) -> Int? { number(count...count) }

    /// Between `counts.lowerBound` and `counts.upperBound` digits (as many as there are).
    mutating func number(_ counts: ClosedRange<Int>) -> Int? {
        var value = 0, taken = 0
        while index < bytes.count, taken < counts.upperBound, (48...57).contains(bytes[index]) {
            value = value * 10 + Int(bytes[index] - 48)
            index += 1
            taken += 1
        }
        if index < bytes.count, (48...57).contains(bytes[index]) { return nil }  // more digits than allowed
        return counts.contains(taken) ? value : nil
    }

    /// One or more digits after a decimal point: their value and how many there were (at most 9).
    mutating func fraction() -> (Int, Int)? {
        let start = index
        guard let value = number(1...9) else { return nil }
        return (value, index - start)
    }

    /// `+` (1) or `-` (-1).
    mutating func sign() -> Int? {
        if take("+") { return 1 }
        if take("-") { return -1 }
        return nil
    }
}
