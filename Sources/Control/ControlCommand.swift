import Foundation

/// Where a control command runs.
public enum ControlExecution: Sendable {
    /// On the control thread, answering at once: quick work only (`ping`, `status`).
    case immediate
    /// On the router's worker thread (database queries, device calls), answering when done; the
    /// control thread goes on serving others meanwhile.
    case worker
    /// Started on the control thread, answered later from any thread through `start`'s `reply`
    /// (a cut answers once the program frame that carries it is out).
    case deferred
}

/// A control command, declared once: its name and summary (for `help`, the unknown-command message and
/// docs/control-protocol.md's list), its Codable arguments and reply, and where it runs. A
/// `ControlRouter` built from a table of these dispatches requests to them.
///
/// ```swift
/// enum Ping: ControlCommand {
///     static let name = "ping", summary = "answers {\"pong\": true}"
///     struct Reply: Encodable, Sendable { var pong = true }
///     static func run(_ arguments: NoArguments, in server: StudioServer) -> Reply { Reply() }
/// }
/// ```
///
/// A thrown `ControlError` becomes that error reply; any other error becomes `internal`.
public protocol ControlCommand<Context>: Sendable {
    /// What the command acts on (the studio server), attached to the router once it exists.
    associatedtype Context: AnyObject & Sendable
    /// The request's `arguments` object. A missing required argument, or one of the wrong type, is
    /// answered `invalid_argument` naming it; unknown arguments are ignored.
    associatedtype Arguments: Decodable & Sendable = NoArguments
    /// The reply's `result`, encoded with `ControlCoding.encoder`.
    associatedtype Reply: Encodable & Sendable

    static var name: String { get }
    /// One line for `help`.
    static var summary: String { get }
    static var execution: ControlExecution { get }
    /// Where the HTTP API serves the command (docs/http-api.md); nil: the control socket only. Its
    /// path's `{name}` segments become arguments, beside the query's (GET) or the JSON body's (POST).
    static var httpRoute: ControlHTTPRoute? { get }
    /// More routes to the same command (`audio`: GET lists, POST on `{input}` sets); none by default.
    static var otherHTTPRoutes: [ControlHTTPRoute] { get }
    /// The arguments a surface without names (OSC) gives in order after those in the route's path:
    /// `switch`'s `["source"]` makes `/studio/switch s:cam2`. None by default.
    static var positionalArguments: [String] { get }

    /// Answers an `immediate` or `worker` command.
    static func run(_ arguments: Arguments, in context: Context) throws -> Reply
    /// Starts a `deferred` command, which calls `reply` exactly once, from any thread.
    static func start(_ arguments: Arguments, in context: Context,
                      reply: @escaping @Sendable (Result<Reply, ControlError>) -> Void) throws
}

extension ControlCommand {
    public static var execution: ControlExecution { .immediate }
    public static var httpRoute: ControlHTTPRoute? { nil }
    public static var otherHTTPRoutes: [ControlHTTPRoute] { [] }
    public static var positionalArguments: [String] { [] }

    public static func run(_ arguments: Arguments, in context: Context) throws -> Reply {
        throw ControlError(.internal, "\(name) answers through start(_:in:reply:), not run(_:in:)")
    }

    public static func start(_ arguments: Arguments, in context: Context,
                             reply: @escaping @Sendable (Result<Reply, ControlError>) -> Void) throws {
        reply(.success(try run(arguments, in: context)))
    }

    public static var info: ControlCommandInfo { ControlCommandInfo(name: name, summary: summary) }
}

/// A command's HTTP route: `.get("/api/v1/status")`, `.post("/api/v1/camera/{camera}/controls")`. A
/// `{name}` path segment is the argument `name` (a string); `{name:int}` a whole number.
public struct ControlHTTPRoute: Sendable, Equatable {
    /// `GET` (reads) or `POST` (changes something).
    public var method: String
    public var path: String
    /// Served as it is rather than as JSON: the reply's string field of this name, with `contentType`
    /// (`/metrics`: Prometheus text). Nil: the reply is the JSON body.
    public var textField: String?
    public var contentType: String?

    public static func get(_ path: String) -> Self { Self(method: "GET", path: path) }
    public static func post(_ path: String) -> Self { Self(method: "POST", path: path) }
    /// A GET answered with the reply's `field` as a `contentType` body.
    public static func get(_ path: String, text field: String, contentType: String) -> Self {
        Self(method: "GET", path: path, textField: field, contentType: contentType)
    }
}

/// Arguments that are told where their request came from (`ControlRequest.origin`: `socket` or `http`):
/// the router sets `requester` after decoding, so a client cannot claim another origin. Leave
/// `requester` out of the type's `CodingKeys`.
public protocol RequesterAware {
    var requester: String { get set }
}

/// The arguments of a command that takes none (any `arguments` object is accepted).
public struct NoArguments: Codable, Sendable, Equatable {
    public init() {}
}

/// A command's name and summary, as `help` lists them.
public struct ControlCommandInfo: Codable, Sendable, Equatable {
    public var name: String
    public var summary: String
    public init(name: String, summary: String) {
        self.name = name
        self.summary = summary
    }
}

/// `help`'s reply: every command the server answers, in the order they are declared.
public struct HelpReply: Codable, Sendable, Equatable {
    public var commands: [ControlCommandInfo]
}

extension ControlRequest {
    /// The request's arguments decoded as `type`, with `invalid_argument` errors that name the argument:
    /// `switch: missing argument "camera"`, `switch: argument "camera" must be a string, got a number`.
    public func decodeArguments<Arguments: Decodable>(_ type: Arguments.Type) throws(ControlError) -> Arguments {
        do {
            return try JSONValue.object(arguments).decode(type)
        } catch let error as DecodingError {
            throw argumentError(error)
        } catch {
            throw ControlError(.invalidArgument, "\(command): \(error)")
        }
    }

    private func argumentError(_ error: DecodingError) -> ControlError {
        func name(_ path: [any CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
        func value(at path: [any CodingKey]) -> JSONValue? {
            var value: JSONValue? = .object(arguments)
            for key in path { value = key.intValue.flatMap { value?[$0] } ?? value?[key.stringValue] }
            return value
        }
        func mismatch(_ expected: Any.Type, _ path: [any CodingKey]) -> ControlError {
            let got = value(at: path)?.typeName ?? "nothing"
            return ControlError(.invalidArgument, "\(command): argument \"\(name(path))\" must be \(Self.typeName(expected)), got \(got)")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return ControlError(.invalidArgument, "\(command): missing argument \"\(name(context.codingPath + [key]))\"")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return mismatch(type, context.codingPath)
        case .dataCorrupted(let context):
            // A number that does not fit the integer asked for (2.5, 1e30). Foundation reports it without
            // a coding path; the arguments (flat objects) then name it: the one number that is no integer.
            if value(at: context.codingPath)?.doubleValue != nil { return mismatch(Int.self, context.codingPath) }
            if context.codingPath.isEmpty,
               let key = arguments.keys.sorted().first(where: { arguments[$0]?.doubleValue != nil && arguments[$0]?.intValue == nil }) {
                return ControlError(.invalidArgument, "\(command): argument \"\(key)\" must be an integer, got a number")
            }
            return ControlError(.invalidArgument, "\(command): argument \"\(name(context.codingPath))\": \(context.debugDescription)")
        @unknown default:
            return ControlError(.invalidArgument, "\(command): \(error)")
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type, is UInt32.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        default: return "\(type)"
        }
    }
}
