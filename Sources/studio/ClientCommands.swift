import Foundation
import StudioCore
import StudioViews
import EventStore
import Control
import StudioCLI
import StudioConfig
#if canImport(Glibc)
import Glibc
#endif

/// The operator's commands: each sends one request over the control socket and prints the reply,
/// as a table for people or as JSON (`--json`) for scripts.

enum CamerasCommand: ClientCommand {
    static let spec = CommandSpec("cameras", abstract: "list the server's cameras.", summary: "list cameras: name, backend, state, format",
                                  options: [.json, .socket])

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let reply = try call(socket, CameraSignatures.Cameras.self, NoArguments())
        print(json ? reply.json.jsonText : Format.cameras(reply.json))
        return 0
    }
}

enum CameraCommand: ClientCommand {
    static let spec = CommandSpec(
        "camera", abstract: "set a device camera's frame rate and/or size while it runs.",
        summary: "set a device camera's rate and/or size; prints what\nthe device granted (no options: its current mode)",
        positionals: [PositionalSpec("NAME")],
        options: [OptionSpec("fps", "RATE", help: "frame rate to ask for (30, 29.97, 30000/1001)"),
                  OptionSpec("size", "WxH", help: "size to ask for (e.g. 1280x720)"), .json, .socket],
        positionalsError: "expected one camera name, e.g. `studio camera cam1 --fps 30 --size 1280x720`",
        discussion: """
        The camera asks the device for the nearest mode it offers (V4L2: VIDIOC_S_FMT and
        VIDIOC_S_PARM) and prints what the device granted, which may differ from the request.
        Without --fps and --size it prints the current mode. Each change is logged as an
        event (camera_mode_changed). Test-pattern cameras have no adjustable mode.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let mode = CameraModeArguments(camera: arguments.positionals[0], size: arguments.value("size"), fps: arguments.value("fps"))
        let reply = try call(socket, CameraSignatures.Mode.self, mode)
        print(json ? reply.json.jsonText : Format.cameraMode(reply.json))
        return 0
    }
}

enum ControlsCommand: ClientCommand {
    static let spec = CommandSpec(
        "controls", abstract: "list a device camera's controls.", summary: "a device camera's controls: ranges, menus, values",
        positionals: [PositionalSpec("NAME")], options: [.json, .socket],
        positionalsError: "expected one camera name, e.g. `studio controls cam1`",
        discussion: """
        One line per control: name (to set it by), type, current value, range or menu items,
        and whether it is read-only or inactive (overridden by another control, such as an
        automatic mode).
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let reply = try call(socket, CameraSignatures.Controls.self, CameraArguments(camera: arguments.positionals[0]))
        print(json ? reply.json.jsonText : Format.controls(reply.json))
        return 0
    }
}

enum SetControlCommand: ClientCommand {
    static let usage = "expected a camera and NAME=VALUE, e.g. `studio control cam1 brightness=140`"
    static let spec = CommandSpec(
        "control", abstract: "set one control of a device camera.", summary: "set a control (e.g. brightness=140, test_pattern=0)",
        positionals: [PositionalSpec("NAME"), PositionalSpec("CONTROL=VALUE")], options: [.json, .socket],
        positionalsError: usage,
        discussion: """
        VALUE is a number, true/false (on/off) for switches, or a menu item's name or index.
        Unknown controls, values out of range, read-only and inactive controls are refused
        with the reason. Each change is logged as an event (camera_control_changed).
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        guard let equals = arguments.positionals[1].firstIndex(of: "=") else { throw UsageError("studio control: \(usage)") }
        let setting = arguments.positionals[1]
        let name = String(setting[..<equals]), value = String(setting[setting.index(after: equals)...])
        let reply = try call(socket, CameraSignatures.SetControl.self, SetControlArguments(camera: arguments.positionals[0], name: name, value: value))
        print(json ? reply.json.jsonText : "\(reply.value.camera): \(reply.value.control.summary)")
        return 0
    }
}

enum FocusCommand: ClientCommand {
    static let usage = "expected a camera and a point X Y from 0 to 1, e.g. `studio focus cam1 0.4 0.6`"
    static let spec = CommandSpec(
        "focus", abstract: "ask a camera to focus and expose on a point of its picture.",
        summary: "focus and expose camera NAME on point X Y (0 to 1)",
        positionals: [PositionalSpec("NAME"), PositionalSpec("X"), PositionalSpec("Y")], options: [.json, .socket],
        positionalsError: usage,
        discussion: """
        X and Y are fractions of the camera's picture: 0 0 is the top left corner, 0.5 0.5 the
        centre, 1 1 the bottom right. The camera uses the best it has and the reply says which:
        roi (a region-of-interest control around the point: focus and exposure follow it),
        one_shot_autofocus (one autofocus run on the whole picture), continuous_autofocus
        (switched on; it focuses where it judges), or none with the reason (test-pattern and
        PipeWire cameras, devices without such controls). Automatic exposure is switched on
        where the device has it. Each request is logged as an event (camera_focus).
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let fraction = ValueSyntax<Double>("a fraction of the picture from 0 to 1") { (text: String) throws(ValueError) -> Double in
            guard let value = Double(text), value.isFinite else { throw ValueError("expected a number from 0 to 1, e.g. 0.5") }
            return value
        }
        guard let x = try arguments.parse(positional: 1, "X", fraction), let y = try arguments.parse(positional: 2, "Y", fraction) else {
            throw UsageError("studio focus: \(usage)")
        }
        let reply = try call(socket, CameraSignatures.Focus.self, FocusArguments(camera: arguments.positionals[0], x: x, y: y))
        print(json ? reply.json.jsonText : Format.focus(reply.value))
        return 0
    }
}

enum MetricsCommand: ClientCommand {
    static let spec = CommandSpec(
        "metrics", abstract: "the server's counters in the Prometheus text format.",
        summary: "counters for Prometheus (program, encoder, outputs, cameras...)", options: [.json, .socket],
        discussion: """
        Prints what the HTTP console serves at /metrics (text exposition format 0.0.4): program
        fps, late and slate frames, encoder frames and drops, each output's bytes, drops,
        reconnects and state, each camera's frames, drops and state, ISO feeds, audio input and
        the event store. With --json, {"text": ...}.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let reply = try call(socket, StatusSignatures.Metrics.self, NoArguments())
        if json { print(reply.json.jsonText) } else { print(reply.value.text, terminator: "") }
        return 0
    }
}

enum StatusCommand: ClientCommand {
    static let spec = CommandSpec("status", abstract: "what the server is doing now.",
                                  summary: "session, uptime, program source and fps, encoder, outputs", options: [.json, .socket])

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let reply = try call(socket, StatusSignatures.Status.self, NoArguments())
        print(json ? reply.json.jsonText : Format.status(reply.json))
        return 0
    }
}

enum ReloadCommand: ClientCommand {
    static let spec = CommandSpec(
        "reload", abstract: "re-read the server's config file while the show runs.",
        summary: "re-read the config file (scenes, transition, backups)", options: [.json, .socket],
        discussion: """
        The server reads the file it was started with (--config) again, with the same flags on
        top, and applies what can change live: scenes, the default transition and the cameras'
        backups. Anything else that changed (program format, outputs, record, database, socket,
        video, audio, the pins' devices) refuses the whole reload, naming each key; so does a file
        with an error (its file:line) or one that removes a scene on program or preview. Then
        nothing changes and it exits 1. SIGHUP to the server does the same.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let reply = try call(socket, StatusSignatures.Reload.self, NoArguments())
        if json { print(reply.json.jsonText) } else {
            let changed = reply.value.changed
            print("reloaded \(reply.value.file): " + (changed.isEmpty ? "nothing changed" : "changed " + changed.joined(separator: ", ")))
            for warning in reply.value.warnings { writeStandardError("studio: warning: \(warning)\n") }
        }
        return 0
    }
}

/// A command that talks to the server. What they share: finding the server, asking it, reading
/// the database without it.
protocol ClientCommand: Command {}

extension ClientCommand {
    /// The socket to ask and whether to print JSON.
    static func common(_ arguments: ParsedArguments, _ environment: [String: String]) -> (socket: String, json: Bool) {
        (ClientLocations.socketPath(flag: arguments.value("socket"), environment: environment), arguments.flag("json"))
    }

    /// `log` and `recordings`: about the session SESSION (default: the current or latest one), from
    /// the server or, with none running, from the database.
    static func requestSession<Signature: CommandSignature>(_ socket: String, _ arguments: ParsedArguments, _ environment: [String: String],
                                                           _ signature: Signature.Type, offline: (EventStore, SessionRecord) throws -> JSONValue)
    throws -> JSONValue where Signature.Arguments == SessionArguments {
        let session = try sessionPositional(arguments, Signature.name)
        return try requestOrReadDatabase(socket, arguments, environment, signature, SessionArguments(session: session)) { store in
            try offline(store, try History.session(session, store: store, defaultSession: nil))
        }
    }

    /// The SESSION positional, if given: a positive id.
    static func sessionPositional(_ arguments: ParsedArguments, _ command: String) throws -> Int64? {
        guard let text = arguments.positionals.first else { return nil }
        guard let value = Int64(text), value > 0 else {
            throw UsageError("studio \(command): \(text) is not a session id (see `studio sessions`)")
        }
        return value
    }

    /// A command's arguments as the request's JSON object.
    static func requestArguments(_ arguments: some Encodable) throws -> [String: JSONValue] {
        try JSONValue(encoding: arguments).objectValue ?? [:]
    }

    static func connect(_ socket: String) throws -> ControlClient {
        do { return try ControlClient(socketPath: socket) } catch {
            throw ClientFailure("\(error)")
        }
    }

    /// Sends `signature`'s command and decodes its reply; a refusal or failure becomes the CLI's error.
    static func call<Signature: CommandSignature>(_ socket: String, _ signature: Signature.Type,
                                                  _ arguments: Signature.Arguments) throws -> TypedReply<Signature.Reply> {
        let client = try connect(socket)
        do { return try client.call(signature, arguments) } catch { throw ClientFailure(error.message) }
    }

    /// `signature`'s command with `query`, asked of the server when one runs, else `offline` on the database.
    static func requestOrReadDatabase<Signature: CommandSignature>(_ socket: String, _ arguments: ParsedArguments, _ environment: [String: String],
                                                                  _ signature: Signature.Type, _ query: Signature.Arguments, writable: Bool = false,
                                                                  offline: (EventStore) throws -> JSONValue) throws -> JSONValue {
        try requestOrReadDatabase(socket, arguments, environment, Signature.name, try requestArguments(query), writable: writable, offline: offline)
    }

    /// `sessions`, `log` and `recordings` ask the server when one runs, else read the database directly.
    static func requestOrReadDatabase(_ socket: String, _ arguments: ParsedArguments, _ environment: [String: String],
                                      _ command: String, _ requestArguments: [String: JSONValue], writable: Bool = false,
                                      offline: (EventStore) throws -> JSONValue) throws -> JSONValue {
        if let client = try runningServer(socket, arguments) {
            do { return try client.request(command, arguments: requestArguments, timeoutSeconds: 10) } catch {
                throw refusal(error, command)
            }
        }
        return try readDatabase(socket, arguments, environment, command, writable: writable, offline)
    }

    /// The server listening on `socket`, connected; nil when none answers or `--db` asks for the database itself.
    static func runningServer(_ socket: String, _ arguments: ParsedArguments) throws -> ControlClient? {
        guard arguments.value("db") == nil else { return nil }
        do { return try ControlClient(socketPath: socket) } catch where error.code == .untrustedSocket {
            throw ClientFailure(error.message)  // a planted socket is not "no server": say so
        } catch { return nil }
    }

    /// `offline` on the database (`--db`, `$STUDIO_DB`, the default), opened read-only unless `writable`.
    static func readDatabase(_ socket: String, _ arguments: ParsedArguments, _ environment: [String: String], _ command: String,
                             writable: Bool = false, _ offline: (EventStore) throws -> JSONValue) throws -> JSONValue {
        let path = DatabasePath.resolve(flag: arguments.value("db"), environment: environment)
        let store: EventStore
        if writable {
            // `prune` writes: the database must exist (never created here) and take the write lock.
            guard FileManager.default.fileExists(atPath: path) else {
                throw ClientFailure("no server answered on \(socket), and there is no database at \(path) (--db, $STUDIO_DB)")
            }
            do { store = try EventStore(path: path) } catch {
                throw ClientFailure("no server answered on \(socket), and the database \(path) could not be opened for writing: \(error)")
            }
        } else {
            do { store = try EventStore.openReadOnly(path: path) } catch {
                throw ClientFailure("no server answered on \(socket), and the database \(path) could not be read: \(error)")
            }
        }
        defer { store.close() }
        do { return try offline(store) } catch let error as ControlError { throw refusal(error, command) }
    }

    /// What the operator asked for does not exist or does not fit (a session, a camera, a kind, a time
    /// range): a usage error (exit 2) naming the command; anything else a failure (exit 1).
    static func refusal(_ error: ControlError, _ command: String) -> any Error {
        if [.invalidArgument, .notFound, .unknownCamera, .alreadyExists, .limitReached].contains(error.code) { return UsageError("studio \(command): \(error.message)") }
        return ClientFailure(error.message)
    }
}
