import Foundation
import Synchronization
import StudioSystem
import StudioCore

/// Who may use the console: the token (when one is set, every request must carry it) and, for POSTs,
/// the Origin (a page of another site must not be able to cut the show through the operator's browser).
public struct HTTPAccessPolicy: Sendable {
    /// The token every request must carry (`Authorization: Bearer TOKEN`, the scheme in any case as RFC
    /// 7235 has it, or `?token=TOKEN` on a GET or HEAD);
    /// nil: none needed (a loopback listener without `http.token`).
    public var token: String?
    /// The listener speaks TLS: a page of this console has an `https://` origin. On plain HTTP both
    /// schemes are this console's (behind a reverse proxy that terminates TLS the browser's origin is `https://`).
    public var isTLS: Bool

    public init(token: String?, isTLS: Bool = false) {
        self.token = token
        self.isTLS = isTLS
    }

    public enum Refusal: Equatable, Sendable {
        case unauthorized(String)
        case forbidden(String)
    }

    /// Why the request may not go on; nil when it may.
    /// - Parameters:
    ///   - authorization: the `Authorization` header; `queryToken`: `?token=` (honoured on GETs only).
    ///   - host, origin: the `Host` and `Origin` headers.
    ///   - needsToken: false for a route anyone may fetch (`HTTPRoute.needsToken`).
    public func refusal(method: String, authorization: String?, queryToken: String?, host: String?, origin: String?,
                        needsToken: Bool = true) -> Refusal? {
        if let token, needsToken {
            var given: String?
            if let authorization { given = Self.bearerToken(authorization) }
            if given == nil, method == HTTPMethod.get.rawValue || method == "HEAD" { given = queryToken }
            guard let given else {
                return .unauthorized("this listener needs a token: send \"Authorization: Bearer TOKEN\" (see `studio doctor` for where it is)")
            }
            guard Self.constantTimeEqual(Array(given.utf8), Array(token.utf8)) else {
                return .unauthorized("wrong token (see `studio doctor` for where it is)")
            }
        } else if token == nil, let host, !Self.isLoopbackHost(host) {
            // Without a token only loopback clients get here; a Host that is no loopback name means a
            // browser was led here by a DNS name (DNS rebinding): refused, it could read the API.
            return .forbidden("Host \"\(host)\" is not a loopback name; without http.token only 127.0.0.1, localhost and [::1] are served")
        }
        if method == HTTPMethod.post.rawValue, let origin {
            // A browser sends Origin on every POST; curl and scripts send none. Same origin only.
            let originHost = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
            let schemes = isTLS ? ["https://"] : ["http://", "https://"]
            guard schemes.contains(where: origin.hasPrefix), let originHost, originHost == host else {
                return .forbidden("cross-origin POST refused: Origin \(origin) is not this console (\(host ?? "no Host"))")
            }
        }
        return nil
    }

    /// Compares without stopping at the first difference, so the time taken says nothing about how much
    /// of a guess was right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool { SecretComparison.equal(a, b) }

    /// The token of an `Authorization` header in the Bearer scheme, whose name is matched in any case
    /// (RFC 7235: `bearer`, `BEARER`); nil for another scheme or no token.
    static func bearerToken(_ authorization: String) -> String? {
        let text = authorization.trimmingCharacters(in: .whitespaces)
        guard let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }),
              text[..<space].lowercased() == "bearer" else { return nil }
        let token = text[space...].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// `127.0.0.1:8080`, `localhost`, `[::1]:8080`: a loopback name with or without a port. The port is
    /// parsed, not cut off: `127.0.0.1:8080.evil.example` is no loopback name.
    static func isLoopbackHost(_ host: String) -> Bool {
        guard let (name, _) = hostAndPort(host) else { return false }
        return name == "localhost" || ListenAddress.isLoopback(name)
    }

    /// A `Host` header's name and port (RFC 9110: `uri-host [ ":" port ]`, an IPv6 address in brackets,
    /// given without them): nil when it is not that shape (a port that is not a number up to 65535,
    /// anything after it, an unclosed bracket).
    static func hostAndPort(_ host: String) -> (name: String, port: UInt16?)? {
        let name: Substring, rest: Substring
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return nil }
            name = host[host.index(after: host.startIndex)..<end]
            rest = host[host.index(after: end)...]
        } else if let colon = host.firstIndex(of: ":") {
            name = host[..<colon]
            rest = host[colon...]
        } else {
            name = host[...]
            rest = ""
        }
        guard !name.isEmpty else { return nil }
        if rest.isEmpty { return (String(name), nil) }
        let digits = rest.dropFirst()
        guard rest.first == ":", (1...5).contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
              let port = UInt16(digits) else { return nil }
        return (String(name), port)
    }
}

/// A token bucket per client address: each may make `burst` requests at once and `ratePerSecond`
/// after that; one more is answered 429 without reaching the handler. Addresses not seen for a while
/// are forgotten, and the table is bounded (the oldest goes first).
public final class HTTPRequestBudget: Sendable {
    public let burst: Double
    public let ratePerSecond: Double
    private let clock: any Clock
    private struct Bucket {
        var tokens: Double
        var updated: UInt64
    }
    private let buckets = Mutex<[String: Bucket]>([:])
    static let maxAddresses = 1024

    public init(burst: Int, ratePerSecond: Double, clock: any Clock = MonotonicClock()) {
        self.burst = Double(burst)
        self.ratePerSecond = ratePerSecond
        self.clock = clock
    }

    /// Takes one request from `address`'s budget; false when it has none left.
    public func take(_ address: String) -> Bool {
        let now = clock.now()
        return buckets.withLock { buckets in
            var bucket = buckets[address] ?? Bucket(tokens: burst, updated: now)
            let elapsed = Double(now &- bucket.updated) / 1e9
            bucket.tokens = min(burst, bucket.tokens + max(0, elapsed) * ratePerSecond)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if buckets[address] == nil, buckets.count >= Self.maxAddresses,
               let oldest = buckets.min(by: { $0.value.updated < $1.value.updated })?.key {
                buckets[oldest] = nil
            }
            buckets[address] = bucket
            return allowed
        }
    }
}
