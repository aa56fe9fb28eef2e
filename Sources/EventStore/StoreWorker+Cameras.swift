import Foundation
import StudioCore

// The store thread's camera names and recording rows (see `EventStore` for what each call promises).
extension StoreWorker {
    // MARK: Cameras

    func cameraName(identity: String, backend: BackendName, displayName: String, pinnedName: CameraID?) throws -> CameraID {
        try requireWritable("cameraName")
        guard !identity.isEmpty else { throw EventStoreError.invalidArgument("cameraName: the camera identity is empty") }
        if let pinnedName, pinnedName.name.isEmpty {
            throw EventStoreError.invalidArgument("cameraName: the pinned name for \(identity) is empty")
        }
        let now = Date().unixMilliseconds
        return try connection.transaction("naming camera \(identity)") { () throws -> CameraID in
            let existing = try connection.query("SELECT id, name FROM cameras WHERE identity = ?", [.text(identity)]) {
                (id: try $0.int64("id"), name: try $0.text("name"))
            }.first
            let name: String
            var displaced: Int64?
            if let pinned = pinnedName?.name {
                name = pinned
                if existing?.name != pinned {
                    // The pinned name belongs to another device: that one moves to the lowest free camN below,
                    // after this one has released its own old name.
                    displaced = try connection.query("SELECT id FROM cameras WHERE name = ?", [.text(pinned)]) {
                        try $0.int64("id")
                    }.first
                    if let displaced {
                        try connection.run("UPDATE cameras SET name = ? WHERE id = ?",
                                           [.text("\u{1}reassigning-\(displaced)"), .integer(displaced)])
                    }
                }
            } else if let existing {
                name = existing.name
            } else {
                name = try lowestFreeCameraName()
            }
            if let existing {
                try connection.run("UPDATE cameras SET name = ?, backend = ?, display_name = ?, last_seen = ? WHERE id = ?",
                                   [.text(name), .text(backend.rawValue), .text(displayName), .integer(now), .integer(existing.id)])
            } else {
                try connection.run(
                    "INSERT INTO cameras (identity, name, backend, display_name, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)",
                    [.text(identity), .text(name), .text(backend.rawValue), .text(displayName), .integer(now), .integer(now)])
            }
            if let displaced {
                try connection.run("UPDATE cameras SET name = ? WHERE id = ?", [.text(try lowestFreeCameraName()), .integer(displaced)])
            }
            return CameraID(name)
        }
    }

    /// `camN` with the smallest N >= 1 no camera has.
    private func lowestFreeCameraName() throws -> String { try lowestFreeName(in: "cameras", prefix: "cam") }

    /// `PREFIXN` with the smallest N >= 1 no row of `table` (`cameras`, `audio_inputs`) has as its name.
    func lowestFreeName(in table: String, prefix: String) throws -> String {
        let used = Set(try connection.query("SELECT name FROM \(table) WHERE name GLOB '\(prefix)[1-9]*'") {
            Int(try $0.text("name").dropFirst(prefix.count))
        }.compactMap { $0 })
        var number = 1
        while used.contains(number) { number += 1 }
        return "\(prefix)\(number)"
    }

    func cameras() throws -> [CameraRecord] {
        try connection.query("SELECT identity, name, backend, display_name, first_seen, last_seen FROM cameras") { row in
            CameraRecord(identity: try row.text("identity"), name: CameraID(try row.text("name")), backend: try row.text("backend"),
                         displayName: try row.text("display_name"), firstSeen: Date(unixMilliseconds: try row.int64("first_seen")),
                         lastSeen: Date(unixMilliseconds: try row.int64("last_seen")))
        }.sorted { $0.name < $1.name }
    }

    // MARK: Recordings

    func addRecording(camera: CameraID?, path: String, startedAt: Date = Date()) throws -> Int64 {
        try requireWritable("addRecording")
        guard let sessionID = currentSessionID else { throw EventStoreError.noCurrentSession(operation: "addRecording") }
        let recording = OpenRecording(camera: camera?.name, path: path, startedAt: startedAt.unixMilliseconds)
        try connection.run("INSERT INTO recordings (session_id, camera, path, started_at) VALUES (?, ?, ?, ?)",
                           [.integer(sessionID), .optional(recording.camera), .text(path), .integer(recording.startedAt)])
        let id = connection.lastInsertRowID
        openRecordings[id] = recording
        return id
    }

    /// Ends the current session's open row for `path` with the file's final size.
    func finishRecording(path: String, bytes: Int64?, endedAt: Date) throws {
        try requireWritable("finishRecording")
        guard let sessionID = currentSessionID else { throw EventStoreError.noCurrentSession(operation: "finishRecording") }
        try connection.run("UPDATE recordings SET ended_at = ?, bytes = ? WHERE session_id = ? AND path = ? AND ended_at IS NULL",
                           [.integer(endedAt.unixMilliseconds), .optional(bytes), .integer(sessionID), .text(path)])
        for (id, recording) in openRecordings where recording.path == path {
            openRecordings[id] = nil
            recordingIDs[id] = nil
        }
    }

    /// Ends every row of the current session still open; returns how many.
    func finishOpenRecordings() throws -> Int {
        try requireWritable("finishOpenRecordings")
        guard let sessionID = currentSessionID else { throw EventStoreError.noCurrentSession(operation: "finishOpenRecordings") }
        try connection.run("UPDATE recordings SET ended_at = ? WHERE session_id = ? AND ended_at IS NULL",
                           [.integer(Date().unixMilliseconds), .integer(sessionID)])
        openRecordings.removeAll()
        recordingIDs.removeAll()
        return connection.changes
    }

    func finishRecording(id: Int64) throws {
        try requireWritable("finishRecording")
        // Its id in the current file, if a switch of database files registered it there under another.
        let fileID = recordingIDs[id] ?? id
        try connection.run("UPDATE recordings SET ended_at = ? WHERE id = ? AND ended_at IS NULL",
                           [.integer(Date().unixMilliseconds), .integer(fileID)])
        openRecordings[id] = nil
        recordingIDs[id] = nil
        if connection.changes == 0 {
            let exists = try !connection.query("SELECT 1 FROM recordings WHERE id = ?", [.integer(fileID)]) { _ in true }.isEmpty
            if !exists { throw EventStoreError.unknownRecording(id: id) }
        }
    }

    func recordings(sessionID: Int64) throws -> [RecordingRecord] {
        try connection.query(
            "SELECT id, session_id, camera, path, started_at, ended_at, bytes FROM recordings WHERE session_id = ? ORDER BY id",
            [.integer(sessionID)], Self.recordingRecord)
    }

    /// A `recordings` row (id, session_id, camera, path, started_at, ended_at, bytes).
    static func recordingRecord(_ row: SQLiteRow) throws -> RecordingRecord {
        RecordingRecord(id: try row.int64("id"), sessionID: try row.int64("session_id"),
                        camera: try row.optionalText("camera").map { CameraID($0) },
                        path: try row.text("path"), startedAt: Date(unixMilliseconds: try row.int64("started_at")),
                        endedAt: try row.optionalInt64("ended_at").map(Date.init(unixMilliseconds:)),
                        bytes: try row.optionalInt64("bytes"))
    }
}
