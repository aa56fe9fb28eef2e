import Foundation
import StudioCore
import EventStore
import Control

/// JSON shapes shared by the server's replies and the CLI's offline path, so `studio log --json`
/// prints the same thing whether a server answered or the database was read directly.
public enum Views {
    static let timeFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    public static func timestamp(_ date: Date) -> String { timeFormatter.string(from: date) }

    public static func event(_ event: StudioEvent) -> JSONValue {
        .object([
            "kind": .string(event.kind.rawValue),
            "camera": event.camera.map { .string($0.name) } ?? .null,
            "wall_time": .string(timestamp(event.wallTime)),
            "program_ms": event.programTime.map { .number(Double($0.milliseconds)) } ?? .null,
            "details": .object(event.details.mapValues { .string($0) }),
        ])
    }

    public static func event(_ record: EventRecord) -> JSONValue {
        .object([
            "id": .number(Double(record.id)),
            "session": .number(Double(record.sessionID)),
            "kind": .string(record.kind.rawValue),
            "camera": record.camera.map { .string($0.name) } ?? .null,
            "wall_time": .string(timestamp(record.wallTime)),
            "program_ms": record.programMilliseconds.map { .number(Double($0)) } ?? .null,
            "details": .object(record.details.mapValues { .string($0) }),
        ])
    }

    public static func session(_ record: SessionRecord) -> JSONValue {
        .object([
            "id": .number(Double(record.id)),
            "started_at": .string(timestamp(record.startedAt)),
            "ended_at": record.endedAt.map { .string(timestamp($0)) } ?? .null,
            "end_reason": record.endReason.map { .string($0) } ?? .null,
            "switch_count": .number(Double(record.switchCount)),
            "event_count": .number(Double(record.eventCount)),
        ])
    }

    public static func sessions(_ records: [SessionRecord]) -> JSONValue {
        .object(["sessions": .array(records.map(session))])
    }

    public static func log(session: SessionRecord, events: [EventRecord]) -> JSONValue {
        .object(["session": Views.session(session), "events": .array(events.map(event))])
    }

    /// One line for the server log.
    static func describe(_ event: StudioEvent) -> String {
        var parts = [event.kind.rawValue]
        if let camera = event.camera { parts.append(camera.name) }
        if let time = event.programTime { parts.append("at \(time.milliseconds) ms") }
        parts += event.details.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return parts.joined(separator: " ")
    }
}
