import Foundation
import Testing
import Synchronization
import Control
import StudioSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 34: nobody locks the operator out of the HTTP console. Against the real `studio serve`, 3 x 64
/// slowloris connections (from 127.0.0.2, .3 and .4, a header line every 2 s, opened again when the
/// server ends them) and 200 event-stream clients that never read (from 127.0.1.1-8), the operator's
/// switch from 127.0.0.1 answers within a second, again and again until every slowloris connection has
/// been cut at its deadline once, and the program has no late tick. The attack stops with the test.
@Suite(.serialized) struct HTTPLockoutEndToEndTests {
    /// The attackers: each socket its own `HTTPTestClient`, kept by one thread that trickles.
    final class Attack: @unchecked Sendable {
        // Invariant: `slow` and `streams` are touched only by the attack's thread until `stop` has joined it.
        private var slow: [(address: String, client: HTTPTestClient?)] = []
        private var streams: [(address: String, client: HTTPTestClient?, opened: UInt64)] = []
        private let port: Int
        private let stopped = Atomic<Bool>(false)
        private var thread: NamedThread?
        let reopened = Atomic<Int>(0)

        init(port: Int) {
            self.port = port
            for address in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] { slow += (0..<64).map { _ in (address, nil) } }
            streams = (0..<200).map { ("127.0.1.\($0 % 8 + 1)", nil, 0) }
        }

        /// A request that never ends: its request line, then a header line now and then.
        private func openSlow(_ address: String) -> HTTPTestClient? {
            guard let client = try? HTTPTestClient(port: port, from: address) else { return nil }
            try? client.send(Array("GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
            return client
        }

        /// An event stream (no token) read by nobody: a small receive buffer, kept alive.
        private func openStream(_ address: String) -> HTTPTestClient? {
            guard let client = try? HTTPTestClient(port: port, receiveBuffer: 2048, from: address) else { return nil }
            try? client.send(HTTPTestClient.requestBytes("GET", "/api/v1/events", headers: ["Connection": "keep-alive"]))
            return client
        }

        /// Whether the server has ended `client`'s connection (looks without reading what it sent).
        private static func isEnded(_ client: HTTPTestClient) -> Bool {
            var byte: UInt8 = 0
            let count = recv(client.fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
            return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        }

        func start() {
            thread = NamedThread.start(name: "test.attack") { [self] in
                var round = 0
                while !stopped.load(ordering: .acquiring) {
                    let now = MonotonicClock.now()
                    for index in slow.indices {
                        if let client = slow[index].client, !Self.isEnded(client) {
                            // One more header line every 2 s (every eighth round of 250 ms).
                            if round % 8 == index % 8 { try? client.send(Array("X-Slow-\(round): x\r\n".utf8)) }
                            continue
                        }
                        if slow[index].client != nil { reopened.add(1, ordering: .relaxed) }
                        slow[index].client = openSlow(slow[index].address)
                    }
                    // A stream ended by the server (or refused) is tried again, at most once a second.
                    for index in streams.indices where now - streams[index].opened > 1_000_000_000 {
                        if let client = streams[index].client, !Self.isEnded(client) { continue }
                        streams[index].client = openStream(streams[index].address)
                        streams[index].opened = now
                    }
                    round += 1
                    MonotonicClock.sleep(until: now + 250_000_000)
                }
            }
        }

        func stop() {
            stopped.store(true, ordering: .releasing)
            thread?.join()
            slow = []
            streams = []
        }
    }

    /// The console's connection figures from `/metrics` (read over the control socket, not HTTP).
    static func metrics(_ studio: StudioHarness) throws -> [String: Double] {
        let reply = try ControlClient(socketPath: studio.socket).request("metrics", arguments: [:], timeoutSeconds: 5)
        let text = reply["text"]?.stringValue ?? ""
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("studio_http_") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    static func threads(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0
    }

    func operatorKeepsTheConsole(token: String?) throws {
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        var extra: [String] = []
        if let token {
            let config = studio.directory.appendingPathComponent("studio.yaml")
            try "http:\n  token: \(token)\n".write(to: config, atomically: true, encoding: .utf8)
            extra = ["--config", config.path]
        }
        let server = try studio.serve(["--cameras", "2", "--http", "127.0.0.1:\(port)"] + EndToEndTests.smallProgram + extra)
        #expect(studio.waitForProgramFrames(3))
        let authorization = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
        // HEAD on the page: the GET's status and headers, no body.
        let page = try HTTPTestClient.fetch(port: port, "GET", "/", headers: authorization)
        let head = try HTTPTestClient.fetch(port: port, "HEAD", "/", headers: authorization)
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == String(page.body.count)
                && head.headers["content-type"] == page.headers["content-type"], "\(head) \(head.headers)")
        let lateBefore = try #require(try studio.status()["program"]?["late_ticks"]?.intValue)
        let threadsBefore = Self.threads(server.pid)

        let attack = Attack(port: port)
        attack.start()
        defer { attack.stop() }
        // The attack is in place: the slowloris connections wait for their requests; without a token
        // the streams are open too (with one, each is answered 401 and closed, and comes back a second later).
        let inPlace = waitUntil(seconds: 20, every: 0.1) {
            guard let figures = try? Self.metrics(studio) else { return false }
            let waiting = figures["studio_http_connections{state=\"waiting\"}"] ?? 0
            let streams = figures["studio_http_connections{state=\"stream\"}"] ?? 0
            return waiting >= 180 && (token != nil || streams >= 190)
        }
        #expect(inPlace, "the attack did not get its connections: \((try? Self.metrics(studio)) ?? [:])")
        let threadsUnderAttack = Self.threads(server.pid)

        // The operator switches, again and again, until every slowloris connection has been cut at its
        // deadline (10 s) at least once and opened again: each switch answers within a second.
        var seconds: [Double] = []
        var failures: [String] = []
        let cutOnce = waitUntil(seconds: 40, every: 0.1) {
            let source = seconds.count % 2 == 0 ? "cam2" : "cam1"
            let started = MonotonicClock.now()
            do {
                let answer = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", headers: authorization,
                                                      body: Array("{\"source\":\"\(source)\"}".utf8))
                if answer.status != 200 { failures.append("\(answer)") }
            } catch {
                failures.append("\(error)")
            }
            seconds.append(Double(MonotonicClock.now() - started) / 1e9)
            return attack.reopened.load(ordering: .relaxed) >= 192 && seconds.count >= 10
        }
        #expect(cutOnce, "the slowloris connections were not all cut at their deadline: \(attack.reopened.load(ordering: .relaxed)) reopened")
        #expect(failures.isEmpty, "\(failures.count) of \(seconds.count) switches failed: \(failures.prefix(3))")
        let slowest = seconds.max() ?? .infinity
        #expect(slowest < 1, "the slowest of \(seconds.count) switches took \(slowest) s")
        let figures = try Self.metrics(studio)
        #expect((figures["studio_http_connections_cut_total{reason=\"request_deadline\"}"] ?? 0) >= 192, "\(figures)")
        let late = try #require(try studio.status()["program"]?["late_ticks"]?.intValue)
        #expect(late == lateBefore, "program ticks came late under the attack: \(late - lateBefore)")

        // The attackers go: every slot is free at once (not after an idle timeout).
        attack.stop()
        let gone = MonotonicClock.now()
        let freed = waitUntil(seconds: 15, every: 0.1) {
            guard let figures = try? Self.metrics(studio) else { return false }
            return ["waiting", "answering", "stream"].allSatisfy { (figures["studio_http_connections{state=\"\($0)\"}"] ?? 1) == 0 }
        }
        let freedSeconds = Double(MonotonicClock.now() - gone) / 1e9
        #expect(freed, "connections still open 15 s after the attackers went: \((try? Self.metrics(studio)) ?? [:])")
        let threadsAfter = Self.threads(server.pid)
        print("lockout (\(token == nil ? "no token" : "token")): \(seconds.count) switches, slowest \(String(format: "%.3f", slowest)) s, "
              + "median \(String(format: "%.3f", seconds.sorted()[seconds.count / 2])) s; threads \(threadsBefore) -> \(threadsUnderAttack) -> \(threadsAfter); "
              + "freed in \(String(format: "%.2f", freedSeconds)) s; \(figures.filter { $0.key.contains("_total") && $0.value > 0 })")
        #expect(studio.stopServer() == .exited(0))
    }

    @Test func theOperatorKeepsTheConsoleUnderSlowlorisAndNonReadingStreams() throws {
        try operatorKeepsTheConsole(token: nil)
    }

    @Test func theOperatorWithTheTokenKeepsTheConsoleWhenAttackersHaveNone() throws {
        try operatorKeepsTheConsole(token: "tok-0123456789abcdef")
    }
}
