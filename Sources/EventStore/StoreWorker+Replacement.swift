import Foundation
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A recording of the open session not finished yet (what registering it again in another file needs).
struct OpenRecording {
    let camera: String?
    let path: String
    let startedAt: Int64
}

/// A switch of database files in progress: the configured path stopped naming the file the store had open.
struct PendingSwitch {
    enum Stage {
        /// The old file is still open: its WAL must go into it before it is closed.
        case closingOld
        /// The old file is closed; the file at the path is to be opened (or created).
        case opening
        /// The file at the path is open; the session continuing the old one is to be written there.
        case continuingSession
    }
    let change: DatabaseFileChange
    /// The session open when the change was noticed; a new session continues it in the new file.
    let previousSession: Int64?
    /// Events of that session committed to the old file.
    let eventsInOldFile: Int
    var stage = Stage.closingOld
    /// The connection to the old file until it is closed (`connection` meanwhile refuses every call, so
    /// nothing more is written there).
    var oldConnection: SQLiteConnection?
    /// Whether the store created the file it carries on in (nothing was at the path).
    var created = false
    /// The refusal last announced (the file's inode and the reason), so retries that fail the same way on
    /// the same file stay quiet.
    var refusal: String?
}

// The database deleted or replaced under a running store (see docs/schema.md, "The database file deleted or
// replaced"). SQLite names the WAL and the shared-memory index by the path (studio.db-wal), not by the file:
// after `mv other.db studio.db` the old connection's WAL lies next to the new file, and if it were left there
// the next open would replay it into the wrong database ("database disk image is malformed"). SQLite's own
// close skips its checkpoint when the file has moved, and leaves the WAL behind. So the store, on noticing:
// 1. stops writing to the old file, checkpoints every WAL frame into it (through the descriptor, wherever
//    the file now is) and truncates the WAL, then closes it: the old file, if it still has a name, is whole,
//    and the WAL at the path is empty;
// 2. opens the file at the path: creates a fresh database if nothing is there; carries on in it if it is a
//    studio event database (migrating an older one); refuses anything else without writing to it, keeping
//    the events (up to the backlog capacity, then counted lost) and trying again every retry interval;
// 3. writes a new session there continuing the old one (`session_started` with `continues_session`, then
//    `database_replaced`), and the kept events after it, in order.
extension StoreWorker {
    /// Before each write and on the heartbeat: notices the path no longer naming the open file, and moves
    /// the store on to the file at the path (or says why it cannot yet). Cheap when nothing changed.
    func ensureCurrentFile() {
        guard !isReadOnly else { return }
        if pendingSwitch == nil {
            guard let watch = fileWatch, let change = watch.change(connectionSaysMoved: connection.hasMoved) else { return }
            pendingSwitch = PendingSwitch(change: change, previousSession: currentSessionID, eventsInOldFile: sessionEventsInFile,
                                          oldConnection: connection)
            let problem = "\(change.description): the store is switching to a database at \(path)"
            connection = SQLiteConnection(unavailable: path, reason: problem)
            setProblem(problem)
            notify(.databaseFileChanged(path: path, what: change.description))
        }
        continueSwitch()
    }

    private func continueSwitch() {
        guard var pending = pendingSwitch else { return }
        if pending.stage == .closingOld, let old = pending.oldConnection {
            do { try old.checkpointTruncatingWAL() } catch {
                setProblem("\(pending.change.description); its WAL cannot be written into it yet (\(error)): "
                    + "nothing is written until it can, and the events wait")
                return
            }
            // Connection first: closing the watch's descriptor drops the process's locks on the file.
            old.close()
            fileWatch?.close()
            fileWatch = nil
            pending.oldConnection = nil
            pending.stage = .opening
            pendingSwitch = pending
        }
        if pending.stage == .opening {
            do {
                let existed = FileManager.default.fileExists(atPath: path)
                try EventStore.refuseForeignDatabase(at: path)
                let opened = try Self.open(path: path, readOnly: false, limits: limits)
                do { fileWatch = try Self.watch(path) } catch {
                    opened.close()
                    throw error
                }
                connection = opened
                pending.created = !existed
                pending.stage = .continuingSession
                pendingSwitch = pending
            } catch {
                refuse(pending, reason: "\(error)")
                return
            }
        }
        var session: Int64?
        var movedRecordings: [Int64: Int64] = [:]
        if let previous = pending.previousSession, let snapshot = sessionSnapshot {
            let details = [
                "previous_session": "\(previous)", "reason": pending.change.kind.rawValue,
                "old_file": pending.change.oldFileDetail, "events_in_old_file": "\(pending.eventsInOldFile)",
                "path": path, "created": pending.created ? "true" : "false",
            ]
            do {
                session = try connection.transaction("continuing session \(previous) in \(path)") { () throws -> Int64 in
                    let now = Date()
                    let id = try insertSession(configSnapshot: snapshot, now: now, extra: ["continues_session": "\(previous)"])
                    try insert(StudioEvent(kind: .databaseReplaced, wallTime: now, details: details), sessionID: id)
                    movedRecordings = try registerOpenRecordings(session: id)
                    return id
                }
            } catch {
                setProblem("could not start the session continuing \(previous) in \(path) (\(error)): tried again; the events wait")
                return
            }
        }
        if let session, let previous = pending.previousSession {
            currentSessionID = session
            sessionEventsInFile = 2
            nextHeartbeat = MonotonicClock.now() + UInt64(limits.heartbeatIntervalSeconds * 1e9)
            for index in backlog.indices where backlog[index].sessionID == previous { backlog[index].sessionID = session }
            if loss.sessionID == previous { loss.sessionID = session }
            recordingIDs = movedRecordings
        }
        pendingSwitch = nil
        shared.values.withLock {
            $0.statistics.databaseReplacements += 1
            $0.statistics.databaseProblem = nil
        }
        notify(.databaseFileReplaced(path: path, created: pending.created, previousSession: pending.previousSession, session: session))
    }

    /// Registers the recordings still being written in the new file's session, under the ids their callers
    /// hold where those are free there (always in a fresh file), else under new ones: returns those.
    /// Later ids in that file then exceed every id a caller holds, so they never mix.
    private func registerOpenRecordings(session: Int64) throws -> [Int64: Int64] {
        var moved: [Int64: Int64] = [:]
        for (id, recording) in openRecordings.sorted(by: { $0.key < $1.key }) {
            let taken = try !connection.query("SELECT 1 FROM recordings WHERE id = ?", [.integer(id)]) { _ in true }.isEmpty
            try connection.run("INSERT INTO recordings (id, session_id, camera, path, started_at) VALUES (?, ?, ?, ?, ?)", [
                taken ? .null : .integer(id), .integer(session), .optional(recording.camera), .text(recording.path),
                .integer(recording.startedAt),
            ])
            if taken { moved[id] = connection.lastInsertRowID }
        }
        return moved
    }

    /// The path holds something the store may not write (or cannot open): nothing is written; said once per reason.
    private func refuse(_ pending: PendingSwitch, reason: String) {
        let problem = "\(path) holds no database the store may write (\(reason)): nothing is written there; events are kept "
            + "(up to \(limits.backlogCapacity)) and the path is tried again. Move that file away, or put a studio database there."
        setProblem(problem)
        connection = SQLiteConnection(unavailable: path, reason: problem)
        var info = stat()
        let inode = (try? syscall("stat") { stat(path, &info) }) != nil ? "\(info.st_ino)" : "none"
        guard pending.refusal != "\(inode) \(reason)" else { return }
        var pending = pending
        pending.refusal = "\(inode) \(reason)"
        pendingSwitch = pending
        notify(.databaseFileRefused(path: path, reason: reason))
    }

    private func setProblem(_ problem: String) {
        shared.values.withLock { $0.statistics.databaseProblem = problem }
    }

    /// At the end of the store thread: if the file moved meanwhile, its WAL still goes into it (SQLite's own
    /// close would leave the WAL at the path); then the connection closes, and the watch after it.
    func closeFile() {
        if let old = pendingSwitch?.oldConnection {
            try? old.checkpointTruncatingWAL()
            old.close()
        } else if let watch = fileWatch, watch.change(connectionSaysMoved: connection.hasMoved) != nil {
            try? connection.checkpointTruncatingWAL()
        }
        connection.close()
        fileWatch?.close()
        fileWatch = nil
    }
}
