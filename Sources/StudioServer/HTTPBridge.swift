import Foundation
import StudioCore
import StudioConfig
import Control
import HTTPConsole

/// The HTTP API as the control socket's twin: its routes are the commands' own `httpRoute`s, and a
/// request becomes a `ControlRequest` dispatched by the same `ControlRouter` (same argument decoding,
/// same errors, same JSON as the CLI's `--json`). HTTPConsole itself knows no command.
enum HTTPBridge {
    /// Every command that declares a route, in `ServerCommands.all` order.
    static func routes(_ commands: [any ControlCommand<StudioServer>.Type]) -> [HTTPRoute] {
        commands.flatMap { command in
            ((command.httpRoute.map { [$0] } ?? []) + command.otherHTTPRoutes).map { route in
                guard let method = HTTPMethod(rawValue: route.method) else {
                    preconditionFailure("\(command.name): HTTP method \(route.method) is neither GET nor POST")
                }
                return HTTPRoute(method, route.path, name: command.name)
            }
        }
    }

    /// The HTTP status of each control error code, in one table; a code not in it is a 500.
    static let statuses: [ControlErrorCode: Int] = [
        .badRequest: 400, .invalidArgument: 400,
        .unknownCommand: 404, .unknownCamera: 404, .notFound: 404,
        .alreadyExists: 409, .limitReached: 409,
        .tooLarge: 413,
        .busy: 503, .unavailable: 503,
        .timeout: 504,
        .internal: 500,
    ]

    static func status(of code: ControlErrorCode) -> Int { statuses[code] ?? 500 }

    /// Answers a matched request through `router`, from whichever thread the command answers on.
    static func handler(_ router: ControlRouter<StudioServer>, commands: [any ControlCommand<StudioServer>.Type]) -> HTTPHandler {
        // Routes that serve a text field rather than JSON, by command name.
        let texts = Dictionary(uniqueKeysWithValues: commands.compactMap { command -> (String, ControlHTTPRoute)? in
            guard let route = command.httpRoute, route.textField != nil else { return nil }
            return (command.name, route)
        })
        return { call, respond in
            let arguments: [String: JSONValue]
            do { arguments = try Self.arguments(call) } catch {
                let error = error as? ControlError ?? ControlError(.badRequest, "\(error)")
                return respond(.error(status(of: error.code), code: error.code.rawValue, error.message))
            }
            router.handle(ControlRequest(id: "http", command: call.route.name, arguments: arguments, origin: "http")) { reply in
                switch reply.outcome {
                case .success(let result):
                    if let route = texts[call.route.name], let field = route.textField, let text = result[field]?.stringValue {
                        respond(HTTPResponse(status: 200, contentType: route.contentType ?? "text/plain", body: Array(text.utf8)))
                    } else {
                        respond(.json(200, result.jsonText))
                    }
                case .failure(let error): respond(.error(status(of: error.code), code: error.code.rawValue, error.message))
                }
            }
        }
    }

    /// The command's arguments: a POST's JSON body (an object; empty means none) or a GET's query
    /// items, with the path's parameters on top.
    static func arguments(_ call: HTTPCall) throws(ControlError) -> [String: JSONValue] {
        var arguments: [String: JSONValue] = [:]
        if call.route.method == .post {
            if !call.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
                let value: JSONValue
                do { value = try JSONValue(parsing: call.body) } catch {
                    throw ControlError(.badRequest, "the body is not JSON: \(error)")
                }
                guard let object = value.objectValue else {
                    throw ControlError(.badRequest, "the body must be a JSON object, got \(value.typeName)")
                }
                arguments = object
            }
        } else {
            // Query items: a whole number or true/false as such, anything else as text (`?limit=5`).
            for (key, text) in call.query {
                if let number = Int(text) { arguments[key] = .int(number) }
                else if text == "true" || text == "false" { arguments[key] = .bool(text == "true") }
                else { arguments[key] = .string(text) }
            }
        }
        for (name, value) in call.parameters {
            switch value {
            case .text(let text): arguments[name] = .string(text)
            case .integer(let number): arguments[name] = .int(Int(number))
            }
        }
        return arguments
    }
}

/// The HTTP token: `http.token` when set; else, on an address other than loopback, one generated at
/// first start and kept (mode 0600) in `http-token` next to the database; else none.
public enum HTTPToken {
    public static func path(databasePath: String) -> String {
        ((databasePath as NSString).deletingLastPathComponent as NSString).appendingPathComponent("http-token")
    }

    /// The token in force for `settings`, generating and storing one when needed.
    static func resolve(_ settings: HTTPSettings, databasePath: String) throws -> String? {
        if let token = settings.token { return token }
        guard !settings.listen.isLoopback else { return nil }
        let path = path(databasePath: databasePath)
        if let stored = try? String(contentsOfFile: path, encoding: .utf8) {
            let token = stored.trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty {
                // The server user's alone, even if someone loosened it since.
                chmod(path, 0o600)
                return token
            }
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw ServerError("cannot write the HTTP token to \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, 0o600)
        let line = Array((token + "\n").utf8)
        guard line.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == line.count else {
            throw ServerError("cannot write the HTTP token to \(path): \(String(cString: strerror(errno)))")
        }
        return token
    }

    /// `studio doctor`'s lines: where the console listens and how to get its token; with TLS, whether
    /// this libmicrohttpd can serve it and whether the key file is kept to its owner.
    static func doctorChecks(_ settings: HTTPSettings, databasePath: String) -> [Doctor.Check] {
        var checks = [doctorCheck(settings, databasePath: databasePath)]
        guard settings.enabled, let tls = settings.tls else { return checks }
        if !HTTPConsole.supportsTLS {
            checks.append(Doctor.Check("http", .problem, HTTPConsole.noTLS))
        } else {
            checks.append(Doctor.Check("http", .ok, "TLS with the certificate \(tls.certificate) and the key \(tls.key)",
                                       details: ["tls_cert": tls.certificate, "tls_key": tls.key]))
        }
        if let exposure = tls.keyExposure {
            checks.append(Doctor.Check("http", .warning, exposure, fix: "chmod 600 \(tls.key) (and chown it to the server's user)"))
        }
        return checks
    }

    /// `studio doctor`'s line: where the console listens and how to get its token.
    static func doctorCheck(_ settings: HTTPSettings, databasePath: String) -> Doctor.Check {
        guard settings.enabled else { return Doctor.Check("http", .ok, "HTTP API off (--no-http / http.enabled: false)") }
        let url = "\(settings.scheme)://\(settings.listen)/api/v1/status"
        if settings.token != nil {
            return Doctor.Check("http", .ok, "HTTP API on \(url); every request needs http.token from the config (Authorization: Bearer TOKEN)")
        }
        if settings.listen.isLoopback {
            return Doctor.Check("http", .ok, "HTTP API on \(url), loopback only, no token needed")
        }
        let path = path(databasePath: databasePath)
        let state = FileManager.default.fileExists(atPath: path) ? "is in" : "will be generated at first start into"
        return Doctor.Check("http", .ok, "HTTP API on \(url); its token \(state) \(path) (mode 0600): read it with `cat \(path)` and send Authorization: Bearer TOKEN",
                            details: ["token_file": path])
    }
}
