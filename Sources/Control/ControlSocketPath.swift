import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the control socket lives, the same rule for `studio serve` and the client commands.
public enum ControlSocketPath {
    /// In order: the `--socket` flag, the `STUDIO_SOCKET` environment variable, the config file's
    /// `socket:` key, `$XDG_RUNTIME_DIR/studio/studio.sock`, then `/run/studio/studio.sock` for root
    /// and `/tmp/studio-<uid>/studio.sock` for anyone else. Empty values count as unset;
    /// a relative XDG_RUNTIME_DIR is ignored, as the XDG spec asks.
    public static func resolve(flag: String?, configured: String? = nil, environment: [String: String],
                               uid: UInt32) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let variable = environment["STUDIO_SOCKET"], !variable.isEmpty { return variable }
        if let configured, !configured.isEmpty { return configured }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/studio/studio.sock"
        }
        if uid == 0 { return "/run/studio/studio.sock" }
        return "/tmp/studio-\(uid)/studio.sock"
    }

    /// `resolve` with this process's environment and real user id.
    public static func resolve(flag: String?, configured: String? = nil) -> String {
        resolve(flag: flag, configured: configured, environment: ProcessInfo.processInfo.environment, uid: getuid())
    }
}
