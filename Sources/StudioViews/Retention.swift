import Foundation
import StudioCore
import EventStore
import Control
#if canImport(Glibc)
import Glibc
#endif

// `prune`: the history's retention. The store removes the sessions that ended before the cutoff, with their
// events and recording rows, in one transaction (EventStore/Prune.swift); then, when asked, their recording
// files are deleted: only files the recordings table lists, only inside the recording directory their
// session was configured with, never a file a kept session lists too. The server's command and the CLI's
// no-server path (which opens the database for writing) run this same function.

/// `prune`'s arguments.
public struct PruneArguments: Codable, Sendable, Equatable {
    /// Sessions that ended more than this long ago are removed.
    public var olderThanMilliseconds: Int64
    /// Also delete their recording files.
    public var recordings: Bool?
    /// Only say what would be removed.
    public var dryRun: Bool?

    public init(olderThanMilliseconds: Int64, recordings: Bool? = nil, dryRun: Bool? = nil) {
        self.olderThanMilliseconds = olderThanMilliseconds
        self.recordings = recordings
        self.dryRun = dryRun
    }

    enum CodingKeys: String, CodingKey {
        case recordings
        case olderThanMilliseconds = "older_than_ms"
        case dryRun = "dry_run"
    }
}

public struct PruneReply: Codable, Sendable {
    public var dryRun: Bool
    /// Sessions that ended before this were removed.
    public var cutoff: Date
    public var sessions: [Int64]
    public var events: Int
    /// Recording rows removed.
    public var recordings: Int
    /// With `recordings`: each file of theirs and what became of it.
    public var files: [File]
    public var filesDeleted: Int
    public var bytesDeleted: Int64
    public var databaseBytesBefore: Int64
    public var databaseBytesAfter: Int64
    /// `vacuum`, `incremental_vacuum`, or null (dry run, nothing removed, or it failed: `vacuum_error`).
    @Nullable public var vacuum: String?
    @Nullable public var vacuumError: String?

    public struct File: Codable, Sendable {
        public var path: String
        /// `deleted`, `would delete`, `missing`, `kept` (see `reason`), `failed` (see `reason`).
        public var outcome: String
        @Nullable public var bytes: Int64?
        @Nullable public var reason: String?
    }

    enum CodingKeys: String, CodingKey {
        case cutoff, sessions, events, recordings, files, vacuum
        case dryRun = "dry_run"
        case filesDeleted = "files_deleted"
        case bytesDeleted = "bytes_deleted"
        case databaseBytesBefore = "database_bytes_before"
        case databaseBytesAfter = "database_bytes_after"
        case vacuumError = "vacuum_error"
    }
}

public enum Retention {
    public static func prune(_ arguments: PruneArguments, store: EventStore, now: Date = Date()) throws -> PruneReply {
        guard arguments.olderThanMilliseconds > 0 else {
            throw ControlError(.invalidArgument, "\"older_than_ms\" must be a positive duration, got \(arguments.olderThanMilliseconds)")
        }
        let dryRun = arguments.dryRun ?? false
        let cutoff = now.addingTimeInterval(-Double(arguments.olderThanMilliseconds) / 1000)
        let outcome = try store.prune(endedBefore: cutoff, dryRun: dryRun)
        var reply = PruneReply(dryRun: dryRun, cutoff: cutoff, sessions: outcome.sessionIDs, events: outcome.events,
                               recordings: outcome.recordings.count, files: [], filesDeleted: 0, bytesDeleted: 0,
                               databaseBytesBefore: outcome.databaseBytesBefore, databaseBytesAfter: outcome.databaseBytesAfter,
                               vacuum: outcome.vacuum, vacuumError: outcome.vacuumError)
        guard arguments.recordings ?? false else { return reply }
        // The rows are gone (committed) before any file is: a prune that failed deleted no file.
        for pruned in outcome.recordings {
            let file = remove(pruned, dryRun: dryRun)
            if file.outcome == "deleted" {
                reply.filesDeleted += 1
                reply.bytesDeleted += file.bytes ?? 0
            }
            reply.files.append(file)
        }
        return reply
    }

    /// Deletes one recording file if it is a regular file inside its session's recording directory.
    static func remove(_ pruned: PrunedRecording, dryRun: Bool) -> PruneReply.File {
        let path = pruned.recording.path
        func kept(_ reason: String) -> PruneReply.File { PruneReply.File(path: path, outcome: "kept", bytes: nil, reason: reason) }
        guard let directory = pruned.recordDirectory, !directory.isEmpty else {
            return kept("its session had no recording directory (`record`), so the file is not known to be the studio's")
        }
        let resolvedDirectory = URL(fileURLWithPath: directory).standardizedFileURL.resolvingSymlinksInPath().path
        let resolvedParent = URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL.resolvingSymlinksInPath().path
        guard path.hasPrefix("/"), resolvedParent == resolvedDirectory || resolvedParent.hasPrefix(resolvedDirectory + "/") else {
            return kept("not inside the recording directory \(directory)")
        }
        if pruned.sharedWithKeptSession { return kept("a session that stays lists the same file") }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return PruneReply.File(path: path, outcome: "missing", bytes: nil, reason: nil) }
            return PruneReply.File(path: path, outcome: "failed", bytes: nil, reason: String(cString: strerror(code)))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return kept("not a regular file") }
        let bytes = Int64(info.st_size)
        if dryRun { return PruneReply.File(path: path, outcome: "would delete", bytes: bytes, reason: nil) }
        guard unlink(path) == 0 else {
            return PruneReply.File(path: path, outcome: "failed", bytes: bytes, reason: String(cString: strerror(errno)))
        }
        return PruneReply.File(path: path, outcome: "deleted", bytes: bytes, reason: nil)
    }
}

extension Views {
    public static func prune(_ arguments: PruneArguments, store: EventStore) throws -> JSONValue {
        let reply = try Retention.prune(arguments, store: store)
        return (try? JSONValue(encoding: reply)) ?? .null
    }
}
