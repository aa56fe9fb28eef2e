/// A control command as both ends know it: its name and summary, what it takes and what it answers,
/// and where the HTTP API serves it. Declared once, in the module the server and the CLI both link
/// (`StudioViews`); the server implements it (`SignedCommand`, a `ControlCommand` that takes all of
/// this from its signature) and the CLI calls it typed (`ControlClient.call`), so the command's name and
/// argument keys are written once, not once per end.
public protocol CommandSignature: Sendable {
    associatedtype Arguments: Codable & Sendable = NoArguments
    associatedtype Reply: Codable & Sendable
    static var name: String { get }
    /// One line for `help`.
    static var summary: String { get }
    /// Where the HTTP API serves it; nil: the control socket only.
    static var httpRoute: ControlHTTPRoute? { get }
    static var otherHTTPRoutes: [ControlHTTPRoute] { get }
    /// The arguments OSC gives in order after the route's path parameters (`ControlCommand.positionalArguments`).
    static var positionalArguments: [String] { get }
}

extension CommandSignature {
    public static var httpRoute: ControlHTTPRoute? { nil }
    public static var otherHTTPRoutes: [ControlHTTPRoute] { [] }
    public static var positionalArguments: [String] { [] }
}

/// A server command implementing a `CommandSignature`: its name, summary, routes, arguments and reply
/// are the signature's.
public protocol SignedCommand: ControlCommand where Arguments == Signature.Arguments, Reply == Signature.Reply {
    associatedtype Signature: CommandSignature
}

extension SignedCommand {
    public static var name: String { Signature.name }
    public static var summary: String { Signature.summary }
    public static var httpRoute: ControlHTTPRoute? { Signature.httpRoute }
    public static var otherHTTPRoutes: [ControlHTTPRoute] { Signature.otherHTTPRoutes }
    public static var positionalArguments: [String] { Signature.positionalArguments }
}

/// A typed reply and the JSON it came as (`--json` prints the server's own text).
public struct TypedReply<Value: Sendable>: Sendable {
    public var value: Value
    public var json: JSONValue
}

extension ControlClient {
    /// Sends `signature`'s command with `arguments` and decodes its reply. A reply this client cannot
    /// read (a server of another version) is `internal`, saying what did not fit.
    public func call<Signature: CommandSignature>(_ signature: Signature.Type, _ arguments: Signature.Arguments,
                                                  timeoutSeconds: Double = 10) throws(ControlError) -> TypedReply<Signature.Reply> {
        let object: [String: JSONValue]
        do { object = try JSONValue(encoding: arguments).objectValue ?? [:] } catch {
            throw ControlError(.internal, "\(Signature.name): cannot encode the arguments: \(error)")
        }
        let json = try request(Signature.name, arguments: object, timeoutSeconds: timeoutSeconds)
        do { return TypedReply(value: try json.decode(Signature.Reply.self), json: json) } catch {
            throw ControlError(.internal, "\(Signature.name): the server's reply does not read as this client expects (another version of studio?): \(Self.unreadable(error))")
        }
    }

    /// Where a reply did not fit, in words: the field and what was wrong with it.
    private static func unreadable(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "it is not what was expected" }
        func path(_ keys: [any CodingKey]) -> String { keys.isEmpty ? "the reply" : keys.map(\.stringValue).joined(separator: ".") }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(path(context.codingPath)) has another type"
        case .dataCorrupted(let context): return "\(path(context.codingPath)) cannot be read"
        @unknown default: return "it is not what was expected"
        }
    }
}
