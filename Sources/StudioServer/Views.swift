import Foundation
import StudioCore
import EventStore
import Control

/// JSON shapes shared by the server's replies, `studio watch` and the CLI's offline path, so
/// `studio log --json` prints the same thing whether a server answered or the database was read.
public enum Views {
    public static func timestamp(_ date: Date) -> String { JSONValue.isoTime(date) }

    static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func optional(_ value: Int64?) -> JSONValue { value.map { JSONValue.int(Int($0)) } ?? .null }
    static func optional(_ value: Date?) -> JSONValue { value.map { JSONValue.string(timestamp($0)) } ?? .null }

    public static func event(_ record: EventRecord) -> JSONValue {
        var members: [String: JSONValue] = [:]
        members["id"] = .int(Int(record.id))
        members["session"] = .int(Int(record.sessionID))
        members["kind"] = .string(record.kind.rawValue)
        members["camera"] = optional(record.camera?.name)
        members["wall_time"] = .string(timestamp(record.wallTime))
        members["program_ms"] = optional(record.programMilliseconds)
        members["details"] = JSONValue(record.details)
        return .object(members)
    }

    public static func session(_ record: SessionRecord) -> JSONValue {
        var members: [String: JSONValue] = [:]
        members["id"] = .int(Int(record.id))
        members["started_at"] = .string(timestamp(record.startedAt))
        members["ended_at"] = optional(record.endedAt)
        members["end_reason"] = optional(record.endReason)
        members["switch_count"] = .int(record.switchCount)
        members["event_count"] = .int(record.eventCount)
        return .object(members)
    }

    public static func sessions(_ records: [SessionRecord]) -> JSONValue {
        .object(["sessions": .array(records.map(session))])
    }

    public static func log(session: SessionRecord, events: [EventRecord]) -> JSONValue {
        .object(["session": Views.session(session), "events": .array(events.map(event))])
    }

    /// A session's recordings, the program's first, then the ISO feeds by camera; each with its size
    /// on disk when the file exists (null when it does not).
    public static func recordings(session: SessionRecord, recordings: [RecordingRecord]) -> JSONValue {
        let ordered = recordings.sorted { a, b in
            switch (a.camera, b.camera) {
            case (nil, nil): return a.id < b.id
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): return x == y ? a.id < b.id : x < y
            }
        }
        let list: [JSONValue] = ordered.map { recording in
            var members: [String: JSONValue] = [:]
            members["id"] = .int(Int(recording.id))
            members["camera"] = .string(recording.camera?.name ?? "program")
            members["kind"] = .string(recording.camera == nil ? "program" : "iso")
            members["path"] = .string(recording.path)
            members["started_at"] = .string(timestamp(recording.startedAt))
            members["ended_at"] = optional(recording.endedAt)
            let attributes = try? FileManager.default.attributesOfItem(atPath: recording.path)
            members["bytes"] = (attributes?[.size] as? NSNumber).map { JSONValue.int($0.intValue) } ?? .null
            return .object(members)
        }
        return .object(["session": Views.session(session), "recordings": .array(list)])
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
