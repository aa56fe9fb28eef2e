import Foundation

/// A size as the commands print it (`recordings`, `transcode`): B, KiB, MiB or GiB with one decimal.
public enum ByteCount {
    public static func text(_ bytes: Int) -> String {
        if bytes >= 1 << 30 { return String(format: "%.1f GiB", Double(bytes) / Double(1 << 30)) }
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
        if bytes >= 1 << 10 { return String(format: "%.1f KiB", Double(bytes) / Double(1 << 10)) }
        return "\(bytes) B"
    }
}
