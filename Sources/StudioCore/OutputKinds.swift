import Foundation

/// What the program can be sent to, in one table: each kind's URL schemes, the container it is muxed
/// into, whether it is a network connection (reconnected with backoff) or a file (continued in the next
/// part after a write error), how its URL is checked, and which parts of the URL are secrets.
///
/// The config's `outputs:`, `serve --rtmp`, `studio output add`, the Output stage's choice of
/// destination and every place a URL is masked read it from here; a new kind is one row.
public struct OutputKind: Sendable, Hashable, CustomStringConvertible {
    /// The kind's name, as `studio outputs` shows it: `rtmp`, `rtmps`, `srt`, `file`.
    public let name: String
    /// The URL schemes it takes, lower case, without `://` (none for files: a path).
    public let schemes: [String]
    /// The libavformat muxer: `flv`, `mpegts`, `matroska`.
    public let container: String
    /// A connection to a server (reconnected to the same URL after a failure, forever until stopped),
    /// rather than a file.
    public let isNetwork: Bool
    /// The last path component is a stream key (RTMP: `rtmp://host/app/KEY`).
    public let pathEndsInKey: Bool
    /// Query items whose values are secrets (SRT: `streamid`, `passphrase`); nil: the whole query is masked.
    public let secretQueryItems: [String]?
    /// What a URL of this kind looks like, for error messages.
    public let example: String
    /// How `studio doctor` tells whether a destination of this kind can be reached, sending it nothing.
    public let probe: Probe

    /// `studio doctor`'s look at a destination before the show.
    public enum Probe: Sendable, Hashable {
        /// A TCP connect to the URL's port (`defaultPort` when it names none), closed at once: a TCP
        /// server that accepts it is reachable.
        case tcpConnect(defaultPort: Int)
        /// Only the host's name is resolved: the protocol has no look that sends nothing (`why`).
        case resolveOnly(why: String)
        /// A recording: its disk is what the recordings check looks at.
        case none
    }

    public var description: String { name }

    public static let rtmp = OutputKind(name: "rtmp", schemes: ["rtmp"], container: "flv", isNetwork: true, pathEndsInKey: true,
                                        secretQueryItems: nil, example: "rtmp://host/app/stream-key",
                                        probe: .tcpConnect(defaultPort: 1935))
    public static let rtmps = OutputKind(name: "rtmps", schemes: ["rtmps"], container: "flv", isNetwork: true, pathEndsInKey: true,
                                         secretQueryItems: nil, example: "rtmps://host/app/stream-key",
                                         probe: .tcpConnect(defaultPort: 443))
    /// MPEG-TS over SRT in caller mode (libavformat's libsrt protocol). The stream id names the stream on
    /// the listener (often carrying a key) and the passphrase encrypts it: both are masked like a stream key.
    public static let srt = OutputKind(name: "srt", schemes: ["srt"], container: "mpegts", isNetwork: true, pathEndsInKey: false,
                                       secretQueryItems: ["streamid", "passphrase"], example: "srt://host:port?streamid=NAME",
                                       probe: .resolveOnly(why: "SRT runs over UDP, where only a handshake answers, and a handshake would publish to the listener"))
    /// A recording: Matroska, or FLV for a path ending in `.flv`.
    public static let file = OutputKind(name: "file", schemes: [], container: "matroska", isNetwork: false, pathEndsInKey: false,
                                        secretQueryItems: [], example: "/path/to/program.mkv", probe: .none)

    /// Every kind, network kinds first (the order error messages list them in).
    public static let all: [OutputKind] = [.rtmp, .rtmps, .srt, .file]
    /// The network kinds, as `rtmp://, rtmps:// or srt://` in messages.
    public static var networkSchemes: String {
        let schemes = all.filter(\.isNetwork).flatMap(\.schemes).map { "\($0)://" }
        return schemes.dropLast().joined(separator: ", ") + (schemes.count > 1 ? " or " : "") + (schemes.last ?? "")
    }

    /// The kind of `url`: a network kind by its scheme, `file` for a path or `file:` URL, nil for a
    /// scheme no kind takes.
    public static func of(_ url: String) -> OutputKind? {
        guard let schemeEnd = url.range(of: "://") else { return .file }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        if scheme == "file" { return .file }
        return all.first { $0.schemes.contains(scheme) }
    }

    /// Names for `urls` given without any (`serve --rtmp`): the kind's name and its count among the
    /// URLs of that kind, `rtmp1`, `rtmp2`, `srt1`; `output` for a URL of no kind.
    public static func numberedNames(_ urls: [String]) -> [String] {
        var counts: [String: Int] = [:]
        return urls.map { url in
            let kind = of(url)?.name ?? "output"
            counts[kind, default: 0] += 1
            return "\(kind)\(counts[kind]!)"
        }
    }

    /// The libavformat muxer for `url` of this kind (`.flv` recordings are FLV).
    public func container(for url: String) -> String {
        self == .file && url.lowercased().hasSuffix(".flv") ? "flv" : container
    }

    /// Why `url` cannot be a network output of this kind; nil when it can. The URL is never echoed (in a
    /// malformed URL the key may sit where masking does not look).
    public func problem(with url: String) -> String? {
        guard isNetwork, let schemeEnd = url.range(of: "://") else { return nil }
        if url.contains(where: { $0.isWhitespace || $0.isNewline }) || url.utf8.contains(0) {
            return "expected \(example) (no spaces)"
        }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let host = authority.split(separator: "@").last.map { $0.split(separator: ":").first.map(String.init) ?? "" } ?? ""
        if host.isEmpty { return "expected \(example): the URL has no host" }
        if pathEndsInKey {
            let path = rest.dropFirst(authority.count).prefix { $0 != "?" }
            guard path.split(separator: "/").count >= 1, path.count > 1 else {
                return "expected \(example) (a host, then a path)"
            }
        }
        if self == .srt {
            // A caller needs the listener's port; `mode=listener` would make this server wait for a peer.
            let port = authority.split(separator: "@").last?.split(separator: ":").dropFirst().first
            guard let port, let number = Int(port), (1...65535).contains(number) else {
                return "expected \(example): an SRT output needs the listener's port"
            }
            let query = rest.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            for item in query.split(separator: "&") where item.lowercased().hasPrefix("mode=") {
                guard item.lowercased() == "mode=caller" else {
                    return "an SRT output calls its listener: mode must be caller (leave it out), not \(item.dropFirst(5))"
                }
            }
        }
        return nil
    }

    /// `url` with its secrets masked: the credentials, the stream key where the kind's path ends in one,
    /// the secret query items (or the whole query). Paths are shown as they are.
    public func masked(_ url: String) -> String {
        guard isNetwork, let schemeEnd = url.range(of: "://") else { return url }
        let scheme = url[..<schemeEnd.lowerBound]
        var rest = url[schemeEnd.upperBound...]
        var query = ""
        if let mark = rest.firstIndex(of: "?") {
            let items = rest[rest.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false)
            if let secret = secretQueryItems {
                query = "?" + items.map { item -> String in
                    let key = item.prefix { $0 != "=" }
                    return secret.contains(key.lowercased()) && key.count < item.count ? "\(key)=****" : String(item)
                }.joined(separator: "&")
            } else {
                query = "?****"
            }
            rest = rest[..<mark]
        }
        var parts = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let at = parts[0].lastIndex(of: "@") { parts[0] = "****@" + parts[0][parts[0].index(after: at)...] }
        // The stream key is the last non-empty path component (`rtmp://host/app/KEY`, also with a
        // trailing slash). With a single component it may be the key too: mask it, safety first.
        if pathEndsInKey, let last = parts.indices.dropFirst().last(where: { !parts[$0].isEmpty }) { parts[last] = "****" }
        return "\(scheme)://" + parts.joined(separator: "/") + query
    }

    /// The secrets of `url` (key, credentials, secret query values), longest first: what `redact` removes
    /// from free text such as a library's error message.
    public func secrets(of url: String) -> [String] {
        guard isNetwork, let schemeEnd = url.range(of: "://") else { return [] }
        var found: [String] = []
        let rest = url[schemeEnd.upperBound...]
        let beforeQuery = rest.prefix { $0 != "?" }
        let authority = beforeQuery.prefix { $0 != "/" }
        if let at = authority.lastIndex(of: "@") { found.append(String(authority[..<at])) }
        if pathEndsInKey, let key = beforeQuery.dropFirst(authority.count).split(separator: "/").last, key.count >= 4 {
            found.append(String(key))
        }
        let query = rest.dropFirst(beforeQuery.count + 1)
        for item in query.split(separator: "&") {
            let key = item.prefix { $0 != "=" }
            let value = item.dropFirst(key.count + 1)
            if (secretQueryItems.map { $0.contains(key.lowercased()) } ?? true), value.count >= 4 { found.append(String(value)) }
        }
        return found.sorted { $0.count > $1.count }
    }

    /// `text` with `url` and its secrets replaced by their masked forms.
    public func redact(_ text: String, url: String) -> String {
        guard isNetwork else { return text }
        var result = text.replacingOccurrences(of: url, with: masked(url))
        for secret in secrets(of: url) { result = result.replacingOccurrences(of: secret, with: "****") }
        return result
    }
}
