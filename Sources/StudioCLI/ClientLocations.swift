import Foundation
import Control
import EventStore
import StudioViews
#if canImport(Glibc)
import Glibc
#endif

/// Where a client command finds the server's socket and the database: shared by `studio`'s own commands
/// and the engine's (`transcode --session`), so both resolve them the same way.
public enum ClientLocations {
    /// Where the server listens: `--socket`, `$STUDIO_SOCKET`, the per-user default; and when that
    /// socket does not exist but the system service's (`/run/studio/studio.sock`) does, that one, so an
    /// operator can reach the systemd-run server without flags.
    public static func socketPath(flag: String?, environment: [String: String]) -> String {
        let resolved = ControlSocketPath.resolve(flag: flag, configured: nil, environment: environment, uid: getuid())
        let explicit = flag != nil || !(environment["STUDIO_SOCKET"] ?? "").isEmpty
        let system = "/run/studio/studio.sock"
        if !explicit, !FileManager.default.fileExists(atPath: resolved), FileManager.default.fileExists(atPath: system) {
            return system
        }
        return resolved
    }

    /// `--db`, else the running server's database (its `status` says which), else `$STUDIO_DB` or the default.
    public static func databasePath(_ arguments: ParsedArguments, _ environment: [String: String]) throws -> String {
        if let flag = arguments.value("db") { return DatabasePath.resolve(flag: flag, environment: environment) }
        let socket = socketPath(flag: arguments.value("socket"), environment: environment)
        let client: ControlClient?
        do { client = try ControlClient(socketPath: socket) } catch where error.code == .untrustedSocket {
            throw ClientFailure(error.message)  // a planted socket is not "no server": say so
        } catch { client = nil }
        if let client, let database = (try? client.request("status", arguments: [:], timeoutSeconds: 10))?["database"]?.stringValue {
            return database
        }
        return DatabasePath.resolve(flag: nil, environment: environment)
    }

    /// The history a command reads after the show (`export`, `collect`, `transcode --session`): the database
    /// `databasePath` finds, opened read only, so a server running on it is not disturbed; a database that
    /// cannot be read is a failure naming `command` and the path.
    public static func readOnlyHistory(_ arguments: ParsedArguments, _ environment: [String: String], command: String) throws -> EventStore {
        let path = try databasePath(arguments, environment)
        do { return try EventStore.openReadOnly(path: path) } catch {
            throw ClientFailure("studio \(command): the database \(path) could not be read: \(error)")
        }
    }
}
