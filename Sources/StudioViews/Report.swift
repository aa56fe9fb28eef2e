import Foundation
import StudioCore
import EventStore
import Control

// `report`: one session at a glance, for an engineer after the show. Built from the history's views
// (program_intervals, camera_outages, output_outages: migration 0004) and the session's events, by one
// function that the server's command and the CLI's offline path share (as `onair`). The timeline picture
// (TimelinePicture) is drawn from this reply alone, so the CLI draws it from a server's answer too.

/// `report`'s arguments.
public struct ReportArguments: Codable, Sendable, Equatable {
    public var session: Int64?
    public init(session: Int64? = nil) { self.session = session }
}

public struct ReportReply: Codable, Sendable {
    public var session: SessionView
    /// Wall time from start to end (to now while it runs).
    public var durationMilliseconds: Int64
    /// `stopped`, `crashed`, `error`, or `running`.
    public var ended: String
    public var program: Program
    public var cameras: [Camera]
    public var outputs: [Output]
    public var encoderFallbacks: [Fallback]
    public var drops: [Drops]
    /// The session row's loudness, by its column's name (`integrated_lufs`, `peak_dbfs`); empty while unset.
    public var loudness: [String: Double]
    public var recordings: [RecordingView]

    /// The loudness the session's row keeps (written when it stops), keyed as its columns are named.
    static func loudness(of session: SessionRecord) -> [String: Double] {
        var values: [String: Double] = [:]
        values["integrated_lufs"] = session.integratedLUFS
        values["peak_dbfs"] = session.peakDBFS
        return values
    }

    public struct Program: Codable, Sendable {
        @Nullable public var fromMilliseconds: Int64?
        @Nullable public var toMilliseconds: Int64?
        public var programMilliseconds: Int64
        /// `switch` events (cuts, transitions, backups, automatic switches).
        public var switches: Int
        /// Intervals ended by a cut, by a transition.
        public var cuts: Int
        public var transitions: Int
        public var totals: [OnAirReply.Total]
        public var intervals: [OnAirReply.Interval]

        enum CodingKeys: String, CodingKey {
            case switches, cuts, transitions, totals, intervals
            case fromMilliseconds = "from_ms"
            case toMilliseconds = "to_ms"
            case programMilliseconds = "program_ms"
        }
    }

    public struct Camera: Codable, Sendable {
        public var camera: String
        public var losses: Int
        public var returns: Int
        public var lostMilliseconds: Int64
        public var outages: [Outage]

        enum CodingKeys: String, CodingKey {
            case camera, losses, returns, outages
            case lostMilliseconds = "lost_ms"
        }
    }

    public struct Output: Codable, Sendable {
        public var output: String
        public var disconnects: Int
        public var reconnects: Int
        public var attempts: Int
        public var offAirMilliseconds: Int64
        public var outages: [Outage]

        enum CodingKeys: String, CodingKey {
            case output, disconnects, reconnects, attempts, outages
            case offAirMilliseconds = "off_air_ms"
        }
    }

    /// A camera lost or an output down: wall times, and where it falls in program time (the events' own
    /// program times where they have them, else counted from the nearest earlier event that has one).
    public struct Outage: Codable, Sendable {
        @Nullable public var reason: String?
        public var from: Date
        @Nullable public var to: Date?
        public var durationMilliseconds: Int64
        public var fromProgramMilliseconds: Int64
        public var toProgramMilliseconds: Int64
        @Nullable public var endedBy: String?

        enum CodingKeys: String, CodingKey {
            case reason, from, to
            case durationMilliseconds = "duration_ms"
            case fromProgramMilliseconds = "from_program_ms"
            case toProgramMilliseconds = "to_program_ms"
            case endedBy = "ended_by"
        }
    }

    public struct Fallback: Codable, Sendable {
        public var wallTime: Date
        @Nullable public var programMilliseconds: Int64?
        /// An ISO encoder's camera; null for the program's.
        @Nullable public var camera: String?
        public var from: String
        public var to: String
        public var reason: String

        enum CodingKeys: String, CodingKey {
            case camera, from, to, reason
            case wallTime = "wall_time"
            case programMilliseconds = "program_ms"
        }
    }

    public struct Drops: Codable, Sendable {
        public var stage: String
        public var dropped: Int64
        public var reports: Int
    }

    enum CodingKeys: String, CodingKey {
        case session, ended, program, cameras, outputs, drops, loudness, recordings
        case durationMilliseconds = "duration_ms"
        case encoderFallbacks = "encoder_fallbacks"
    }
}

extension History {
    /// `report`: session `arguments.session` (else `defaultSession`, else the open or latest one).
    public static func report(_ arguments: ReportArguments, store: EventStore, defaultSession: Int64?,
                              now: Date = Date()) throws -> ReportReply {
        let session = try session(arguments.session, store: store, defaultSession: defaultSession)
        let onAir = try onAir(OnAirArguments(session: session.id), store: store, defaultSession: nil)
        let events = try store.events(matching: EventQuery(sessionID: session.id, kinds: [
            .switchProgram, .cameraAdded, .cameraLost, .cameraReturned, .encoderFallback, .outputConnected, .outputDisconnected,
            .outputReconnected, .transitionStarted,
        ]))
        let clock = ProgramClock(events: events, span: (onAir.programFromMilliseconds ?? 0, onAir.programToMilliseconds ?? 0))

        var cameras: [String: ReportReply.Camera] = [:]
        for event in events where event.kind == .cameraAdded { if let name = event.camera?.name { cameras[name] = .init(name) } }
        for outage in try store.cameraOutages(sessionID: session.id) {
            let end = outage.backAt ?? outage.lostAt.addingTimeInterval(Double(outage.durationMilliseconds) / 1000)
            cameras[outage.camera.name, default: .init(outage.camera.name)].add(ReportReply.Outage(
                reason: outage.reason, from: outage.lostAt, to: outage.backAt, durationMilliseconds: outage.durationMilliseconds,
                fromProgramMilliseconds: clock.program(at: outage.lostAt), toProgramMilliseconds: clock.program(at: end),
                endedBy: outage.endedBy))
        }

        var outputs: [String: ReportReply.Output] = [:]
        for event in events where event.kind == .outputConnected { if let name = event.details["output"] { outputs[name] = .init(name) } }
        for outage in try store.outputOutages(sessionID: session.id) {
            let end = outage.upAt ?? outage.downAt.addingTimeInterval(Double(outage.durationMilliseconds) / 1000)
            outputs[outage.output, default: .init(outage.output)].add(ReportReply.Outage(
                reason: outage.error, from: outage.downAt, to: outage.upAt, durationMilliseconds: outage.durationMilliseconds,
                fromProgramMilliseconds: clock.bounded(outage.downProgramMilliseconds) ?? clock.program(at: outage.downAt),
                toProgramMilliseconds: clock.bounded(outage.upProgramMilliseconds) ?? clock.program(at: end),
                endedBy: outage.endedBy), attempts: outage.attempts)
        }

        let fallbacks = events.filter { $0.kind == .encoderFallback }.map { event in
            ReportReply.Fallback(wallTime: event.wallTime, programMilliseconds: event.programMilliseconds, camera: event.camera?.name,
                                 from: event.details["from"] ?? "?", to: event.details["to"] ?? "?", reason: event.details["reason"] ?? "")
        }
        let intervals = onAir.intervals
        let program = ReportReply.Program(
            fromMilliseconds: onAir.programFromMilliseconds, toMilliseconds: onAir.programToMilliseconds,
            programMilliseconds: onAir.programMilliseconds, switches: events.filter { $0.kind == .switchProgram }.count,
            cuts: intervals.filter { $0.endedBy == "cut" }.count, transitions: intervals.filter { $0.endedBy == "transition" }.count,
            totals: onAir.totals, intervals: intervals)
        let end = session.endedAt ?? now
        return ReportReply(
            session: SessionView(session), durationMilliseconds: max(0, end.unixMilliseconds - session.startedAt.unixMilliseconds),
            ended: session.endReason ?? "running", program: program,
            cameras: cameras.values.sorted { $0.camera < $1.camera }, outputs: outputs.values.sorted { $0.output < $1.output },
            encoderFallbacks: fallbacks,
            drops: try store.dropTotals(sessionID: session.id).map { ReportReply.Drops(stage: $0.stage, dropped: $0.dropped, reports: $0.reports) },
            loudness: ReportReply.loudness(of: session),
            recordings: RecordingsReply(session: session, recordings: try store.recordings(sessionID: session.id)).recordings)
    }
}

extension ReportReply.Camera {
    init(_ name: String) { self.init(camera: name, losses: 0, returns: 0, lostMilliseconds: 0, outages: []) }

    mutating func add(_ outage: ReportReply.Outage) {
        losses += 1
        if outage.endedBy == "returned" { returns += 1 }
        lostMilliseconds += outage.durationMilliseconds
        outages.append(outage)
    }
}

extension ReportReply.Output {
    init(_ name: String) { self.init(output: name, disconnects: 0, reconnects: 0, attempts: 0, offAirMilliseconds: 0, outages: []) }

    mutating func add(_ outage: ReportReply.Outage, attempts: Int) {
        disconnects += 1
        if outage.endedBy == "reconnected" { reconnects += 1 }
        self.attempts += attempts
        offAirMilliseconds += outage.durationMilliseconds
        outages.append(outage)
    }
}

/// Wall time to program time within one session: program time runs with the wall clock, so a moment is
/// placed from the nearest earlier event that has a program time (the first one for a moment before it),
/// and kept inside the program's span.
struct ProgramClock {
    private let anchors: [(wall: Int64, program: Int64)]
    private let span: (Int64, Int64)

    init(events: [EventRecord], span: (Int64, Int64)) {
        anchors = events.compactMap { event in event.programMilliseconds.map { (event.wallTime.unixMilliseconds, $0) } }
            .sorted { $0.wall < $1.wall }
        self.span = span
    }

    func program(at date: Date) -> Int64 {
        let wall = date.unixMilliseconds
        guard let anchor = anchors.last(where: { $0.wall <= wall }) ?? anchors.first else { return span.0 }
        return bounded(anchor.program + (wall - anchor.wall)) ?? span.0
    }

    func bounded(_ milliseconds: Int64?) -> Int64? { milliseconds.map { min(max($0, span.0), max(span.0, span.1)) } }
}

extension Date {
    var unixMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}

extension Views {
    public static func report(_ arguments: ReportArguments, store: EventStore) throws -> JSONValue {
        let reply = try History.report(arguments, store: store, defaultSession: nil)
        return (try? JSONValue(encoding: reply)) ?? .null
    }
}
