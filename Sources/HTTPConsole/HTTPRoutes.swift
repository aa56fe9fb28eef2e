/// The routes the console answers, matched against a request's method and path: a route, a `405`
/// naming the methods the path does take (`Allow`), or a `404`.
public struct HTTPRouteTable: Sendable {
    public let routes: [HTTPRoute]
    private let compiled: [(route: HTTPRoute, segments: [HTTPRoute.Segment])]

    public enum Match: Sendable, Equatable {
        case route(HTTPRoute, parameters: [String: HTTPValue])
        /// The path exists with other methods (sorted, for `Allow`).
        case methodNotAllowed(allowed: [HTTPMethod])
        /// No route has this path; `reason` says what was wrong with it when something was (a bad number).
        case notFound(reason: String?)
    }

    public init(_ routes: [HTTPRoute]) {
        var seen = Set<String>()
        for route in routes {
            precondition(seen.insert("\(route.method.rawValue) \(route.template)").inserted,
                         "HTTP route \(route.method.rawValue) \(route.template) declared twice")
        }
        self.routes = routes
        compiled = routes.map { ($0, $0.segments) }
    }

    public func match(method: String, path: String) -> Match {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map { Self.percentDecoded(String($0)) }
        var allowed = Set<HTTPMethod>()
        var reason: String?
        for (route, segments) in compiled where segments.count == parts.count {
            var parameters: [String: HTTPValue] = [:]
            var matches = true
            for (segment, part) in zip(segments, parts) {
                guard let part else { matches = false; break }
                switch segment {
                case .literal(let text): matches = text == part
                case .parameter(let name, let isInteger, let suffix):
                    guard part.hasSuffix(suffix), part.count > suffix.count else { matches = false; break }
                    let part = String(part.dropLast(suffix.count))
                    if isInteger {
                        guard let number = Int64(part) else {
                            reason = "\"\(part)\" is not a number (the path takes a \(name) number there)"
                            matches = false
                            break
                        }
                        parameters[name] = .integer(number)
                    } else {
                        matches = !part.isEmpty
                        parameters[name] = .text(part)
                    }
                }
                if !matches { break }
            }
            guard matches else { continue }
            if route.method.rawValue == method { return .route(route, parameters: parameters) }
            allowed.insert(route.method)
        }
        if !allowed.isEmpty { return .methodNotAllowed(allowed: allowed.sorted { $0.rawValue < $1.rawValue }) }
        return .notFound(reason: reason)
    }

    /// `%2F` and friends decoded; nil when the escapes are not valid UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high < utf8.endIndex, utf8.index(after: high) < utf8.endIndex,
                      let value = UInt8(String(decoding: [utf8[high], utf8[utf8.index(after: high)]], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                index = utf8.index(high, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
