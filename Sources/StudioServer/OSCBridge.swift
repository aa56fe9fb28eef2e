import StudioCore
import Control
import TallyOut

/// OSC in as the control socket's twin, like `HTTPBridge`: its addresses come from the commands' own
/// POST routes (`/api/v1/X/{p}/Y` → `/studio/X/{p}/Y`; reads are not mapped), a message becomes a
/// `ControlRequest` dispatched by the same `ControlRouter` (same decoding, same errors, same replies as
/// the CLI's `--json`). Path parameters come from the address's segments; the OSC arguments fill the
/// command's `positionalArguments` in order; one more address segment naming an argument takes the one
/// OSC argument (`/studio/audio/mic1/mute T`). Numbers go as JSON numbers, except to a boolean argument
/// (`ArgumentKind.bool`: non-zero is true, as a TouchOSC button sends 1.0) and as whole numbers to an
/// integer one; strings only from `s`.
struct OSCBridge: Sendable {
    /// One command's address pattern: `["studio", "audio", "{input}"]`, and what it takes.
    struct Route: Sendable {
        var command: String
        var segments: [String]
        var positional: [String]
        var kinds: [String: ArgumentKind]

        /// `/studio/audio/{input}`, as docs/control-surfaces.md lists it.
        var address: String { "/" + segments.joined(separator: "/") }
    }

    static let prefix = "/api/v1/"
    let routes: [Route]

    init(_ commands: [any ControlCommand<StudioServer>.Type]) {
        routes = commands.flatMap { command in
            ((command.httpRoute.map { [$0] } ?? []) + command.otherHTTPRoutes).compactMap { route -> Route? in
                guard route.method == "POST", route.path.hasPrefix(Self.prefix) else { return nil }
                let segments = ["studio"] + route.path.dropFirst(Self.prefix.count).split(separator: "/").map(String.init)
                return Route(command: command.name, segments: segments, positional: command.positionalArguments, kinds: command.argumentKinds)
            }
        }
    }

    /// The request `message` asks for, or why there is none.
    func request(_ message: OSCMessage) -> Result<ControlRequest, OSCBridgeRefusal> {
        let parts = message.address.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard message.address.hasPrefix("/"), !parts.contains("") else {
            return .failure(.init(.unknownAddress, "an address is /studio/... with no empty segment"))
        }
        var named: (route: Route, parameters: [String: JSONValue], key: String?)?
        for route in routes {
            if let parameters = Self.match(route.segments, parts) { named = (route, parameters, nil); break }
        }
        if named == nil {
            for route in routes where parts.count == route.segments.count + 1 {
                guard let key = parts.last, route.kinds[key] != nil, route.segments.firstIndex(of: "{\(key)}") == nil,
                      let parameters = Self.match(route.segments, Array(parts.dropLast())) else { continue }
                named = (route, parameters, key)
                break
            }
        }
        guard let (route, parameters, key) = named else {
            return .failure(.init(.unknownAddress, "no command has this address (the addresses are in docs/control-surfaces.md)"))
        }
        let names = key.map { [$0] } ?? route.positional
        guard message.arguments.count <= names.count else {
            let takes = names.isEmpty ? "no arguments" : names.joined(separator: ", ")
            return .failure(.init(.invalidArgument, "\(route.command) takes \(takes) here, got \(message.arguments.count) argument(s)"))
        }
        var arguments = parameters
        for (name, argument) in zip(names, message.arguments) {
            guard let value = Self.value(argument, kind: route.kinds[name]) else { continue }
            arguments[name] = value
        }
        return .success(ControlRequest(id: "osc", command: route.command, arguments: arguments, origin: "osc"))
    }

    /// The path parameters when `pattern` matches `parts`: `{name}` takes the segment as a string,
    /// `{name:int}` as a whole number.
    static func match(_ pattern: [String], _ parts: [String]) -> [String: JSONValue]? {
        guard pattern.count == parts.count else { return nil }
        var parameters: [String: JSONValue] = [:]
        for (segment, part) in zip(pattern, parts) {
            if segment.hasPrefix("{"), segment.hasSuffix("}") {
                let inner = segment.dropFirst().dropLast().split(separator: ":")
                let name = String(inner[0])
                if inner.count > 1 {
                    guard let number = Int(part) else { return nil }
                    parameters[name] = .int(number)
                } else {
                    parameters[name] = .string(part)
                }
            } else if segment != part {
                return nil
            }
        }
        return parameters
    }

    /// An OSC argument as the JSON the command decodes; nil for `N` (left out).
    static func value(_ argument: OSCArgument, kind: ArgumentKind?) -> JSONValue? {
        let number: Double
        switch argument {
        case .string(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .null: return nil
        case .int32(let value): number = Double(value)
        case .int64(let value): number = Double(value)
        case .float32(let value): number = Double(value)
        case .float64(let value): number = value
        }
        switch kind {
        case .bool: return .bool(number != 0)
        case .number: return .number(number)
        default:
            if number.rounded() == number, abs(number) < 1e15 { return .int(Int(number)) }
            return .number(number)
        }
    }

    /// Runs `message` through `router`, answering `/studio/reply s:ADDRESS s:JSON` or `/studio/error
    /// s:ADDRESS s:CODE s:MESSAGE` as the command answers.
    func dispatch(_ router: ControlRouter<StudioServer>) -> OSCServer.Dispatch {
        { message, answer in
            let request: ControlRequest
            switch self.request(message) {
            case .failure(let refusal): return (refusal.refusal, refusal.reason)
            case .success(let made): request = made
            }
            router.handle(request) { reply in
                switch reply.outcome {
                case .success(let result):
                    answer(OSCServer.Answer(reply: OSCMessage("/studio/reply", [.string(message.address), .string(result.jsonText)])))
                case .failure(let error):
                    let refusal: OSCServer.Refusal = error.code == .invalidArgument ? .invalidArgument : .failed
                    answer(OSCServer.Answer(reply: OSCServer.error(message.address, error.code.rawValue, error.message),
                                            failure: (refusal, "\(message): \(error.message)")))
                }
            }
            return nil
        }
    }
}

struct OSCBridgeRefusal: Error, Equatable {
    var refusal: OSCServer.Refusal
    var reason: String
    init(_ refusal: OSCServer.Refusal, _ reason: String) {
        self.refusal = refusal
        self.reason = reason
    }
}
