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

    /// A line of someone else's text (a library's log message) with every URL in it (each word holding
    /// `://`) masked as `maskURL` masks it: libavformat names the URL it failed on, passphrase and all.
    public static func maskURLs(in text: String) -> String {
        guard text.contains("://") else { return text }
        var masked = "", word = ""
        for character in text + " " {
            guard character.isWhitespace else {
                word.append(character)
                continue
            }
            masked += word.contains("://") ? maskURL(word) : word
            masked.append(character)
            word = ""
        }
        return String(masked.dropLast())
    }
}

/// Secrets (the HTTP token, stream keys) are compared in time that does not depend on where they differ.
public enum SecretComparison {
    /// Whether `a` and `b` are equal, looking at every byte of the longer one whatever the answer.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference: UInt8 = a.count == b.count ? 0 : 1
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
