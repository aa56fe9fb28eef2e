#if canImport(Glibc)
import Glibc
#endif

/// Where the database lives when nobody says: `$STUDIO_DB`, else per-user data dir, else the system
/// path for a server running as root (the systemd unit sets its own).
public enum DatabasePath {
    public static func resolve(flag: String?, configured: String? = nil,
                               environment: [String: String], uid: UInt32 = getuid()) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let env = environment["STUDIO_DB"], !env.isEmpty { return env }
        if let configured, !configured.isEmpty { return configured }
        if uid == 0 { return "/var/lib/studio/studio.db" }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/studio/studio.db" }
        let home = environment["HOME"] ?? "/tmp"
        return home + "/.local/share/studio/studio.db"
    }
}
