import Foundation
import StudioSystem
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

/// Polls `condition` until it holds or `timeoutSeconds` pass (a wait, not a speed check).
func waitUntil(timeoutSeconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
    while MonotonicClock.now() < deadline {
        if condition() { return true }
        MonotonicClock.sleep(seconds: 0.005)
    }
    return condition()
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

/// A router with the commands the tests use.
func makeTestRouter() -> ControlRouter {
    let router = ControlRouter()
    router.add("echo") { request in .success(.object(request.arguments)) }
    router.add("thread") { _ in .success(.string(currentThreadName())) }
    router.add("notify") { request in
        .success(["notified": true], event: ["kind": "note", "text": request.arguments["text"] ?? .null])
    }
    router.add("switch") { request in
        let camera = try request.string("camera")
        guard ["cam1", "cam2"].contains(camera) else { throw ControlError(.unknownCamera, "no camera named \(camera)") }
        return .success(["camera": .string(camera)])
    }
    return router
}
