import Foundation

/// An HTTP method the console answers.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET", post = "POST"
}

/// One route: a method, a path template whose `{name}` segments are parameters (`{name:int}` for a
/// whole number), and the name of what answers it (a control command's name, for the server's routes).
///
/// ```swift
/// HTTPRoute(.post, "/api/v1/camera/{camera}/controls", name: "control")
/// ```
public struct HTTPRoute: Sendable, Hashable {
    public var method: HTTPMethod
    public var template: String
    public var name: String

    public init(_ method: HTTPMethod, _ template: String, name: String) {
        self.method = method
        self.template = template
        self.name = name
    }

    /// The template's segments: literal text, or a parameter with its kind.
    enum Segment: Hashable {
        case literal(String)
        case parameter(String, isInteger: Bool)
    }

    var segments: [Segment] {
        template.split(separator: "/").map { part in
            guard part.hasPrefix("{"), part.hasSuffix("}") else { return .literal(String(part)) }
            let inner = part.dropFirst().dropLast()
            if inner.hasSuffix(":int") { return .parameter(String(inner.dropLast(4)), isInteger: true) }
            return .parameter(String(inner), isInteger: false)
        }
    }
}

/// A path parameter's or query item's value: text, or a whole number where the template says `:int`.
public enum HTTPValue: Sendable, Equatable {
    case text(String)
    case integer(Int64)
}

/// A request that matched a route, as the handler sees it.
public struct HTTPCall: Sendable {
    public var route: HTTPRoute
    /// The path's parameters by name (`{camera}` -> `"camera": .text("cam2")`), percent-decoded.
    public var parameters: [String: HTTPValue]
    /// The query's items (`?limit=5`), the token left out.
    public var query: [String: String]
    /// The request body (POST), at most `HTTPConsoleSettings.maxBodyBytes`.
    public var body: [UInt8]
}

/// An answer: a status code, a content type and a body.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Extra headers (`Allow` on a 405).
    public var headers: [(String, String)] = []

    public init(status: Int, contentType: String = "application/json", body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// A JSON body (`text` is JSON already).
    public static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, body: Array((text + "\n").utf8))
    }

    /// The console's error body, the same shape as a control socket error:
    /// `{"error": {"code": "not_found", "message": "..."}}`.
    public static func error(_ status: Int, code: String, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        let object = ["error": ["code": code, "message": message]]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return HTTPResponse(status: status, body: Array(body) + [0x0A], headers: headers)
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.contentType == rhs.contentType && lhs.body == rhs.body
            && lhs.headers.map { [$0.0, $0.1] } == rhs.headers.map { [$0.0, $0.1] }
    }
}

/// Answers a matched request: `respond` exactly once, from any thread. The console's connection thread
/// waits for it (up to `HTTPConsoleSettings.replyTimeoutSeconds`), so a command that answers later (a
/// cut, once its frame is out) holds that connection's thread only, never a media thread.
public typealias HTTPHandler = @Sendable (HTTPCall, @escaping @Sendable (HTTPResponse) -> Void) -> Void
