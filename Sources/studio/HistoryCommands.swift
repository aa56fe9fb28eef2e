import Foundation
import StudioCore
import StudioViews
import EventStore
import Control
import StudioCLI
import StudioConfig
import Glibc

// The history commands: sessions, log, onair, recordings (from the server, or from the database when
// none runs), and watch.

enum SessionsCommand: ClientCommand {
    static let spec = CommandSpec(
        "sessions", abstract: "past and current sessions.", summary: "past and current sessions",
        options: [.json, HistoryFlags.sessionsLimit, HistoryFlags.since, HistoryFlags.until, HistoryFlags.ended, .socket, .database],
        discussion: """
        Newest first. --since and --until keep the sessions that ran at some moment between
        them. A TIME without an offset (2024-05-01T18:03) is local time; with one, that offset
        (2024-05-01T18:03Z, 2024-05-01T18:03+02:00); -90s, -30m, -2h, -7d count back from now.
        Asks the running server; with none running, reads the database directly.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let query = try HistoryFlags.sessions(arguments, now: Date(), timeZone: .current)
        let result = try requestOrReadDatabase(socket, arguments, environment, HistorySignatures.Sessions.self, query) { store in
            try Views.sessions(query, store: store)
        }
        if json { print(result.jsonText) } else { print(Format.sessions(result)) }
        return 0
    }
}

enum LogCommand: ClientCommand {
    static let spec = CommandSpec(
        "log", abstract: "the events of a session, in order; with filters, of every session.",
        summary: "events of a session (default: the current or latest one);\nwith filters and no SESSION, of every session",
        positionals: [PositionalSpec("SESSION", optional: true)],
        options: [.json, HistoryFlags.kind, HistoryFlags.camera, HistoryFlags.since, HistoryFlags.until, HistoryFlags.from, HistoryFlags.to,
                  HistoryFlags.logLimit, HistoryFlags.afterID, .socket, .database],
        positionalsError: "expected at most one session id",
        discussion: """
        SESSION defaults to the current session, or the latest one; with a filter and no SESSION,
        every session is searched and each line says its session
        (`studio log --camera cam2 --kind camera_lost --since -7d`). Filters combine: an event
        is shown when it matches all of them. --from and --to compare each event's program time
        (so only events that have one match). A TIME without an offset is local time; with one
        (2024-05-01T18:03Z, +02:00), that offset.
        In JSON each event has `id`, `session`, `kind`, `camera`, `wall_time` (ISO 8601),
        `program_ms` (program time in milliseconds, the clock of the FLV timestamps) and
        `details`; `session` is null when every session was searched.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let query = try HistoryFlags.log(arguments, session: try sessionPositional(arguments, "log"), now: Date(), timeZone: .current)
        // Printed as it comes, either way: from the server page by page, or as the database is read (LogStream).
        if let client = try runningServer(socket, arguments) {
            do { try LogStream.print(query, client: client, json: json) } catch let error as ControlError { throw refusal(error, "log") }
            return 0
        }
        _ = try readDatabase(socket, arguments, environment, "log") { store in
            try LogStream.print(query, store: store, json: json)
            return .null
        }
        return 0
    }
}

enum OnAirCommand: ClientCommand {
    static let spec = CommandSpec(
        "onair", abstract: "what was on program in a session, interval by interval.",
        summary: "the program's timeline: each source on air, from, to, how it ended;\nper source its total and share (--at: one moment)",
        positionals: [PositionalSpec("SESSION", optional: true)], options: [HistoryFlags.at, .json, .socket, .database],
        positionalsError: "expected at most one session id",
        discussion: """
        SESSION defaults to the current session, or the latest one. Each interval is one camera
        or scene on program (or the slate, while the camera on program was lost or removed
        without a backup), with its program times and how it ended: cut, transition, backup
        (its source was lost or removed and the backup went on air), loss (the slate followed),
        removed (taken out of the show: the slate followed), returned (the lost camera came
        back), added (the removed camera was added again), session end. Then each source's
        time on air and share of the program.
        --at HH:MM:SS[.mmm] answers for one moment: what was on air, since when, until when.
        Computed by the database view program_intervals (docs/schema.md).
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let query = try HistoryFlags.onAir(arguments, session: try sessionPositional(arguments, "onair"))
        let result = try requestOrReadDatabase(socket, arguments, environment, HistorySignatures.OnAir.self, query) { store in
            try Views.onAir(query, store: store)
        }
        if json { print(result.jsonText) } else { print(Format.onAir(result)) }
        return 0
    }
}

enum RecordingsCommand: ClientCommand {
    static let spec = CommandSpec(
        "recordings", abstract: "the recording files of a session: the program and each camera's ISO.",
        summary: "program and ISO recording files of a session",
        positionals: [PositionalSpec("SESSION", optional: true)], options: [.json, .socket, .database],
        positionalsError: "expected at most one session id",
        discussion: """
        SESSION defaults to the current session, or the latest one. Lists each file with its camera
        ("program" for the program feed), when it started and ended, and its size on disk ("missing"
        when the file is gone). Asks the running server; with none running, reads the database directly.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let result = try requestSession(socket, arguments, environment, HistorySignatures.Recordings.self) { store, record in
            try Views.recordings(session: record, store: store)
        }
        if json { print(result.jsonText) } else { print(Format.recordings(result)) }
        return 0
    }
}

enum WatchCommand: ClientCommand {
    static let spec = CommandSpec("watch", abstract: "print events as the server emits them, until interrupted.",
                                  summary: "follow events as they happen", options: [.json, .socket])

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let client = try connect(socket)
        try client.subscribe { event in
            // Line by line, so `studio watch | grep switch` shows each event as it happens; stop
            // when the reader goes away.
            writeAll(1, (json ? event.jsonText : Format.eventLine(event)) + "\n")
        }
        return 0
    }
}
