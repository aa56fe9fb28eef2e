import Foundation
import StudioCore

/// One audio input the database knows (`audio_inputs`).
public struct AudioInputRecord: Sendable, Hashable {
    public var identity: String
    public var name: String
    public var displayName: String
    public var firstSeen: Date
    public var lastSeen: Date
}

// The store thread's audio input names and session loudness (see `EventStore` for what each call promises).
extension StoreWorker {
    func audioInputName(identity: String, displayName: String, pinnedName: String?) throws -> String {
        try requireWritable("audioInputName")
        guard !identity.isEmpty else { throw EventStoreError.invalidArgument("audioInputName: the input identity is empty") }
        if let pinnedName, pinnedName.isEmpty { throw EventStoreError.invalidArgument("audioInputName: the pinned name for \(identity) is empty") }
        let now = Date().unixMilliseconds
        return try connection.transaction("naming audio input \(identity)") { () throws -> String in
            let existing = try connection.query("SELECT id, name FROM audio_inputs WHERE identity = ?", [.text(identity)]) {
                (id: try $0.int64("id"), name: try $0.text("name"))
            }.first
            let name: String
            var displaced: Int64?
            if let pinned = pinnedName {
                name = pinned
                if existing?.name != pinned {
                    displaced = try connection.query("SELECT id FROM audio_inputs WHERE name = ?", [.text(pinned)]) { try $0.int64("id") }.first
                    if let displaced {
                        try connection.run("UPDATE audio_inputs SET name = ? WHERE id = ?", [.text("\u{1}reassigning-\(displaced)"), .integer(displaced)])
                    }
                }
            } else if let existing {
                name = existing.name
            } else {
                name = try lowestFreeInputName()
            }
            if let existing {
                try connection.run("UPDATE audio_inputs SET name = ?, display_name = ?, last_seen = ? WHERE id = ?",
                                   [.text(name), .text(displayName), .integer(now), .integer(existing.id)])
            } else {
                try connection.run("INSERT INTO audio_inputs (identity, name, display_name, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)",
                                   [.text(identity), .text(name), .text(displayName), .integer(now), .integer(now)])
            }
            if let displaced {
                try connection.run("UPDATE audio_inputs SET name = ? WHERE id = ?", [.text(try lowestFreeInputName()), .integer(displaced)])
            }
            return name
        }
    }

    /// `micN` with the smallest N >= 1 no input has.
    private func lowestFreeInputName() throws -> String { try lowestFreeName(in: "audio_inputs", prefix: "mic") }

    func audioInputs() throws -> [AudioInputRecord] {
        try connection.query("SELECT identity, name, display_name, first_seen, last_seen FROM audio_inputs ORDER BY name") { row in
            AudioInputRecord(identity: try row.text("identity"), name: try row.text("name"), displayName: try row.text("display_name"),
                             firstSeen: Date(unixMilliseconds: try row.int64("first_seen")),
                             lastSeen: Date(unixMilliseconds: try row.int64("last_seen")))
        }
    }

    func recordLoudness(integratedLUFS: Double?, peakDBFS: Double?) throws {
        try requireWritable("recordLoudness")
        guard let sessionID = currentSessionID else { throw EventStoreError.noCurrentSession(operation: "recordLoudness") }
        try connection.run("UPDATE sessions SET integrated_lufs = ?, peak_dbfs = ? WHERE id = ?",
                           [.optional(integratedLUFS), .optional(peakDBFS), .integer(sessionID)])
    }
}
