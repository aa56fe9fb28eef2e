import Foundation
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

// What queries return. All records are Codable with snake_case keys; encode them with
// `EventStoreJSON.makeEncoder()` to get wall times as ISO 8601 UTC with milliseconds and every key present
// (absent values are `null`), which is what `studio log` / `studio sessions` print as JSON lines.

/// One server run.
public struct SessionRecord: Sendable, Hashable, Codable {
    public var id: Int64
    public var startedAt: Date
    public var endedAt: Date?
    /// `stopped`, `crashed`, `error` (see docs/schema.md); nil while open.
    public var endReason: String?
    /// Number of `switch` events in the session.
    public var switchCount: Int
    /// Number of events in the session (including session_started/session_ended).
    public var eventCount: Int
    /// The configuration at start, as JSON text.
    public var configSnapshot: String
    public var hostname: String
    public var pid: Int32

    public var isOpen: Bool { endedAt == nil }

    public init(id: Int64, startedAt: Date, endedAt: Date?, endReason: String?, switchCount: Int, eventCount: Int,
                configSnapshot: String, hostname: String, pid: Int32) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.endReason = endReason
        self.switchCount = switchCount
        self.eventCount = eventCount
        self.configSnapshot = configSnapshot
        self.hostname = hostname
        self.pid = pid
    }

    enum CodingKeys: String, CodingKey {
        case id
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case endReason = "end_reason"
        case switchCount = "switch_count"
        case eventCount = "event_count"
        case configSnapshot = "config_snapshot"
        case hostname, pid
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(endedAt, forKey: .endedAt)
        try container.encode(endReason, forKey: .endReason)
        try container.encode(switchCount, forKey: .switchCount)
        try container.encode(eventCount, forKey: .eventCount)
        try container.encode(configSnapshot, forKey: .configSnapshot)
        try container.encode(hostname, forKey: .hostname)
        try container.encode(pid, forKey: .pid)
    }
}

/// One stored event.
public struct EventRecord: Sendable, Hashable, Codable {
    public var id: Int64
    public var sessionID: Int64
    public var kind: EventKind
    public var camera: CameraID?
    public var wallTime: Date
    /// Program time in milliseconds (the FLV timestamp clock), where the event has one.
    public var programMilliseconds: Int64?
    public var details: [String: String]

    public init(id: Int64, sessionID: Int64, kind: EventKind, camera: CameraID?, wallTime: Date,
                programMilliseconds: Int64?, details: [String: String]) {
        self.id = id
        self.sessionID = sessionID
        self.kind = kind
        self.camera = camera
        self.wallTime = wallTime
        self.programMilliseconds = programMilliseconds
        self.details = details
    }

    public var programTime: MediaTime? { programMilliseconds.map { MediaTime.milliseconds($0) } }

    /// The event as stages emit it (wall time and program time at millisecond precision).
    public var studioEvent: StudioEvent {
        StudioEvent(kind: kind, camera: camera, wallTime: wallTime, programTime: programTime, details: details)
    }

    enum CodingKeys: String, CodingKey {
        case id
        case sessionID = "session_id"
        case kind, camera
        case wallTime = "wall_time"
        case programMilliseconds = "program_ms"
        case details
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(kind, forKey: .kind)
        try container.encode(camera, forKey: .camera)
        try container.encode(wallTime, forKey: .wallTime)
        try container.encode(programMilliseconds, forKey: .programMilliseconds)
        try container.encode(details, forKey: .details)
    }
}

/// A camera the server has seen, with its stable name.
public struct CameraRecord: Sendable, Hashable, Codable {
    /// Stable device identity (what `cameraName(forIdentity:...)` was given).
    public var identity: String
    public var name: CameraID
    /// `CameraBackend` raw value; kept as text so a database written by a newer binary still lists.
    public var backend: String
    public var displayName: String
    public var firstSeen: Date
    public var lastSeen: Date

    public var knownBackend: CameraBackend? { CameraBackend(rawValue: backend) }

    public init(identity: String, name: CameraID, backend: String, displayName: String, firstSeen: Date, lastSeen: Date) {
        self.identity = identity
        self.name = name
        self.backend = backend
        self.displayName = displayName
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }

    enum CodingKeys: String, CodingKey {
        case identity, name, backend
        case displayName = "display_name"
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
    }
}

/// A local recording file.
public struct RecordingRecord: Sendable, Hashable, Codable {
    public var id: Int64
    public var sessionID: Int64
    /// nil for the program feed.
    public var camera: CameraID?
    public var path: String
    public var startedAt: Date
    public var endedAt: Date?

    public init(id: Int64, sessionID: Int64, camera: CameraID?, path: String, startedAt: Date, endedAt: Date?) {
        self.id = id
        self.sessionID = sessionID
        self.camera = camera
        self.path = path
        self.startedAt = startedAt
        self.endedAt = endedAt
    }

    enum CodingKeys: String, CodingKey {
        case id
        case sessionID = "session_id"
        case camera, path
        case startedAt = "started_at"
        case endedAt = "ended_at"
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(camera, forKey: .camera)
        try container.encode(path, forKey: .path)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(endedAt, forKey: .endedAt)
    }
}

/// Counters of the store's writer thread.
public struct EventStoreStatistics: Sendable, Hashable {
    /// Events committed to the database.
    public var eventsWritten: Int = 0
    /// Events refused by `record` because the queue was full or the store closed/read-only.
    public var eventsDropped: Int = 0
    /// Events recorded while no session was open (not stored).
    public var eventsWithoutSession: Int = 0
    /// Events lost because their batch's transaction failed (see `lastWriteError`).
    public var eventsFailed: Int = 0
    public var lastWriteError: String?
}

/// JSON for the CLI: one object per line, snake_case keys, times as ISO 8601 UTC with milliseconds
/// (`2024-05-01T18:03:04.123Z`), sorted keys, nil values as `null`.
public enum EventStoreJSON {
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatTimestamp(date))
        }
        return encoder
    }

    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time: \(text)")
            }
            return date
        }
        return decoder
    }

    /// One JSON line (no trailing newline) for a record.
    public static func line<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try makeEncoder().encode(value), as: UTF8.self)
    }

    /// `2024-05-01T18:03:04.123Z`: UTC, rounded to the millisecond as the store keeps times.
    public static func formatTimestamp(_ date: Date) -> String {
        let milliseconds = date.unixMilliseconds
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(milliseconds - milliseconds.floorDivided(by: 1000) * 1000), 3))Z"
    }

    /// Reads what `formatTimestamp` writes (exactly, to the millisecond); other ISO 8601 forms through
    /// Foundation.
    public static func parseTimestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int32? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int32 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        if bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
           bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
           bytes[23] == UInt8(ascii: "Z"),
           let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
           let minute = number(14..<16), let second = number(17..<19), let millisecond = number(20..<23) {
            var parts = tm()
            parts.tm_year = year - 1900
            parts.tm_mon = month - 1
            parts.tm_mday = day
            parts.tm_hour = hour
            parts.tm_min = minute
            parts.tm_sec = second
            let seconds = timegm(&parts)
            return Date(unixMilliseconds: Int64(seconds) * 1000 + Int64(millisecond))
        }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

extension Int64 {
    /// Division rounding toward negative infinity (times before 1970 keep a positive millisecond part).
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
