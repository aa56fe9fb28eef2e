import Foundation
import StudioSystem
import Synchronization
@testable import Control
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory for one test's socket, removed afterwards. The server creates it.
final class SocketDirectory: Sendable {
    let path: String
    init() { path = "/tmp/studio-control-tests/" + UUID().uuidString.prefix(8) }
    var socketPath: String { path + "/control.sock" }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}


/// A plain socket connection that writes raw bytes and reads lines, to send what no well-behaved
/// client would.
final class RawConnection {
    let fd: Int32
    private var input: [UInt8] = []

    init(path: String) throws {
        fd = try UnixSocket.makeStreamSocket()
        try UnixSocket.connect(fd, to: UnixSocket.address(for: path)!)
    }

    deinit { UnixSocket.close(fd) }

    func write(_ text: String) throws { try write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try syscall("send") {
                bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    func shutdownWriting() throws { try syscall("shutdown") { shutdown(fd, Int32(SHUT_WR)) } }

    /// The next line, nil on end of stream or after `timeoutSeconds`.
    func readLine(timeoutSeconds: Double = 5) throws -> String? {
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while true {
            if let newline = input.firstIndex(of: 0x0A) {
                let line = String(decoding: input[..<newline], as: UTF8.self)
                input.removeFirst(newline + 1)
                return line
            }
            let now = MonotonicClock.now()
            guard now < deadline else { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = try syscall("poll") { poll(&descriptor, 1, Int32((deadline - now) / 1_000_000) + 1) }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = try syscall("read") { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if count == 0 { return nil }
            input.append(contentsOf: chunk[..<count])
        }
    }

    func readMessage(timeoutSeconds: Double = 5) throws -> JSONValue? {
        guard let line = try readLine(timeoutSeconds: timeoutSeconds) else { return nil }
        return try JSONValue(parsing: line)
    }
}

/// The name of the calling thread, as the kernel knows it.
func currentThreadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

/// What the test commands act on: `notify` broadcasts through `server` when one is set.
final class TestContext: Sendable {
    private let serverSlot = Mutex<ControlServer?>(nil)
    var server: ControlServer? {
        get { serverSlot.withLock { $0 } }
        set { serverSlot.withLock { $0 = newValue } }
    }
    /// The context of routers made without one (it lives as long as the tests).
    static let shared = TestContext()
}

/// `echo`: answers its arguments.
enum EchoCommand: ControlCommand {
    static let name = "echo"
    static let summary = "answers its arguments"
    static func run(_ arguments: [String: JSONValue], in context: TestContext) -> JSONValue { .object(arguments) }
}

/// `thread`: the name of the thread it ran on.
enum ThreadCommand: ControlCommand {
    static let name = "thread"
    static let summary = "names the thread it runs on"
    static func run(_ arguments: NoArguments, in context: TestContext) -> String { currentThreadName() }
}

/// `notify`: broadcasts `{"kind": "note", "text": ...}` to subscribers, then answers.
enum NotifyCommand: ControlCommand {
    static let name = "notify"
    static let summary = "broadcasts a note"
    struct Arguments: Decodable, Sendable { var text: String? }
    static func run(_ arguments: Arguments, in context: TestContext) -> [String: Bool] {
        context.server?.broadcast(["kind": "note", "text": JSONValue(arguments.text)])
        return ["notified": true]
    }
}

/// `switch`: knows cam1 and cam2.
enum SwitchCommand: ControlCommand {
    static let name = "switch"
    static let summary = "switches to cam1 or cam2"
    struct Arguments: Decodable, Sendable { var camera: String }
    static func run(_ arguments: Arguments, in context: TestContext) throws -> [String: String] {
        guard ["cam1", "cam2"].contains(arguments.camera) else {
            throw ControlError(.unknownCamera, "no camera named \(arguments.camera)")
        }
        return ["camera": arguments.camera]
    }
}

/// A router with the commands the tests use, attached to `context`.
func makeTestRouter(_ context: TestContext = .shared) -> ControlRouter<TestContext> {
    let router = ControlRouter<TestContext>(commands: [EchoCommand.self, ThreadCommand.self, NotifyCommand.self, SwitchCommand.self])
    router.attach(context)
    return router
}
