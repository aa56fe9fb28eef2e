import Foundation
import StudioCore
import StudioServer
import EventStore
import Control
#if canImport(Glibc)
import Glibc
#endif

struct ClientFailure: Error {
    let message: String
    let exitCode: Int32
    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }
}

/// The operator's commands: each sends one request over the control socket and prints the reply,
/// as a table for people or as JSON (`--json`) for scripts.
enum ClientCommands {
    static func run(_ command: String, _ words: [String], environment: [String: String]) throws -> Int32 {
        let valued: Set<String> = command == "sessions" ? ["socket", "db", "limit"]
            : command == "log" || command == "recordings" ? ["socket", "db"]
            : command == "camera" ? ["socket", "fps", "size"] : ["socket"]
        let arguments = try Arguments(words, command: command, valued: valued, switches: command == "switch" ? [] : ["json"])
        let json = arguments.flag("json")
        let socket = clientSocketPath(flag: arguments.value("socket"), environment: environment)

        switch command {
        case "switch":
            guard arguments.positionals.count == 1 else {
                throw Arguments.Failure(message: "studio switch: expected one camera name, e.g. `studio switch cam2`")
            }
            let name = arguments.positionals[0]
            let result = try request(socket, "switch", ["camera": .string(name)])
            let at = result["program_ms"]?.intValue.map { " at program time \(Format.programTime(Int64($0)))" } ?? ""
            print("program: \(result["camera"]?.stringValue ?? name)\(at)")
        case "cameras":
            try noPositionals(arguments, command)
            let result = try request(socket, "cameras", [:])
            if json { print(result.jsonText) } else { print(Format.cameras(result)) }
        case "status":
            try noPositionals(arguments, command)
            let result = try request(socket, "status", [:])
            if json { print(result.jsonText) } else { print(Format.status(result)) }
        case "sessions":
            try noPositionals(arguments, command)
            var limit: Int?
            if let text = arguments.value("limit") {
                guard let value = Int(text), value > 0 else { throw Arguments.Failure(message: "studio sessions: --limit expects a positive number") }
                limit = value
            }
            let result = try requestOrReadDatabase(socket, arguments, environment, "sessions",
                                                   limit.map { ["limit": .number(Double($0))] } ?? [:]) { store in
                Views.sessions(try store.sessions(limit: limit))
            }
            if json { print(result.jsonText) } else { print(Format.sessions(result)) }
        case "log":
            guard arguments.positionals.count <= 1 else { throw Arguments.Failure(message: "studio log: expected at most one session id") }
            var session: Int64?
            if let text = arguments.positionals.first {
                guard let value = Int64(text), value > 0 else { throw Arguments.Failure(message: "studio log: \(text) is not a session id (see `studio sessions`)") }
                session = value
            }
            let result = try requestOrReadDatabase(socket, arguments, environment, "log",
                                                   session.map { ["session": .number(Double($0))] } ?? [:]) { store in
                guard let record = try store.session(id: session) else {
                    throw ClientFailure(session.map { "no session \($0) in the database" } ?? "the database has no sessions yet")
                }
                return Views.log(session: record, events: try store.events(sessionID: record.id))
            }
            if json { print(result.jsonText) } else { print(Format.log(result)) }
        case "recordings":
            guard arguments.positionals.count <= 1 else { throw Arguments.Failure(message: "studio recordings: expected at most one session id") }
            var session: Int64?
            if let text = arguments.positionals.first {
                guard let value = Int64(text), value > 0 else { throw Arguments.Failure(message: "studio recordings: \(text) is not a session id (see `studio sessions`)") }
                session = value
            }
            let result = try requestOrReadDatabase(socket, arguments, environment, "recordings",
                                                   session.map { ["session": .number(Double($0))] } ?? [:]) { store in
                guard let record = try store.session(id: session) else {
                    throw ClientFailure(session.map { "no session \($0) in the database" } ?? "the database has no sessions yet")
                }
                return Views.recordings(session: record, recordings: try store.recordings(sessionID: record.id))
            }
            if json { print(result.jsonText) } else { print(Format.recordings(result)) }
        case "camera":
            guard arguments.positionals.count == 1 else {
                throw Arguments.Failure(message: "studio camera: expected one camera name, e.g. `studio camera cam1 --fps 30 --size 1280x720`")
            }
            var requestArguments: [String: JSONValue] = ["camera": .string(arguments.positionals[0])]
            if let fps = arguments.value("fps") { requestArguments["fps"] = .string(fps) }
            if let size = arguments.value("size") { requestArguments["size"] = .string(size) }
            let result = try request(socket, "camera", requestArguments)
            if json { print(result.jsonText) } else { print(Format.cameraMode(result)) }
        case "controls":
            guard arguments.positionals.count == 1 else {
                throw Arguments.Failure(message: "studio controls: expected one camera name, e.g. `studio controls cam1`")
            }
            let result = try request(socket, "controls", ["camera": .string(arguments.positionals[0])])
            if json { print(result.jsonText) } else { print(Format.controls(result)) }
        case "control":
            guard arguments.positionals.count == 2, let equals = arguments.positionals[1].firstIndex(of: "=") else {
                throw Arguments.Failure(message: "studio control: expected a camera and NAME=VALUE, e.g. `studio control cam1 brightness=140`")
            }
            let setting = arguments.positionals[1]
            let name = String(setting[..<equals]), value = String(setting[setting.index(after: equals)...])
            let result = try request(socket, "control", ["camera": .string(arguments.positionals[0]), "name": .string(name), "value": .string(value)])
            if json { print(result.jsonText) } else {
                print("\(result["camera"]?.stringValue ?? ""): \(result["control"]?["summary"]?.stringValue ?? name)")
            }
        case "watch":
            try noPositionals(arguments, command)
            let client = try connect(socket)
            try client.subscribe { event in
                // Line by line, so `studio watch | grep switch` shows each event as it happens; stop
                // when the reader goes away.
                writeAll(1, (json ? event.jsonText : Format.eventLine(event)) + "\n")
            }
        default:
            break
        }
        return 0
    }

    /// Where the server listens: `--socket`, `$STUDIO_SOCKET`, the per-user default; and when that
    /// socket does not exist but the system service's (`/run/studio/studio.sock`) does, that one, so an
    /// operator can reach the systemd-run server without flags.
    static func clientSocketPath(flag: String?, environment: [String: String]) -> String {
        let resolved = ControlSocketPath.resolve(flag: flag, configured: nil, environment: environment, uid: getuid())
        let explicit = flag != nil || !(environment["STUDIO_SOCKET"] ?? "").isEmpty
        let system = "/run/studio/studio.sock"
        if !explicit, !FileManager.default.fileExists(atPath: resolved), FileManager.default.fileExists(atPath: system) {
            return system
        }
        return resolved
    }

    static func noPositionals(_ arguments: Arguments, _ command: String) throws {
        if let extra = arguments.positionals.first {
            throw Arguments.Failure(message: "studio \(command): unexpected argument \(extra) (see `studio \(command) --help`)")
        }
    }

    static func connect(_ socket: String) throws -> ControlClient {
        do { return try ControlClient(socketPath: socket) } catch {
            throw ClientFailure("\(error)")
        }
    }

    static func request(_ socket: String, _ command: String, _ arguments: [String: JSONValue]) throws -> JSONValue {
        let client = try connect(socket)
        do { return try client.request(command, arguments: arguments, timeoutSeconds: 10) } catch {
            throw ClientFailure(error.message)
        }
    }

    /// `sessions`, `log` and `recordings` ask the server when one runs, else read the database directly.
    static func requestOrReadDatabase(_ socket: String, _ arguments: Arguments, _ environment: [String: String],
                                      _ command: String, _ requestArguments: [String: JSONValue],
                                      offline: (EventStore) throws -> JSONValue) throws -> JSONValue {
        if arguments.value("db") == nil, let client = try? ControlClient(socketPath: socket) {
            do { return try client.request(command, arguments: requestArguments, timeoutSeconds: 10) } catch {
                throw ClientFailure(error.message)
            }
        }
        let path = DatabasePath.resolve(flag: arguments.value("db"), environment: environment)
        let store: EventStore
        do { store = try EventStore.openReadOnly(path: path) } catch {
            throw ClientFailure("no server answered on \(socket), and the database \(path) could not be read: \(error)")
        }
        defer { store.close() }
        return try offline(store)
    }
}
