import Foundation
import StudioSystem
import Testing
@testable import EventStore
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp, removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/studio-eventstore-XXXXXX".utf8CString)
        let made = try template.withUnsafeMutableBufferPointer { buffer in
            try syscall("mkdtemp", failure: nil) { mkdtemp(buffer.baseAddress!) }
        }
        path = String(cString: made!)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A child process with its stdout on a pipe, started with posix_spawn. If the test ends without reaping
/// it, deinit kills it (by its pid) and reaps it.
final class ChildProcess {
    let pid: pid_t
    private let output: Int32
    /// The write end of the child's stdin, when asked for (`feedsInput`); -1 otherwise or once closed.
    private var input: Int32 = -1
    private var buffered: [UInt8] = []
    private var reaped = false

    init(executable: String, arguments: [String], feedsInput: Bool = false) throws {
        var fds: [Int32] = [-1, -1]
        try syscall("pipe") { pipe(&fds) }
        var inputFDs: [Int32] = [-1, -1]
        if feedsInput {
            try syscall("pipe") { pipe(&inputFDs) }
            try syscall("fcntl") { fcntl(inputFDs[0], F_SETFD, FD_CLOEXEC) }
            try syscall("fcntl") { fcntl(inputFDs[1], F_SETFD, FD_CLOEXEC) }
        }
        // The write end must not leak into the child beyond its stdout (dup2 clears close-on-exec on fd 1).
        try syscall("fcntl") { fcntl(fds[0], F_SETFD, FD_CLOEXEC) }
        try syscall("fcntl") { fcntl(fds[1], F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        if feedsInput { posix_spawn_file_actions_adddup2(&actions, inputFDs[0], 0) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child = pid_t()
        let result = posix_spawn(&child, executable, &actions, nil, argv, environ)
        try syscall("close") { close(fds[1]) }
        if feedsInput { try syscall("close") { close(inputFDs[0]) } }
        if result != 0 {
            _ = try? syscall("close") { close(fds[0]) }
            if feedsInput { _ = try? syscall("close") { close(inputFDs[1]) } }
            throw SystemError(call: "posix_spawn \(executable)", errno: result)
        }
        pid = child
        output = fds[0]
        input = inputFDs[1]
    }

    /// Writes `text` to the child's stdin (it must have been started with `feedsInput`).
    func send(_ text: String) throws {
        precondition(input >= 0, "the child was not started with feedsInput, or its input is closed")
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = try bytes.withUnsafeBytes { buffer in
                try syscall("write") { write(input, buffer.baseAddress, buffer.count) }
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The next line of the child's stdout, or nil at end of file or after `timeoutSeconds`.
    func readLine(timeoutSeconds: Double) throws -> String? {
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let now = MonotonicClock.now()
            guard now < deadline else { return nil }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = try syscall("poll") { poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1) }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = try chunk.withUnsafeMutableBytes { buffer in
                try syscall("read") { read(output, buffer.baseAddress, buffer.count) }
            }
            if count == 0 { return nil }
            buffered.append(contentsOf: chunk[0..<count])
        }
    }

    func kill(_ signal: Int32) throws {
        try syscall("kill") { Glibc.kill(pid, signal) }
    }

    /// Waits for the child and returns its raw wait status.
    func wait() throws -> Int32 {
        var status: Int32 = 0
        try syscall("waitpid") { waitpid(pid, &status, 0) }
        reaped = true
        return status
    }

    deinit {
        if !reaped {
            try? kill(SIGKILL)
            _ = try? wait()
        }
        _ = try? syscall("close") { close(output) }
        if input >= 0 { _ = try? syscall("close") { close(input) } }
    }
}

/// The directory of the running test binary, where SwiftPM also puts the package's executables.
func buildProductsDirectory() throws -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = try syscall("readlink") { readlink("/proc/self/exe", &buffer, buffer.count - 1) }
    let executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return String(executable[..<executable.lastIndex(of: "/")!])
}

/// The sqlite3 CLI (scripts/setup.sh installs it), for tests that work on the files as another program would.
func sqlite3Executable() throws -> String {
    try #require(["/usr/bin/sqlite3", "/bin/sqlite3", "/usr/local/bin/sqlite3"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }, "the sqlite3 CLI is needed (scripts/setup.sh installs it)")
}

/// A small JSON object for session snapshots.
let sampleConfig = #"{"program":"1280x720@30","outputs":[{"name":"main","url":"rtmp://127.0.0.1/live/****"}]}"#
