import StudioCore
import StudioConfig

/// Stream keys kept out of other users' sight. A key on the command line is in the process's argv,
/// which every local user reads (`ps`, /proc/PID/cmdline); the ways that never show it are the config
/// file (mode 0640) and `${NAME}` in an output URL, replaced by the environment variable NAME when the
/// server starts (a process's environment is readable by its own user only). See docs/security.md.
public enum StreamKeys {
    /// `url` with every `${NAME}` replaced by the environment's NAME. A variable that is unset or
    /// empty is an error (exit 2) naming it, never the URL's key.
    public static func expand(_ url: String, environment: [String: String]) throws -> String {
        var result = ""
        var rest = Substring(url)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ClientFailure("an output URL has \"${\" without a closing \"}\" (\(SecretMasking.maskURL(url)))", exitCode: 2)
            }
            let name = String(rest[start.upperBound..<end])
            guard let value = environment[name], !value.isEmpty else {
                throw ClientFailure("the output URL \(SecretMasking.maskURL(url)) needs the environment variable \(name), which is not set", exitCode: 2)
            }
            result += value
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    /// The `--rtmp` URLs that carry a key written out on the command line (not a `${NAME}`).
    public static func exposed(in arguments: ParsedArguments) -> [String] {
        arguments.values("rtmp").filter { !$0.contains("${") && SecretMasking.maskURL($0) != $0 }
    }

    /// The warning for keys on the command line, or nil when there are none.
    public static func warning(for exposed: [String]) -> String? {
        guard !exposed.isEmpty else { return nil }
        let urls = exposed.map(SecretMasking.maskURL).joined(separator: ", ")
        return "studio: warning: the stream key of --rtmp \(urls) was given on the command line, where other local users "
            + "could read it (ps) until the server hid it; put it in the config file (0640) or write ${NAME} in the URL and "
            + "set the environment variable NAME (see docs/security.md)\n"
    }

    /// Overwrites, in place, each of `urls` in the process's argument strings (`argv`, `count` of them,
    /// the memory /proc/PID/cmdline reads) with its masked form, so `ps` shows `rtmp://host/app/****`.
    /// An argument that is the URL or ends with it (`--rtmp=URL`) is rewritten; the bytes the masked
    /// form does not cover become NULs. Returns how many arguments were rewritten.
    @discardableResult
    public static func hide(_ urls: [String], argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, count: Int) -> Int {
        var hidden = 0
        for index in 1..<max(count, 1) {
            guard let pointer = argv[index] else { continue }
            let argument = String(cString: pointer)
            guard let url = urls.first(where: { argument.hasSuffix($0) }) else { continue }
            let start = argument.utf8.count - url.utf8.count
            let masked = Array(SecretMasking.maskURL(url).utf8)
            for offset in 0..<url.utf8.count {
                pointer[start + offset] = offset < masked.count ? CChar(bitPattern: masked[offset]) : 0
            }
            hidden += 1
        }
        return hidden
    }
}
