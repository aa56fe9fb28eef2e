import Foundation
import StudioCore
import EventStore
import Control

// Asking the history: `log` with filters, `sessions` with filters, `onair`. The server's commands and the
// CLI's offline path (no server running) answer through the same functions here, so the checks, the
// messages and the replies are the same whichever answered. Bad input is a ControlError:
// `invalid_argument` (a kind, a time, a range), `unknown_camera`, `not_found` (a session); the CLI prints
// those as usage errors.

/// `log`'s arguments. Times are integers: wall times in ms since the Unix epoch, program times in ms.
public struct LogArguments: Codable, Sendable, Equatable {
    public var session: Int64?
    /// Comma-separated event kinds (`switch,camera_lost`).
    public var kind: String?
    public var camera: String?
    public var sinceMilliseconds: Int64?
    public var untilMilliseconds: Int64?
    public var fromMilliseconds: Int64?
    public var toMilliseconds: Int64?
    public var limit: Int?
    /// Paging: the events with an id above this one (`next_after_id` of the page before; 0 or absent: from the first).
    public var afterID: Int64?
    /// Paging: at most this many events in the reply (`defaultPageSize` when absent, at most `maxPageSize`).
    public var pageSize: Int?

    /// A reply's events when `page_size` is not given, and the most one may ask for: a reply, and the server's
    /// memory for it, stays bounded whatever the session's size.
    public static let defaultPageSize = 1000
    public static let maxPageSize = 10_000

    public init(session: Int64? = nil, kind: String? = nil, camera: String? = nil, sinceMilliseconds: Int64? = nil,
                untilMilliseconds: Int64? = nil, fromMilliseconds: Int64? = nil, toMilliseconds: Int64? = nil, limit: Int? = nil,
                afterID: Int64? = nil, pageSize: Int? = nil) {
        self.session = session
        self.kind = kind
        self.camera = camera
        self.sinceMilliseconds = sinceMilliseconds
        self.untilMilliseconds = untilMilliseconds
        self.fromMilliseconds = fromMilliseconds
        self.toMilliseconds = toMilliseconds
        self.limit = limit
        self.afterID = afterID
        self.pageSize = pageSize
    }

    enum CodingKeys: String, CodingKey {
        case session, kind, camera, limit
        case afterID = "after_id"
        case pageSize = "page_size"
        case sinceMilliseconds = "since_ms"
        case untilMilliseconds = "until_ms"
        case fromMilliseconds = "from_ms"
        case toMilliseconds = "to_ms"
    }

    /// Any filter given: then, without a session, every session is searched. (`after_id` and `page_size` choose a
    /// page of the answer, not the answer: a client paging on asks about the same events as for the first page.)
    public var filters: Bool {
        kind != nil || camera != nil || sinceMilliseconds != nil || untilMilliseconds != nil || fromMilliseconds != nil
            || toMilliseconds != nil || limit != nil
    }
}

/// `sessions`' arguments.
public struct SessionsArguments: Codable, Sendable, Equatable {
    public var limit: Int?
    public var sinceMilliseconds: Int64?
    public var untilMilliseconds: Int64?
    /// Comma-separated end reasons (`crashed,error`).
    public var ended: String?

    public init(limit: Int? = nil, sinceMilliseconds: Int64? = nil, untilMilliseconds: Int64? = nil, ended: String? = nil) {
        self.limit = limit
        self.sinceMilliseconds = sinceMilliseconds
        self.untilMilliseconds = untilMilliseconds
        self.ended = ended
    }

    enum CodingKeys: String, CodingKey {
        case limit, ended
        case sinceMilliseconds = "since_ms"
        case untilMilliseconds = "until_ms"
    }

    /// The end reasons `--ended` takes (docs/schema.md, `sessions.end_reason`).
    public static let endReasons = ["stopped", "crashed", "error"]
}

/// `onair`'s arguments.
public struct OnAirArguments: Codable, Sendable, Equatable {
    public var session: Int64?
    /// One moment of program time: what was on air then.
    public var atMilliseconds: Int64?

    public init(session: Int64? = nil, atMilliseconds: Int64? = nil) {
        self.session = session
        self.atMilliseconds = atMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case session
        case atMilliseconds = "at_ms"
    }
}

public enum History {
    /// `log`: the session's events (`defaultSession`, else the open or latest one, when none is named and no
    /// filter is given), or, with filters and no session, the matching events of every session.
    /// One page of them: the first `page_size` after `after_id`, and `next_after_id` to ask for the next (nil when
    /// this page ends the log).
    public static func log(_ arguments: LogArguments, store: EventStore, defaultSession: Int64?) throws -> LogReply {
        var (session, query) = try logQuery(arguments, store: store, defaultSession: defaultSession)
        let pageSize = arguments.pageSize ?? LogArguments.defaultPageSize
        guard (1...LogArguments.maxPageSize).contains(pageSize) else {
            throw ControlError(.invalidArgument, "\"page_size\" must be 1 to \(LogArguments.maxPageSize) events a reply, got \(pageSize)")
        }
        // One more than the page: whether another page follows, without a second query.
        query.pageSize = pageSize + 1
        var events = try store.events(matching: query)
        let more = events.count > pageSize
        if more { events.removeLast() }
        return LogReply(session: session.map(SessionView.init), events: events.map(EventView.init),
                        nextAfterID: more ? events.last?.id : nil)
    }

    /// `log` read row by row: `session` once (nil when every session is searched), then `event` for each match
    /// in order, on the store's thread, as SQLite steps: a huge session is never held in memory.
    public static func streamLog(_ arguments: LogArguments, store: EventStore, defaultSession: Int64?,
                                 session: (SessionView?) throws -> Void, event: @escaping @Sendable (EventView) throws -> Void) throws {
        let (record, query) = try logQuery(arguments, store: store, defaultSession: defaultSession)
        try session(record.map(SessionView.init))
        try store.forEachEvent(matching: query) { try event(EventView($0)) }
    }

    /// The session `log` is about (nil: every session) and its query, the arguments checked.
    static func logQuery(_ arguments: LogArguments, store: EventStore, defaultSession: Int64?) throws -> (SessionRecord?, EventQuery) {
        try requirePositive(arguments.limit, "limit", "events")
        if let after = arguments.afterID, after < 0 {
            throw ControlError(.invalidArgument, "\"after_id\" must be an event id (0 or more: the `next_after_id` of the page before), got \(after)")
        }
        var query = EventQuery(limit: arguments.limit, afterID: arguments.afterID)
        if let kinds = arguments.kind { query.kinds = try knownKinds(kinds, store: store) }
        if let camera = arguments.camera {
            guard try store.knowsCamera(CameraID(camera)) else {
                let known = try store.cameraNamesInHistory()
                throw ControlError(.unknownCamera, "no camera \(camera) in the history; "
                    + (known.isEmpty ? "it has no cameras yet" : "it knows \(known.map(\.name).joined(separator: ", "))"))
            }
            query.camera = CameraID(camera)
        }
        query.since = try wallTime(arguments.sinceMilliseconds, "since_ms")
        query.until = try wallTime(arguments.untilMilliseconds, "until_ms")
        try requireOrder(arguments.sinceMilliseconds, arguments.untilMilliseconds, "since", "until", text: wallText)
        query.fromProgramMilliseconds = arguments.fromMilliseconds
        query.toProgramMilliseconds = arguments.toMilliseconds
        try requireOrder(arguments.fromMilliseconds, arguments.toMilliseconds, "from", "to", text: HistoryTime.programText)
        if arguments.session == nil && arguments.filters { return (nil, query) }
        let session = try session(arguments.session, store: store, defaultSession: defaultSession)
        query.sessionID = session.id
        return (session, query)
    }

    /// `sessions`, newest first.
    public static func sessions(_ arguments: SessionsArguments, store: EventStore) throws -> SessionsReply {
        try requirePositive(arguments.limit, "limit", "sessions")
        var query = SessionQuery(limit: arguments.limit)
        query.since = try wallTime(arguments.sinceMilliseconds, "since_ms")
        query.until = try wallTime(arguments.untilMilliseconds, "until_ms")
        try requireOrder(arguments.sinceMilliseconds, arguments.untilMilliseconds, "since", "until", text: wallText)
        if let ended = arguments.ended {
            query.endReasons = try words(ended).map { reason in
                guard SessionsArguments.endReasons.contains(reason) else {
                    throw ControlError(.invalidArgument, "\"ended\": \(reason) is no way a session ends; "
                        + "expected \(SessionsArguments.endReasons.joined(separator: ", "))")
                }
                return reason
            }
        }
        return SessionsReply(try store.sessions(matching: query))
    }

    /// `onair`: the session's program timeline with each source's total, and with `at`, what was on air then.
    public static func onAir(_ arguments: OnAirArguments, store: EventStore, defaultSession: Int64?) throws -> OnAirReply {
        let session = try session(arguments.session, store: store, defaultSession: defaultSession)
        // The span and the totals from the intervals read once (an open session's end is "now", which
        // moves between two reads).
        let intervals = try store.programIntervals(sessionID: session.id)
        let span = intervals.first.flatMap { first in intervals.last.map { (first.fromMilliseconds, $0.toMilliseconds) } }
        let duration = span.map { $0.1 - $0.0 } ?? 0
        var totals: [String: OnAirReply.Total] = [:]
        for interval in intervals {
            totals[interval.source, default: OnAirReply.Total(source: interval.source, sourceKind: interval.sourceKind,
                                                              onAirMilliseconds: 0, share: 0, intervals: 0)].add(interval, of: duration)
        }
        var moment: OnAirReply.Moment?
        if let at = arguments.atMilliseconds {
            guard let span else {
                throw ControlError(.notFound, "nothing was on program in session \(session.id), so nothing was on air at "
                    + HistoryTime.programText(at))
            }
            // The last interval holds its end too (the session's last frame).
            guard let interval = intervals.first(where: { $0.fromMilliseconds <= at && at < $0.toMilliseconds })
                ?? intervals.last.flatMap({ at == $0.toMilliseconds ? $0 : nil }) else {
                throw ControlError(.invalidArgument, "\(HistoryTime.programText(at)) is outside session \(session.id)'s program, "
                    + "which ran from \(HistoryTime.programText(span.0)) to \(HistoryTime.programText(span.1))")
            }
            moment = OnAirReply.Moment(atMilliseconds: at, interval: OnAirReply.Interval(interval))
        }
        return OnAirReply(session: SessionView(session), programFromMilliseconds: span?.0, programToMilliseconds: span?.1,
                          programMilliseconds: duration, intervals: intervals.map(OnAirReply.Interval.init),
                          totals: totals.values.sorted { ($0.onAirMilliseconds, $1.source) > ($1.onAirMilliseconds, $0.source) }, at: moment)
    }

    /// Session `id`, or `defaultSession`, or the open or latest one; `not_found` saying which sessions exist.
    public static func session(_ id: Int64?, store: EventStore, defaultSession: Int64?) throws -> SessionRecord {
        if let id, id < 1 {
            throw ControlError(.invalidArgument, "\"session\" must be a positive session id (see `studio sessions`), got \(id)")
        }
        if let record = try store.session(id: id ?? defaultSession) { return record }
        let extent = try store.historyExtent()
        guard let oldest = extent.oldestSessionID, let newest = extent.newestSessionID else {
            throw ControlError(.notFound, "the database has no sessions yet")
        }
        let started = extent.newestStartedAt.map { ", started \(ISO8601Time.format($0))" } ?? ""
        let which = oldest == newest ? "only session \(newest)\(started)" : "sessions \(oldest) to \(newest) (the newest, \(newest)\(started))"
        throw ControlError(.notFound, "no session \(id.map(String.init) ?? "") in the database: it has \(which); see `studio sessions`")
    }

    /// The kinds named in `text`, each one this binary knows or one stored by another; `invalid_argument`
    /// listing the known kinds otherwise.
    static func knownKinds(_ text: String, store: EventStore) throws -> [EventKind] {
        let known = Set(EventKind.all.map(\.rawValue))
        return try words(text).map { word in
            let kind = EventKind(rawValue: word)
            if known.contains(word) { return kind }
            if try store.hasEvents(ofKind: kind) { return kind }
            throw ControlError(.invalidArgument, "no event kind \(word); the kinds are "
                + EventKind.all.map(\.rawValue).joined(separator: ", "))
        }
    }

    /// `a,b, c` -> [a, b, c]; an empty list is refused.
    static func words(_ text: String) throws -> [String] {
        let words = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !words.isEmpty else { throw ControlError(.invalidArgument, "expected one or more comma-separated names, got \"\(text)\"") }
        return words
    }

    static func requirePositive(_ value: Int?, _ name: String, _ what: String) throws {
        // SQLite reads a negative LIMIT as "no limit": refuse rather than answer something else.
        if let value, value < 1 { throw ControlError(.invalidArgument, "\"\(name)\" must be a positive number of \(what), got \(value)") }
    }

    static func requireOrder(_ start: Int64?, _ end: Int64?, _ startName: String, _ endName: String,
                             text: (Int64) -> String) throws {
        if let start, let end, end <= start {
            throw ControlError(.invalidArgument, "\"\(endName)\" (\(text(end))) must be after \"\(startName)\" (\(text(start)))")
        }
    }

    /// The years a wall-clock bound may name (the store keeps milliseconds since 1970 as integers).
    static let wallMilliseconds: ClosedRange<Int64> = 0...253_402_300_799_999  // 1970-01-01 to 9999-12-31

    /// A wall-clock bound in milliseconds since 1970 as a date, refused outside `wallMilliseconds`.
    static func wallTime(_ milliseconds: Int64?, _ name: String) throws -> Date? {
        guard let milliseconds else { return nil }
        guard wallMilliseconds.contains(milliseconds) else {
            throw ControlError(.invalidArgument, "\"\(name)\" must be a time from 1970 to 9999 in milliseconds since 1970, got \(milliseconds)")
        }
        return Date(unixMilliseconds: milliseconds)
    }

    static func wallText(_ milliseconds: Int64) -> String { ISO8601Time.format(Date(unixMilliseconds: milliseconds)) }
}

extension Date {
    init(unixMilliseconds: Int64) { self.init(timeIntervalSince1970: Double(unixMilliseconds) / 1000) }
}

/// `onair`: the program's intervals in order, each source's total and share, and the moment asked for.
public struct OnAirReply: Codable, Sendable {
    public var session: SessionView
    /// The program's span (null when nothing was ever on program).
    @Nullable public var programFromMilliseconds: Int64?
    @Nullable public var programToMilliseconds: Int64?
    public var programMilliseconds: Int64
    public var intervals: [Interval]
    public var totals: [Total]
    /// With `at_ms`: what was on air then; else null.
    @Nullable public var at: Moment?

    public struct Interval: Codable, Sendable, Equatable {
        public var source: String
        public var sourceKind: String
        @Nullable public var camera: String?
        public var fromMilliseconds: Int64
        public var toMilliseconds: Int64
        public var durationMilliseconds: Int64
        @Nullable public var endedBy: String?
        @Nullable public var via: String?
        @Nullable public var transitionFromMilliseconds: Int64?

        init(_ interval: ProgramInterval) {
            source = interval.source
            sourceKind = interval.sourceKind
            camera = interval.camera?.name
            fromMilliseconds = interval.fromMilliseconds
            toMilliseconds = interval.toMilliseconds
            durationMilliseconds = interval.durationMilliseconds
            endedBy = interval.endedBy
            via = interval.via
            transitionFromMilliseconds = interval.transitionFromMilliseconds
        }

        enum CodingKeys: String, CodingKey {
            case source, camera, via
            case sourceKind = "source_kind"
            case fromMilliseconds = "from_ms"
            case toMilliseconds = "to_ms"
            case durationMilliseconds = "duration_ms"
            case endedBy = "ended_by"
            case transitionFromMilliseconds = "transition_from_ms"
        }
    }

    public struct Total: Codable, Sendable, Equatable {
        public var source: String
        public var sourceKind: String
        public var onAirMilliseconds: Int64
        /// Of the session's program time, 0 to 1.
        public var share: Double
        public var intervals: Int

        mutating func add(_ interval: ProgramInterval, of programMilliseconds: Int64) {
            onAirMilliseconds += interval.durationMilliseconds
            intervals += 1
            share = programMilliseconds > 0 ? Double(onAirMilliseconds) / Double(programMilliseconds) : 0
        }

        enum CodingKeys: String, CodingKey {
            case source, share, intervals
            case sourceKind = "source_kind"
            case onAirMilliseconds = "on_air_ms"
        }
    }

    public struct Moment: Codable, Sendable, Equatable {
        public var atMilliseconds: Int64
        public var interval: Interval

        enum CodingKeys: String, CodingKey {
            case interval
            case atMilliseconds = "at_ms"
        }
    }

    enum CodingKeys: String, CodingKey {
        case session, intervals, totals, at
        case programFromMilliseconds = "program_from_ms"
        case programToMilliseconds = "program_to_ms"
        case programMilliseconds = "program_ms"
    }
}
