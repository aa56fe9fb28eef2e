/// Stream keys never appear in logs, `status` or the database.
public enum SecretMasking {
    /// Masks the secrets of a URL as its output kind says (`OutputKind.masked`): the stream key (the last
    /// path component) and any query of an RTMP-style URL, `rtmp://host/app/abcdef` becoming
    /// `rtmp://host/app/****`; an SRT URL's `streamid` and `passphrase`. Credentials in the authority are
    /// masked too. A URL of a scheme no kind takes is masked like RTMP; text that is no URL at all entirely.
    public static func maskURL(_ url: String) -> String {
        guard url.contains("://") else { return url.isEmpty ? url : "****" }
        let kind = OutputKind.of(url).flatMap { $0.isNetwork ? $0 : nil } ?? .rtmp
        return kind.masked(url)
    }
}
