import Synchronization
import StudioSystem
import StudioCore

/// Who may use the console: the token (when one is set, every request must carry it) and, for POSTs,
/// the Origin (a page of another site must not be able to cut the show through the operator's browser).
public struct HTTPAccessPolicy: Sendable {
    /// The token every request must carry (`Authorization: Bearer TOKEN`, or `?token=TOKEN` on a GET);
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
    public func refusal(method: String, authorization: String?, queryToken: String?, host: String?, origin: String?) -> Refusal? {
        if let token {
            var given: String?
            if let authorization, authorization.hasPrefix("Bearer ") { given = String(authorization.dropFirst(7)) }
            if given == nil, method == HTTPMethod.get.rawValue { given = queryToken }
            guard let given else {
                return .unauthorized("this listener needs a token: send \"Authorization: Bearer TOKEN\" (see `studio doctor` for where it is)")
            }
            guard Self.constantTimeEqual(Array(given.utf8), Array(token.utf8)) else {
                return .unauthorized("wrong token (see `studio doctor` for where it is)")
            }
        } else if let host, !Self.isLoopbackHost(host) {
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
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }

    /// `127.0.0.1:8080`, `localhost`, `[::1]:8080`: a loopback name with or without a port.
    static func isLoopbackHost(_ host: String) -> Bool {
        var name = Substring(host)
        if name.hasPrefix("[") {
            guard let end = name.firstIndex(of: "]") else { return false }
            return name[name.index(after: name.startIndex)..<end] == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        return name == "localhost" || ListenAddress.isLoopback(String(name))
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
