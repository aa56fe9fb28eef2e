import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn, stdout/stderr captured to files. Only this object ends
/// it, by its PID. Waiting is zombie-aware: it reaps with waitpid and also reads /proc/PID/stat, since
/// PID 1 in a container may not reap anything.
///
/// `@unchecked Sendable`: mutable state (`exitStatus`) is guarded by `lock`.
public final class ChildProcess: @unchecked Sendable {
    public enum Exit: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    public let pid: pid_t
    public let executable: String
    public let arguments: [String]
    public let standardOutput: URL
    public let standardError: URL
    private let lock = ConditionLock()
    private var exitStatus: Exit?

    /// Starts `executable` (looked up in PATH when it has no slash) with `arguments`.
    /// `environment` replaces the parent's when given. Output goes to `outputDirectory` (a temp dir by default).
    public init(executable: String, arguments: [String] = [], environment: [String: String]? = nil,
                outputDirectory: URL? = nil) throws {
        let directory = outputDirectory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("child-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let name = (executable as NSString).lastPathComponent
        standardOutput = directory.appendingPathComponent("\(name).stdout")
        standardError = directory.appendingPathComponent("\(name).stderr")
        self.executable = executable
        self.arguments = arguments

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        // The test process ignores SIGPIPE and may block signals on its threads; the child starts clean.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings: [UnsafeMutablePointer<CChar>?]? = environment.map { env in
            env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { environmentStrings?.forEach { free($0) } }

        var child = pid_t()
        let result: Int32
        if let environmentStrings {
            result = posix_spawnp(&child, executable, &actions, &attributes, argv, environmentStrings)
        } else {
            result = posix_spawnp(&child, executable, &actions, &attributes, argv, environ)
        }
        // posix_spawn returns the error number instead of setting errno.
        if result != 0 { throw SystemError(call: "posix_spawnp(\(executable))", errno: result) }
        pid = child
    }

    /// Sends `signal` to the child, unless it has already exited.
    public func terminate(signal: Int32 = SIGTERM) {
        guard !hasExited else { return }
        _ = try? syscall("kill") { kill(pid, signal) }
    }

    /// Non-blocking check; reaps the child if it has exited (or is a zombie).
    public var hasExited: Bool { poll() != nil }

    public var exit: Exit? { poll() }

    /// Waits until the child exits, up to `timeout` seconds. Returns nil on timeout.
    @discardableResult
    public func wait(timeout: Double) -> Exit? {
        let deadline = MonotonicClock.now() + UInt64(max(0, timeout) * 1e9)
        while true {
            if let status = poll() { return status }
            if MonotonicClock.now() >= deadline { return nil }
            MonotonicClock.sleep(seconds: 0.01)
        }
    }

    /// Waits like `wait(timeout:)`, reading the child's peak resident set size (`VmHWM` in /proc/PID/status,
    /// in KiB) every 10 ms while it runs; returns the highest reading. Not wait4's `ru_maxrss`: posix_spawn
    /// starts the child on the parent's memory (vfork), and Linux counts the parent's peak in it. Growth in
    /// the child's last 10 ms can be missed; a process that grows as it works is caught on its way.
    public func waitReadingPeakMemory(timeout: Double) -> (exit: Exit?, peakKilobytes: Int) {
        let deadline = MonotonicClock.now() + UInt64(max(0, timeout) * 1e9)
        var peak = 0
        while true {
            peak = max(peak, Self.peakResidentKilobytes(pid) ?? 0)
            if let status = poll() { return (status, peak) }
            if MonotonicClock.now() >= deadline { return (nil, peak) }
            MonotonicClock.sleep(seconds: 0.01)
        }
    }

    /// `VmHWM` of a running process, in KiB; nil once it is a zombie or gone.
    static func peakResidentKilobytes(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.dropFirst("VmHWM:".count).split(whereSeparator: \.isWhitespace).first ?? "")
    }

    /// SIGTERM, wait up to `grace` seconds, then SIGKILL and wait again.
    @discardableResult
    public func stop(grace: Double = 3) -> Exit? {
        terminate(signal: SIGTERM)
        if let status = wait(timeout: grace) { return status }
        terminate(signal: SIGKILL)
        return wait(timeout: 5)
    }

    public func outputText() -> String { (try? String(contentsOf: standardOutput, encoding: .utf8)) ?? "" }
    public func errorText() -> String { (try? String(contentsOf: standardError, encoding: .utf8)) ?? "" }

    private func poll() -> Exit? {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            var reaped = (try? syscall("waitpid") { waitpid(pid, &status, WNOHANG) }) ?? -1
            if reaped == 0, Self.isZombieOrGone(pid) {
                // It ended between the two looks: a zombie is reapable now, so this does not block.
                reaped = (try? syscall("waitpid") { waitpid(pid, &status, WNOHANG) }) ?? -1
                if reaped == 0 { MonotonicClock.sleep(seconds: 0.001) }
                if reaped == 0 { reaped = (try? syscall("waitpid") { waitpid(pid, &status, WNOHANG) }) ?? -1 }
            }
            if reaped == pid {
                // WIFEXITED / WEXITSTATUS / WTERMSIG are macros; decode the status word by hand.
                let signal = status & 0x7f
                exitStatus = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
            } else if reaped == -1 || (reaped == 0 && Self.isZombieOrGone(pid) && !Self.isZombie(pid)) {
                // Not our child any more (reaped elsewhere): it has ended, status unknown.
                exitStatus = .signalled(0)
            }
            return exitStatus
        }
    }

    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first == "Z"
    }

    /// Reads the state field of /proc/PID/stat: `Z` (zombie) or `X` (dead), or the file is gone.
    static func isZombieOrGone(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // The command name is in parentheses and may contain spaces; the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state == "Z" || state == "X"
    }

    deinit {
        if !hasExited { stop(grace: 1) }
    }
}
