import Foundation

/// An HTTP method the console answers.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET", post = "POST"
}

/// One route: a method, a path template whose `{name}` segments are parameters (`{name:int}` for a
/// whole number; `{name}.jpg` for text before a fixed ending), and the name of what answers it (a control command's name, for the server's routes).
///
/// ```swift
/// HTTPRoute(.post, "/api/v1/camera/{camera}/controls", name: "control")
/// ```
public struct HTTPRoute: Sendable, Hashable {
    public var method: HTTPMethod
    public var template: String
    public var name: String
    /// Whether a listener's token is asked for. False only for the console page's own script and style:
    /// the same bytes for everyone, no studio data in them, and a browser fetching `<script src>` cannot
    /// add the token the page's URL carries.
    public var needsToken: Bool

    public init(_ method: HTTPMethod, _ template: String, name: String, needsToken: Bool = true) {
        self.method = method
        self.template = template
        self.name = name
        self.needsToken = needsToken
    }

    /// The template's segments: literal text, or a parameter with its kind and the fixed text that
    /// follows it in the segment (`.jpg` in `{tile}.jpg`; usually none).
    enum Segment: Hashable {
        case literal(String)
        case parameter(String, isInteger: Bool, suffix: String)
    }

    var segments: [Segment] {
        template.split(separator: "/").map { part in
            guard part.hasPrefix("{"), let close = part.firstIndex(of: "}") else { return .literal(String(part)) }
            let inner = part[part.index(after: part.startIndex)..<close]
            let suffix = String(part[part.index(after: close)...])
            if inner.hasSuffix(":int") { return .parameter(String(inner.dropLast(4)), isInteger: true, suffix: suffix) }
            return .parameter(String(inner), isInteger: false, suffix: suffix)
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
    /// The request headers a route reads (`HTTPConsole.passedHeaders`: `Range`), by lower-case name.
    public var headers: [String: String] = [:]
}

/// An answer: a status code, a content type and a body (or a body stream).
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Extra headers (`Allow` on a 405; a `Cache-Control` here replaces the default `no-store`).
    public var headers: [(String, String)] = []
    /// When set, the body is this stream's output instead of `body` (see `HTTPBodyStream`).
    public var stream: HTTPBodyStream?

    public init(status: Int, contentType: String = "application/json", body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// A `200` whose body `stream` makes, for as long as the client reads.
    public static func streaming(contentType: String, headers: [(String, String)] = [], _ stream: HTTPBodyStream) -> HTTPResponse {
        var response = HTTPResponse(status: 200, contentType: contentType, body: [], headers: headers)
        response.stream = stream
        return response
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
            && lhs.headers.map { [$0.0, $0.1] } == rhs.headers.map { [$0.0, $0.1] } && lhs.stream === rhs.stream
    }
}

/// A response body made piece by piece on the connection's own thread, for as long as the client reads
/// (server-sent events, an MJPEG stream). The console calls `next` whenever the client has taken what
/// was sent: it returns the next bytes (waiting for them if it must, briefly: a second at most), `[]`
/// for "nothing yet, ask again" (the console checks whether it is stopping in between), or nil to end
/// the response. `finished` runs once, when the response is over: ended, the client gone (noticed on
/// the next write), or the console stopping. A stream that is never sent is never called at all, so
/// take what it needs (a subscription) in the first `next`, not before.
public final class HTTPBodyStream: Sendable {
    let next: @Sendable () -> [UInt8]?
    let finished: @Sendable () -> Void

    public init(next: @escaping @Sendable () -> [UInt8]?, finished: @escaping @Sendable () -> Void) {
        self.next = next
        self.finished = finished
    }
}

/// Answers a matched request: `respond` exactly once, from any thread. The console's connection thread
/// waits for it (up to `HTTPConsoleSettings.replyTimeoutSeconds`), so a command that answers later (a
/// cut, once its frame is out) holds that connection's thread only, never a media thread.
public typealias HTTPHandler = @Sendable (HTTPCall, @escaping @Sendable (HTTPResponse) -> Void) -> Void
