import Foundation
import Testing
import StudioCore

/// The times an operator types to ask the history, read against an injected "now" and time zone.
@Suite struct HistoryTimeTests {
    /// 2026-03-29 14:30:15.250 in Berlin: the day Europe moves its clocks forward (02:00 -> 03:00), so
    /// "today" is 23 hours long and "yesterday" starts at +01:00.
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let now = Date(timeIntervalSince1970: 1_774_787_415.25)  // 2026-03-29T12:30:15.250Z

    static func utc(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)!
    }

    @Test func theFixedNowIsWhatItSays() {
        #expect(Self.now == Self.utc("2026-03-29T12:30:15.250Z"))
    }

    @Test func wordsAndRelativeTimesCountFromNowInTheTimeZone() throws {
        func read(_ text: String, _ zone: TimeZone = HistoryTimeTests.berlin) throws -> Date { try HistoryTime.wallTime(text, now: Self.now, timeZone: zone) }
        #expect(try read("now") == Self.now)
        #expect(try read("today") == Self.utc("2026-03-28T23:00:00.000Z"), "Berlin midnight before the change is +01:00")
        #expect(try read("Yesterday") == Self.utc("2026-03-27T23:00:00.000Z"))
        #expect(try read("today", TimeZone(identifier: "UTC")!) == Self.utc("2026-03-29T00:00:00.000Z"))
        #expect(try read("today", TimeZone(identifier: "America/Los_Angeles")!) == Self.utc("2026-03-29T07:00:00.000Z"))
        #expect(try read("-2h") == Self.now.addingTimeInterval(-7200))
        #expect(try read("-30m") == Self.now.addingTimeInterval(-1800))
        #expect(try read("-7d") == Self.now.addingTimeInterval(-7 * 86_400))
        #expect(try read("-90s") == Self.now.addingTimeInterval(-90))
        #expect(try read("-0h") == Self.now)
    }

    @Test func isoDatesAndTimesWithAndWithoutAnOffset() throws {
        func read(_ text: String) throws -> Date {
            do { return try HistoryTime.wallTime(text, now: Self.now, timeZone: Self.berlin) } catch {
                Issue.record("\(text): \(error)")
                throw error
            }
        }
        #expect(try read("2024-05-01") == Self.utc("2024-04-30T22:00:00.000Z"), "a date alone: local midnight (+02:00 in May)")
        #expect(try read("2024-05-01T18:03") == Self.utc("2024-05-01T16:03:00.000Z"))
        #expect(try read("2024-05-01 18:03:04") == Self.utc("2024-05-01T16:03:04.000Z"))
        #expect(try read("2024-05-01T18:03:04Z") == Self.utc("2024-05-01T18:03:04.000Z"))
        #expect(try read("2024-05-01T18:03:04.123Z") == Self.utc("2024-05-01T18:03:04.123Z"))
        #expect(try read("2024-05-01T18:03:04.5+02:00") == Self.utc("2024-05-01T16:03:04.500Z"))
        #expect(try read("2024-05-01T18:03:04-0130") == Self.utc("2024-05-01T19:33:04.000Z"))
        #expect(try read("2024-01-15T08:00") == Self.utc("2024-01-15T07:00:00.000Z"), "winter: +01:00")
        #expect(try read("2024-02-29") == Self.utc("2024-02-28T23:00:00.000Z"), "a leap day")
    }

    @Test func malformedWallTimesSayTheAcceptedForms() {
        for text in ["", "tomorrow", "-2", "-2y", "-h", "2024-5-1", "2024-05-01T18", "2024-05-01T18:03:04+2", "24-05-01",
                     "2024-05-01T18:03:04ZZ", "2024-05-01T18:03:04.", "1714586584"] {
            #expect(throws: HistoryTimeError.self, "\(text)") { try HistoryTime.wallTime(text, now: Self.now, timeZone: Self.berlin) }
            do { _ = try HistoryTime.wallTime(text, now: Self.now, timeZone: Self.berlin) } catch {
                #expect(error.message.contains("ISO 8601") && error.message.contains("yesterday") && error.message.contains("-2h"), "\(error)")
            }
        }
        for text in ["2023-02-29", "2024-13-01", "2024-04-31", "2024-05-01T24:00", "2024-05-01T18:60", "2024-05-01T18:03:61"] {
            do {
                _ = try HistoryTime.wallTime(text, now: Self.now, timeZone: Self.berlin)
                Issue.record("\(text) was read as a time")
            } catch {
                #expect(error.message.hasPrefix("no such date or time of day"), "\(text): \(error)")
            }
        }
    }

    @Test func programTimesReadAndWriteHoursMinutesSecondsAndMilliseconds() throws {
        #expect(try HistoryTime.programMilliseconds("00:41:10") == 2_470_000)
        #expect(try HistoryTime.programMilliseconds("00:41:10.5") == 2_470_500)
        #expect(try HistoryTime.programMilliseconds("00:41:10.05") == 2_470_050)
        #expect(try HistoryTime.programMilliseconds("1:02:03.250") == 3_723_250)
        #expect(try HistoryTime.programMilliseconds("100:00:00") == 360_000_000)
        for text in ["", "41:10", "00:60:00", "00:00:60", "00:00:00.1234", "00:00:00.", "a:00:00", "-00:00:01", "00:00:01 "] {
            do {
                _ = try HistoryTime.programMilliseconds(text)
                Issue.record("\(text) was read as a program time")
            } catch {
                #expect(error.message.contains("HH:MM:SS"), "\(text): \(error)")
            }
        }
        #expect(HistoryTime.programText(2_470_050) == "00:41:10.050")
        #expect(HistoryTime.programText(0) == "00:00:00.000")
        #expect(HistoryTime.programText(360_000_001) == "100:00:00.001")
        #expect(HistoryTime.programText(-1500) == "-00:00:01.500")
        for ms: Int64 in [0, 1, 999, 1000, 59_999, 3_599_999, 3_600_000, 86_399_999, 360_000_000] {
            #expect(try HistoryTime.programMilliseconds(HistoryTime.programText(ms)) == ms)
        }
    }

    /// `--older-than`: an age too long for a number says it is too long, not that it is no whole number.
    @Test func anAgeTooLongSaysSo() throws {
        #expect(try HistoryTime.durationMilliseconds("90d") == 90 * 86_400_000)
        #expect(try HistoryTime.durationMilliseconds("36500d") == 36_500 * 86_400_000)
        func message(_ text: String) -> String {
            do { _ = try HistoryTime.durationMilliseconds(text); return "" } catch { return error.message }
        }
        #expect(message("99999999999d") == "\"99999999999d\" is longer than 100 years (at most 36500d)")
        #expect(message("36501d") == "\"36501d\" is longer than 100 years (at most 36500d)")
        #expect(message("0d") == "expected a length of time above zero, got \"0d\"")
        #expect(message("1e3d").hasPrefix("expected a whole number and a unit"))
        #expect(message("-5d").hasPrefix("expected a whole number and a unit"))
    }
}
