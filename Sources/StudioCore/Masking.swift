/// Stream keys never appear in logs, `status` or the database.
public enum SecretMasking {
    /// Masks the stream key (the last path component and any query string) of an RTMP-style URL:
    /// `rtmp://host/app/abcdef` becomes `rtmp://host/app/****`. Credentials in the authority are masked too.
    public static func maskURL(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url.isEmpty ? url : "****" }
        let scheme = url[..<schemeEnd.lowerBound]
        var rest = url[schemeEnd.upperBound...]
        var query = ""
        if let q = rest.firstIndex(of: "?") {
            query = "?****"
            rest = rest[..<q]
        }
        var parts = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let at = parts[0].lastIndex(of: "@") { parts[0] = "****@" + parts[0][parts[0].index(after: at)...] }
        // The stream key is the last non-empty path component (`rtmp://host/app/KEY`, also with a
        // trailing slash). With a single component it may be the key too: mask it, safety first.
        if let last = parts.indices.dropFirst().last(where: { !parts[$0].isEmpty }) { parts[last] = "****" }
        return "\(scheme)://" + parts.joined(separator: "/") + query
    }
}
