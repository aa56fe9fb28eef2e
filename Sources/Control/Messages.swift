import Foundation
import StudioCore

/// The code of a control error, as sent on the wire (`"code": "unknown_camera"`).
public struct ControlErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    // Sent by the server.
    /// The line was not a JSON object, or `id`/`command`/`arguments` were missing or of the wrong type.
    public static let badRequest = ControlErrorCode(rawValue: "bad_request")
    /// No handler knows the command.
    public static let unknownCommand = ControlErrorCode(rawValue: "unknown_command")
    /// An argument is missing or has the wrong type or value.
    public static let invalidArgument = ControlErrorCode(rawValue: "invalid_argument")
    /// The message exceeded the size limit (64 KiB); it was discarded up to the next newline.
    public static let tooLarge = ControlErrorCode(rawValue: "too_large")
    /// A `camera` argument names no known camera.
    public static let unknownCamera = ControlErrorCode(rawValue: "unknown_camera")
    /// Something named by the request (a session, an output) does not exist.
    public static let notFound = ControlErrorCode(rawValue: "not_found")
    /// What the request would create exists already (an output of that name).
    public static let alreadyExists = ControlErrorCode(rawValue: "already_exists")
    /// The request would go beyond one of the server's limits (the number of outputs).
    public static let limitReached = ControlErrorCode(rawValue: "limit_reached")
    /// The server cannot do it now (for example it is starting or stopping).
    public static let unavailable = ControlErrorCode(rawValue: "unavailable")
    /// The server already has as many clients as it accepts.
    public static let busy = ControlErrorCode(rawValue: "busy")
    /// The connection was closed for sending no request for a while (or to make room for a new
    /// client while the server was full).
    public static let idle = ControlErrorCode(rawValue: "idle")
    /// The handler failed in an unexpected way.
    public static let `internal` = ControlErrorCode(rawValue: "internal")

    // Raised by the client only (never on the wire).
    /// No server listens on the socket path.
    public static let noServer = ControlErrorCode(rawValue: "no_server")
    /// The socket or its directory belongs to another user: the client refused to connect.
    public static let untrustedSocket = ControlErrorCode(rawValue: "untrusted_socket")
    /// Connecting, writing or reading the socket failed for another reason.
    public static let connectionFailed = ControlErrorCode(rawValue: "connection_failed")
    /// The server closed the connection.
    public static let connectionClosed = ControlErrorCode(rawValue: "connection_closed")
    /// No reply arrived in time.
    public static let timeout = ControlErrorCode(rawValue: "timeout")
}

/// An error reply (or a client-side failure): a machine-readable code and a message for people.
public struct ControlError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    public var code: ControlErrorCode
    public var message: String
    public init(_ code: ControlErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(message) (\(code.rawValue))" }

    var json: JSONValue { ["code": .string(code.rawValue), "message": .string(message)] }
}

/// One request from a client: `{"id": 1, "command": "switch", "arguments": {"camera": "cam2"}}`.
public struct ControlRequest: Sendable, Equatable {
    /// Echoed in the reply. A number or a string, chosen by the client.
    public var id: JSONValue
    public var command: String
    public var arguments: [String: JSONValue]
    /// Where the request came from: `socket` (the control socket: the CLI, scripts) or `http` (the HTTP
    /// API: the console, curl). Set by the server side that received it, never by the client; commands
    /// whose arguments are `RequesterAware` see it (the history says who changed what).
    public var origin: String

    public init(id: JSONValue, command: String, arguments: [String: JSONValue] = [:], origin: String = "socket") {
        self.id = id
        self.command = command
        self.arguments = arguments
        self.origin = origin
    }

    /// Parses one line of the protocol. The id is returned even when the rest is bad, so the error
    /// reply can carry it.
    static func parse(_ line: some Collection<UInt8>) -> (id: RequestID, result: Result<ControlRequest, ControlError>) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: line)
        } catch {
            return (.null, .failure(ControlError(.badRequest, error.description)))
        }
        guard case .object(let members) = value else {
            return (.null, .failure(ControlError(.badRequest, "a request must be a JSON object, got \(value.typeName)")))
        }
        let idValue = members["id"] ?? .null
        let id = RequestID(idValue, in: line)
        switch idValue {
        case .int, .number, .string: break
        case .null:
            return (.null, .failure(ControlError(.badRequest, "the request has no \"id\" (a number or a string)")))
        default:
            return (.null, .failure(ControlError(.badRequest, "\"id\" must be a number or a string, got \(idValue.typeName)")))
        }
        guard let commandValue = members["command"] else {
            return (id, .failure(ControlError(.badRequest, "the request has no \"command\"")))
        }
        guard let command = commandValue.stringValue, !command.isEmpty else {
            return (id, .failure(ControlError(.badRequest, "\"command\" must be a non-empty string, got \(commandValue.typeName)")))
        }
        var arguments: [String: JSONValue] = [:]
        if let argumentsValue = members["arguments"], !argumentsValue.isNull {
            guard let object = argumentsValue.objectValue else {
                return (id, .failure(ControlError(.badRequest, "\"arguments\" must be an object, got \(argumentsValue.typeName)")))
            }
            arguments = object
        }
        return (id, .success(ControlRequest(id: idValue, command: command, arguments: arguments)))
    }

    /// The request as one line of JSON (without the newline).
    var line: String {
        var members: [String: JSONValue] = ["id": id, "command": .string(command)]
        if !arguments.isEmpty { members["arguments"] = .object(arguments) }
        return JSONValue.object(members).jsonText
    }
}

/// A handler's answer to one request: a result or an error. (Events for subscribers go through
/// `ControlServer.broadcast`.)
public struct ControlReply: Sendable, Equatable {
    public var outcome: Result<JSONValue, ControlError>

    public init(outcome: Result<JSONValue, ControlError>) {
        self.outcome = outcome
    }

    public static func success(_ result: JSONValue = [:]) -> ControlReply {
        ControlReply(outcome: .success(result))
    }

    public static func failure(_ error: ControlError) -> ControlReply {
        ControlReply(outcome: .failure(error))
    }

    public static func failure(_ code: ControlErrorCode, _ message: String) -> ControlReply {
        ControlReply(outcome: .failure(ControlError(code, message)))
    }

    /// The reply line for request `id` (without the newline): keys sorted, as `JSONValue` writes them,
    /// and the id exactly as the client wrote it.
    static func line(id: RequestID, outcome: Result<JSONValue, ControlError>) -> String {
        switch outcome {
        case .success(let result): return "{\"id\":\(id.text),\"ok\":true,\"result\":\(result.jsonText)}"
        case .failure(let error): return "{\"error\":\(error.json.jsonText),\"id\":\(id.text),\"ok\":false}"
        }
    }

    /// The line pushed to subscribers (without the newline); the HTTP API's event stream sends the same.
    public static func eventLine(_ event: JSONValue) -> String {
        JSONValue.object(["event": event]).jsonText
    }
}

/// Answers control requests. `handle` is called on the control thread and must not block it: do quick
/// work inline, and hand anything slow (a cut that completes on the next program frame, a database
/// query) to another thread, calling `reply` from there when done. `reply` may be called from any
/// thread, exactly once; further calls are ignored, and a reply closure released without being called
/// sends an `internal` error so the client is not left waiting.
public protocol ControlHandler: Sendable {
    func handle(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void)
}

/// A handler made of one closure.
public struct ClosureControlHandler: ControlHandler {
    private let body: @Sendable (ControlRequest, @escaping @Sendable (ControlReply) -> Void) -> Void

    public init(_ body: @escaping @Sendable (ControlRequest, @escaping @Sendable (ControlReply) -> Void) -> Void) {
        self.body = body
    }

    public func handle(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
        body(request, reply)
    }
}

/// A studio event as control clients see it: broadcast to subscribers (`{"event": ...}`) and listed
/// by `log` (which adds the event's `id` and `session`):
/// `{"kind":"switch","camera":"cam2","wall_time":"2024-05-01T12:00:00.123Z","program_ms":1234,"details":{}}`.
/// `camera` and `program_ms` are null when the event has none.
public struct EventView: Codable, Sendable, Equatable {
    /// The stored event's id and session (`log` only; left out of broadcasts).
    public var id: Int64?
    public var session: Int64?
    public var kind: EventKind
    @Nullable public var camera: String?
    public var wallTime: Date
    @Nullable public var programMilliseconds: Int64?
    public var details: [String: String]

    public init(id: Int64? = nil, session: Int64? = nil, kind: EventKind, camera: String?, wallTime: Date,
                programMilliseconds: Int64?, details: [String: String]) {
        self.id = id
        self.session = session
        self.kind = kind
        self.camera = camera
        self.wallTime = wallTime
        self.programMilliseconds = programMilliseconds
        self.details = details
    }

    /// A live event, as broadcast.
    public init(_ event: StudioEvent) {
        self.init(kind: event.kind, camera: event.camera?.name, wallTime: event.wallTime,
                  programMilliseconds: event.programTime?.milliseconds, details: event.details)
    }

    enum CodingKeys: String, CodingKey {
        case id, session, kind, camera, details
        case wallTime = "wall_time"
        case programMilliseconds = "program_ms"
    }
}
