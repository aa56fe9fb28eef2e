import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Who writes a session: enough to tell later whether that process is still alive, even if its pid has
/// been reused (start time) or the machine rebooted since (boot id).
struct ProcessIdentity: Sendable, Equatable {
    var hostname: String
    var pid: Int32
    /// /proc/sys/kernel/random/boot_id; nil if unreadable.
    var bootID: String?
    /// Start time in clock ticks after boot (field 22 of /proc/PID/stat); nil if unreadable.
    var startTicks: Int64?

    static func current() -> ProcessIdentity {
        let pid = getpid()
        return ProcessIdentity(hostname: hostName(), pid: pid, bootID: currentBootID(), startTicks: startTicks(of: pid))
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        do {
            try syscall("gethostname") { gethostname(&buffer, buffer.count - 1) }
        } catch {
            return "unknown"
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func currentBootID() -> String? {
        (try? readSmallFile("/proc/sys/kernel/random/boot_id"))?.trimmingWhitespace()
    }

    /// The start time of a live, non-zombie process, or nil if there is no such process.
    static func startTicks(of pid: Int32) -> Int64? {
        guard let stat = try? readSmallFile("/proc/\(pid)/stat") else { return nil }
        // The command name (field 2) is in parentheses and may itself hold spaces or ')': fields after it
        // start behind the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
        guard fields.count > 19 else { return nil }
        if fields[0] == "Z" || fields[0] == "X" { return nil }
        return Int64(fields[19])
    }

    /// Whether the process that wrote a session is still running: same boot (where both are known), the pid
    /// exists and is no zombie, and it started when the recorded one did (where known). A pid reused by
    /// another process or a reboot since means the writer is gone.
    static func isAlive(pid: Int32, bootID: String?, startTicks recordedStart: Int64?) -> Bool {
        if let bootID, let current = currentBootID(), bootID != current { return false }
        guard let liveStart = startTicks(of: pid) else { return false }
        if let recordedStart { return liveStart == recordedStart }
        return true
    }

    /// Reads a /proc file (a few KiB at most) with plain syscalls.
    static func readSmallFile(_ path: String) throws -> String {
        let fd = try syscall("open") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { _ = try? syscall("close") { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                try syscall("read") { read(fd, buffer.baseAddress, buffer.count) }
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        return String(text)
    }
}
