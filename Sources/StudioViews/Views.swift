import Foundation
import StudioCore
import EventStore
import Control

// Replies built from the store's records: the server answers `sessions`, `log` and `recordings` with
// them, and the CLI's offline path (no server running) reads the database into the same types, so
// `studio log --json` prints the same thing whichever answered.

extension SessionView {
    public init(_ record: SessionRecord) {
        self.init(id: record.id, startedAt: record.startedAt, endedAt: record.endedAt, endReason: record.endReason,
                  switchCount: record.switchCount, eventCount: record.eventCount,
                  integratedLUFS: record.integratedLUFS.map { ($0 * 10).rounded() / 10 }, peakDBFS: record.peakDBFS.map { ($0 * 10).rounded() / 10 })
    }
}

extension SessionsReply {
    public init(_ records: [SessionRecord]) {
        self.init(sessions: records.map(SessionView.init))
    }
}

extension EventView {
    public init(_ record: EventRecord) {
        self.init(id: record.id, session: record.sessionID, kind: record.kind, camera: record.camera?.name,
                  wallTime: record.wallTime, programMilliseconds: record.programMilliseconds, details: record.details)
    }
}

extension LogReply {
    public init(session: SessionRecord, events: [EventRecord]) {
        self.init(session: SessionView(session), events: events.map(EventView.init), nextAfterID: nil)
    }
}

extension RecordingsReply {
    /// The program's recording first, then the ISO feeds by camera; each with its size on disk when the
    /// file exists.
    /// `origins`: each ISO file's time origin by path (from its `recording_started`).
    public init(session: SessionRecord, recordings: [RecordingRecord], nodes: [NodeSessionRecord] = [], origins: [String: RecordingOrigin] = [:]) {
        let ordered = recordings.sorted { a, b in
            switch (a.camera, b.camera) {
            case (nil, nil): return a.id < b.id
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): return x == y ? a.id < b.id : x < y
            }
        }
        self.init(session: SessionView(session), recordings: ordered.map { recording in
            let attributes = try? FileManager.default.attributesOfItem(atPath: recording.path)
            return RecordingView(id: recording.id, camera: recording.camera?.name ?? "program",
                                 kind: recording.camera == nil ? "program" : "iso", path: recording.path,
                                 startedAt: recording.startedAt, endedAt: recording.endedAt,
                                 bytes: (attributes?[.size] as? NSNumber)?.intValue, origin: origins[recording.path])
        }, nodes: nodes.map { node in
            NodeRecordingsView(node: node.node, state: node.state.rawValue, reason: node.reason, nodeSession: node.nodeSession,
                               askedAt: node.askedAt, recordings: node.recordings.map { file in
                NodeFileView(camera: file.kind == "program" ? "program" : node.node + "/" + file.camera, kind: file.kind, path: file.path,
                             nodeSession: file.nodeSession, startedAt: file.startedAt, endedAt: file.endedAt, bytes: file.bytes.map(Int.init),
                             origin: file.origin)
            })
        })
    }

    /// Session `session`'s own files and its nodes' from the store.
    public init(session: SessionRecord, store: EventStore) throws {
        self.init(session: session, recordings: try store.recordings(sessionID: session.id), nodes: try store.nodeSessions(sessionID: session.id),
                  origins: try History.recordingOrigins(session.id, store: store))
    }
}

/// The CLI's offline path as JSON (the shape a server's reply has).
public enum Views {
    public static func sessions(_ records: [SessionRecord]) -> JSONValue { json(SessionsReply(records)) }

    public static func log(session: SessionRecord, events: [EventRecord]) -> JSONValue {
        json(LogReply(session: session, events: events))
    }

    public static func sessions(_ arguments: SessionsArguments, store: EventStore) throws -> JSONValue {
        json(try History.sessions(arguments, store: store))
    }

    public static func onAir(_ arguments: OnAirArguments, store: EventStore) throws -> JSONValue {
        json(try History.onAir(arguments, store: store, defaultSession: nil))
    }

    public static func recordings(session: SessionRecord, store: EventStore) throws -> JSONValue {
        json(try RecordingsReply(session: session, store: store))
    }

    /// These replies hold strings, integers and dates only: encoding them cannot fail.
    private static func json(_ reply: some Encodable) -> JSONValue { (try? JSONValue(encoding: reply)) ?? .null }

    /// One line for the server log.
    package static func describe(_ event: StudioEvent) -> String {
        var parts = [event.kind.rawValue]
        if let camera = event.camera { parts.append(camera.name) }
        if let time = event.programTime { parts.append("at \(time.milliseconds) ms") }
        parts += event.details.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return parts.joined(separator: " ")
    }
}
