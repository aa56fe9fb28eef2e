import Foundation
import Synchronization
import Testing
import StudioCore
import StudioSystem
import TestSupport
@testable import TallyOut

/// A node's tally client against a switcher that goes silent or refuses its token (switcher_stub.py:
/// the switcher's HTTP API as far as the client reads it). The real switcher is in
/// NodeTallyEndToEndTests; these are the faults it cannot be made to show at will.
@Suite struct SwitcherTallyClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("switcher_stub.py").path

    final class Stub {
        let child: ChildProcess
        let port: UInt16
        let directory: URL

        init(token: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("switcher-stub-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let portFile = directory.appendingPathComponent("port").path
            let child = try ChildProcess(executable: "/usr/bin/python3", arguments: [SwitcherTallyClientTests.script, portFile, token])
            self.child = child
            try #require(waitUntil(seconds: 10, every: 0.02) { FileManager.default.fileExists(atPath: portFile) || child.hasExited },
                         "the stub did not start")
            port = try #require(UInt16((try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""), "the stub said no port: \(child.errorText())")
        }

        /// The requests it answered, a line each: `/api/v1/events 401`.
        var requests: [String] {
            ((try? String(contentsOf: directory.appendingPathComponent("port.requests"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        deinit {
            child.terminate()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// Connected, the tally read; then nothing heard for the silence limit: every camera unknown at once
    /// (never a stale red), said once, and connected again with backoff.
    @Test func aSwitcherGoneSilentMakesTheTallyUnknownAndIsCalledAgain() throws {
        let stub = try Stub(token: "right-token")
        let log = Lines()
        let client = SwitcherTallyClient(address: ListenAddress(host: "127.0.0.1", port: stub.port), token: "right-token",
                                         silenceSeconds: 0.8, log: log.add)
        client.start()
        defer { client.stop() }
        #expect(waitUntil(seconds: 5, every: 0.01) { client.tally(of: "pc2/cam1") == .program }, "\(log.all)")
        #expect(client.tally(of: "pc2/cam2") == .preview && client.tally(of: "pc2/cam3") == .none)
        #expect(waitUntil(seconds: 5, every: 0.01) { client.tally(of: "pc2/cam1") == .unknown }, "\(log.all)")
        #expect(client.tally(of: "pc2/cam2") == .unknown)
        #expect(log.all.contains { $0.contains("lost (nothing heard for 0.8 s)") }, "\(log.all)")
        #expect(waitUntil(seconds: 5, every: 0.05) { log.all.filter { $0.hasSuffix(": connected") }.count >= 2 }, "called again: \(log.all)")
    }

    /// A token the switcher refuses: never connected, every camera unknown, and the log says the 401 and
    /// which key to fix, once however often it is tried again.
    @Test func aRefusedTokenIsSaidOnceAndTheTallyStaysUnknown() throws {
        let stub = try Stub(token: "right-token")
        let log = Lines()
        let client = SwitcherTallyClient(address: ListenAddress(host: "127.0.0.1", port: stub.port), token: "wrong-token", log: log.add)
        client.start()
        defer { client.stop() }
        // Tried three times (again after 0.5 s and 1 s), refused each time; said once.
        #expect(waitUntil(seconds: 10, every: 0.02) { stub.requests.count >= 3 && log.all.count >= 1 }, "\(stub.requests) \(log.all)")
        #expect(stub.requests.allSatisfy { $0 == "/api/v1/events 401" }, "\(stub.requests)")
        let said = log.all
        #expect(said.count == 1 && said[0].contains("not connected (the switcher answered 401 Unauthorized (node.token must be the switcher's http.token))"),
                "\(said)")
        #expect(client.tally(of: "pc2/cam1") == .unknown && !client.isConnected)
    }
}
