import Foundation
import StudioCore
import StudioConfig
import StudioViews

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
    public static let afterID = OptionSpec("after-id", "ID", help: "only events after this event id (an `id` of --json):\nto go on from where an earlier look stopped")
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
                            limit: try arguments.parse(logLimit.name, .positive("a positive number")),
                            afterID: try arguments.parse(afterID.name, .positive("an event id (a positive number)")).map(Int64.init))
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

/// `studio report` and `studio prune`'s options, declared once.
extension HistoryFlags {
    public static let svg = OptionSpec("svg", "PATH", help: "also draw the session's timeline as an SVG picture to PATH")
    public static let png = OptionSpec("png", "PATH", help: "the same picture as PNG (needs rsvg-convert, from librsvg2-bin)")
    public static let olderThan = OptionSpec("older-than", "AGE", help: "remove the sessions that ended longer ago than AGE\n(90d, 12h, 2w; units s, m, h, d, w)")
    public static let recordings = OptionSpec("recordings", help: "also delete their recording files (those the database lists,\ninside the recording directory)")
    public static let dryRun = OptionSpec("dry-run", help: "only say what would be removed")

    public static let duration = ValueSyntax<Int64>("an age") { (text: String) throws(ValueError) -> Int64 in
        do throws(HistoryTimeError) { return try HistoryTime.durationMilliseconds(text) } catch { throw ValueError(error.message) }
    }

    /// `studio prune`'s words as `prune`'s arguments; `--older-than` is required.
    public static func prune(_ arguments: ParsedArguments) throws(UsageError) -> PruneArguments {
        guard let age = try arguments.parse(olderThan.name, duration) else {
            throw UsageError("studio prune: --older-than AGE is required (e.g. `studio prune --older-than 90d`)")
        }
        return PruneArguments(olderThanMilliseconds: age, recordings: arguments.flag(recordings.name) ? true : nil,
                              dryRun: arguments.flag(dryRun.name) ? true : nil)
    }
}
