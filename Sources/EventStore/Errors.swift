import Foundation
import StudioSystem

/// Why an event store call failed. `description` is written for an operator: it names the file and says
/// what to do where there is something to do.
public enum EventStoreError: Error, Sendable, CustomStringConvertible {
    /// A SQLite call failed (the error carries sqlite3_errmsg and what was being done).
    case sqlite(SQLiteError)
    /// The database's directory could not be created.
    case cannotCreateDirectory(path: String, reason: String)
    /// The database or its directory is not writable.
    case notWritable(path: String, reason: String)
    /// `openReadOnly` on a file that does not exist.
    case databaseMissing(path: String)
    /// `openReadOnly` on a file that cannot be looked at (permissions, a path component not a directory).
    case cannotRead(path: String, reason: String)
    /// The file is a SQLite database but has no `schema_migrations` table.
    case notAnEventDatabase(path: String)
    /// A migration recorded as applied differs from the one in this binary (a landed migration was edited).
    /// `difference` says where (the first differing line of the texts, or the checksum of an older row).
    case migrationChanged(version: Int, appliedName: String, embeddedName: String, difference: String, path: String)
    /// The database has a migration this binary does not know (it was written by a newer `studio`).
    case migrationUnknown(version: Int, name: String, path: String, newestKnown: Int)
    /// A migration of this binary is missing from the database although later ones are applied.
    case migrationOutOfOrder(version: Int, name: String, path: String, newestApplied: Int)
    /// A migration's SQL committed or rolled back the transaction the store runs it in.
    case migrationEndedTransaction(name: String)
    /// A read-only open of a database that still needs migrations.
    case schemaOutdated(path: String, appliedVersion: Int, requiredVersion: Int)
    /// A write on a store opened with `openReadOnly`.
    case readOnly(operation: String)
    /// A call after `close()`.
    case closed(operation: String)
    /// A call that needs a session (`endSession`, `addRecording`) while none is open in this store.
    case noCurrentSession(operation: String)
    /// `startSession` while this store already has one open.
    case sessionAlreadyOpen(id: Int64)
    case invalidConfigSnapshot(reason: String)
    case invalidArgument(String)
    case unknownRecording(id: Int64)

    public var description: String {
        switch self {
        case .sqlite(let error):
            return error.description
        case .cannotCreateDirectory(let path, let reason):
            return "cannot create the directory for the event database \(path): \(reason)"
        case .notWritable(let path, let reason):
            return "the event database \(path) is not writable: \(reason)"
        case .databaseMissing(let path):
            return "no event database at \(path) (the server creates it on its first start)"
        case .cannotRead(let path, let reason):
            return "cannot read the event database \(path): \(reason)"
        case .notAnEventDatabase(let path):
            return "\(path) is not a studio event database (it has no schema_migrations table)"
        case .migrationChanged(let version, let appliedName, let embeddedName, let difference, let path):
            return "migration \(version) applied to \(path) as \(appliedName) differs from \(embeddedName) in this binary "
                + "(\(difference)): a landed migration "
                + "was changed. Migrations are never edited once landed; restore the original file and add a new migration."
        case .migrationUnknown(let version, let name, let path, let newestKnown):
            return "\(path) has migration \(name) (version \(version)), but this binary knows migrations up to "
                + "version \(newestKnown) only: it was written by a newer studio"
        case .migrationOutOfOrder(let version, let name, let path, let newestApplied):
            return "migration \(name) (version \(version)) is missing from \(path) although version \(newestApplied) "
                + "is applied: migrations must be added at the end, never inserted"
        case .migrationEndedTransaction(let name):
            return "migration \(name) ends the transaction it runs in (COMMIT/ROLLBACK); remove that statement"
        case .schemaOutdated(let path, let appliedVersion, let requiredVersion):
            return "\(path) is at schema version \(appliedVersion), this binary needs \(requiredVersion): "
                + "start the server once to migrate it"
        case .readOnly(let operation):
            return "\(operation): the event store was opened read-only"
        case .closed(let operation):
            return "\(operation): the event store is closed"
        case .noCurrentSession(let operation):
            return "\(operation): no session is open (call startSession first)"
        case .sessionAlreadyOpen(let id):
            return "a session (\(id)) is already open in this event store; end it first"
        case .invalidConfigSnapshot(let reason):
            return "the configuration snapshot is not a JSON text: \(reason)"
        case .invalidArgument(let text):
            return text
        case .unknownRecording(let id):
            return "no recording with id \(id)"
        }
    }
}

extension Date {
    /// Milliseconds since the Unix epoch, as the store keeps times (rounded to the nearest ms; a date
    /// beyond what Int64 holds is held at its ends rather than trapping: the callers check their ranges,
    /// this keeps a missed one from ending the store thread).
    var unixMilliseconds: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return milliseconds < 0 ? .min : .max }
        if milliseconds >= 9.223372036854775807e18 { return .max }
        if milliseconds <= -9.223372036854775808e18 { return .min }
        return Int64(milliseconds)
    }
    init(unixMilliseconds: Int64) { self.init(timeIntervalSince1970: Double(unixMilliseconds) / 1000) }
}
