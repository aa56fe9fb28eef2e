import Foundation
import StudioCore
import StudioConfig
import StudioServer

/// The options that ask the history (`studio log`, `studio sessions`, `studio onair`), each declared once,
/// and how their words become the control commands' arguments. Times are read by `HistoryTime` against
/// `now` and `timeZone`, which the caller passes (tests inject them).
public enum HistoryFlags {
    public static let kind = OptionSpec("kind", "KINDS", help: "only these event kinds, comma-separated (switch,camera_lost)")
    public static let camera = OptionSpec("camera", "NAME", help: "only events about this camera (cam2)")
    public static let since = OptionSpec("since", "TIME", help: "wall time from: ISO 8601 (2024-05-01, 2024-05-01T18:03),\ntoday, yesterday, or ago (-30m, -2h, -7d)")
    public static let until = OptionSpec("until", "TIME", help: "wall time before, in the same forms as --since")
    public static let from = OptionSpec("from", "HH:MM:SS", help: "program time from (HH:MM:SS or HH:MM:SS.mmm)")
    public static let to = OptionSpec("to", "HH:MM:SS", help: "program time before, in the same form as --from")
    public static let logLimit = OptionSpec("limit", "N", help: "only the latest N matching events")
    public static let sessionsLimit = OptionSpec("limit", "N", help: "only the latest N sessions")
    public static let ended = OptionSpec("ended", "HOW", help: "only sessions that ended so: \(SessionsArguments.endReasons.joined(separator: ", "))\n(comma-separated)")
    public static let at = OptionSpec("at", "HH:MM:SS", help: "what was on air at this program time (HH:MM:SS[.mmm])")

    /// A wall time in the forms of `HistoryTime.wallTime`, as ms since the epoch.
    public static func wallTime(now: Date, timeZone: TimeZone) -> ValueSyntax<Int64> {
        ValueSyntax("a time") { (text: String) throws(ValueError) -> Int64 in
            do throws(HistoryTimeError) { return Int64((try HistoryTime.wallTime(text, now: now, timeZone: timeZone).timeIntervalSince1970 * 1000).rounded()) } catch {
                throw ValueError(error.message)
            }
        }
    }

    public static let programTime = ValueSyntax<Int64>("a program time") { (text: String) throws(ValueError) -> Int64 in
        do throws(HistoryTimeError) { return try HistoryTime.programMilliseconds(text) } catch { throw ValueError(error.message) }
    }

    /// `studio log`'s words as `log`'s arguments (the session from the positional, already checked).
    public static func log(_ arguments: ParsedArguments, session: Int64?, now: Date, timeZone: TimeZone) throws(UsageError) -> LogArguments {
        let wall = wallTime(now: now, timeZone: timeZone)
        return LogArguments(session: session, kind: arguments.value(kind.name), camera: arguments.value(camera.name),
                            sinceMilliseconds: try arguments.parse(since.name, wall), untilMilliseconds: try arguments.parse(until.name, wall),
                            fromMilliseconds: try arguments.parse(from.name, programTime), toMilliseconds: try arguments.parse(to.name, programTime),
                            limit: try arguments.parse(logLimit.name, .positive("a positive number")))
    }

    public static func sessions(_ arguments: ParsedArguments, now: Date, timeZone: TimeZone) throws(UsageError) -> SessionsArguments {
        let wall = wallTime(now: now, timeZone: timeZone)
        return SessionsArguments(limit: try arguments.parse(sessionsLimit.name, .positive("a positive number")),
                                 sinceMilliseconds: try arguments.parse(since.name, wall), untilMilliseconds: try arguments.parse(until.name, wall),
                                 ended: arguments.value(ended.name))
    }

    public static func onAir(_ arguments: ParsedArguments, session: Int64?) throws(UsageError) -> OnAirArguments {
        OnAirArguments(session: session, atMilliseconds: try arguments.parse(at.name, programTime))
    }
}
