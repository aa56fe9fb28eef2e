import Control

// The history's commands as the server and the CLI both know them. The CLI asks the running server
// with them, or, with none running, computes the same reply from the database itself (`Views`).

/// `{"session": 3}`: a session id, the current session when absent.
public struct SessionArguments: Codable, Sendable, Equatable {
    public var session: Int64?
    public init(session: Int64? = nil) { self.session = session }
}

public enum HistorySignatures {
    public enum Sessions: CommandSignature {
        public typealias Arguments = SessionsArguments
        public typealias Reply = SessionsReply
        public static let name = "sessions"
        public static let summary = "the sessions in the database, newest first"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/sessions")
    }

    public enum Log: CommandSignature {
        public typealias Arguments = LogArguments
        public typealias Reply = LogReply
        public static let name = "log"
        public static let summary = "a session's events, oldest first (the current session by default), or with filters those of every session"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/sessions/{session:int}/events")
    }

    public enum OnAir: CommandSignature {
        public typealias Arguments = OnAirArguments
        public typealias Reply = OnAirReply
        public static let name = "onair"
        public static let summary = "what was on program, interval by interval, with each source's share (the current session by default)"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/sessions/{session:int}/onair")
    }

    public enum Report: CommandSignature {
        public typealias Arguments = ReportArguments
        public typealias Reply = ReportReply
        public static let name = "report"
        public static let summary = "a session at a glance: how it ended, switches, time per source, cameras lost, outputs off air, fallbacks, drops, loudness, recordings"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/sessions/{session:int}/report")
    }

    public enum Prune: CommandSignature {
        public typealias Arguments = PruneArguments
        public typealias Reply = PruneReply
        public static let name = "prune"
        public static let summary = "removes the sessions that ended longer ago than older_than_ms, with their events (and recording files when asked)"
    }

    public enum Recordings: CommandSignature {
        public typealias Arguments = SessionArguments
        public typealias Reply = RecordingsReply
        public static let name = "recordings"
        public static let summary = "a session's recording files with their sizes (the current session by default)"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/sessions/{session:int}/recordings")
    }
}
