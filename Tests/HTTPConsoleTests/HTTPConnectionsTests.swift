import Foundation
import Testing
import StudioSystem
import TestSupport
@testable import HTTPConsole

/// The console's account of connections on a hand-moved clock (descriptors -1: nothing is shut down).
@Suite struct HTTPConnectionsTests {
    let clock = ManualClock()

    func table(total: Int = 4, perAddress: Int = 2, requestSeconds: Double = 10) -> HTTPConnections {
        HTTPConnections(limits: .init(total: total, perAddress: perAddress, requestSeconds: requestSeconds), clock: clock)
    }

    func open(_ connections: HTTPConnections, _ address: String) -> HTTPConnections.Connection? {
        connections.admit(address) ? connections.opened(fd: -1, address: address) : nil
    }

    @Test func aRequestMustArriveWholeWithinTheDeadlineFromAccept() {
        let connections = table()
        let slow = open(connections, "10.0.0.1")!
        let quick = open(connections, "10.0.0.2")!
        clock.advance(by: 5_000_000_000)
        connections.answering(quick)
        #expect(connections.expire() == 0)
        clock.advance(by: 5_000_000_000)
        #expect(connections.expire() == 1, "ten seconds after its accept the trickling request is cut, whatever it sent meanwhile")
        #expect(connections.counts.cut[.requestDeadline] == 1 && connections.counts.answering == 1 && connections.counts.waiting == 0)
        // Answered and kept alive: the next request has its own ten seconds from then.
        clock.advance(by: 60_000_000_000)
        #expect(connections.expire() == 0, "no deadline while answering (a cut waits for its frame)")
        connections.waiting(quick)
        clock.advance(by: 9_000_000_000)
        #expect(connections.expire() == 0)
        clock.advance(by: 1_000_000_000)
        #expect(connections.expire() == 1)
        connections.closed(slow)
        connections.closed(quick)
        #expect(connections.counts.open == 0)
    }

    @Test func aNewConnectionTakesTheSlotOfTheLongestWaiting() {
        let connections = table(total: 4, perAddress: 2)
        let first = open(connections, "10.0.0.1")!
        clock.advance(by: 1_000_000)
        _ = open(connections, "10.0.0.1")!
        clock.advance(by: 1_000_000)
        let third = open(connections, "10.0.0.2")!
        _ = open(connections, "10.0.0.2")!
        // The address is at its limit: its own longest-waiting connection goes.
        #expect(open(connections, "10.0.0.1") != nil)
        #expect(first.isCut && connections.counts.cut[.evicted] == 1)
        // The console is full (4): the longest waiting anywhere goes, so the operator gets in.
        #expect(open(connections, "127.0.0.1") != nil)
        #expect(connections.counts.cut[.evicted] == 2 && third.isCut == false, "the oldest waiting one, from 10.0.0.1, went")
        #expect(connections.counts.open == 4)
    }

    @Test func connectionsThatAreAnsweredAreNotEvictedAndTheRestAreRefused() {
        let connections = table(total: 2, perAddress: 2)
        let a = open(connections, "10.0.0.1")!, b = open(connections, "10.0.0.2")!
        connections.answering(a)
        connections.answering(b)
        #expect(open(connections, "10.0.0.3") == nil)
        #expect(connections.counts.refused[.full] == 1)
        let same = table(total: 8, perAddress: 1)
        connections.closed(a)
        let c = open(same, "10.0.0.1")!
        same.answering(c)
        #expect(open(same, "10.0.0.1") == nil && same.counts.refused[.addressLimit] == 1)
    }

    @Test func streamsHoldAtMostHalfTheSlots() {
        let connections = table(total: 8, perAddress: 4)
        let streams = (1...5).map { open(connections, "10.0.0.\($0)")! }
        #expect(streams.prefix(4).allSatisfy { connections.beginStream($0) })
        #expect(!connections.beginStream(streams[4]), "four of eight slots are streams already")
        #expect(connections.beginStream(streams[0]), "a stream asking again keeps its slot")
        let perAddress = table(total: 8, perAddress: 4)
        let one = open(perAddress, "10.0.0.1")!, two = open(perAddress, "10.0.0.1")!, three = open(perAddress, "10.0.0.1")!
        #expect(perAddress.beginStream(one) && perAddress.beginStream(two) && !perAddress.beginStream(three))
        #expect(perAddress.counts.streams == 2 && perAddress.counts.waiting == 1)
    }
}

/// The same against a real console: clients that trickle, fill it, or never read.
@Suite(.serialized) struct HTTPConnectionLimitTests {
    /// Sends one header line every 200 ms (never the blank line that ends the headers) until the server
    /// ends the connection or `seconds` pass; true when it was ended.
    static func trickle(_ client: HTTPTestClient, seconds: Double) throws -> Bool {
        try client.send(Array("GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        var line = 0
        while MonotonicClock.now() < deadline {
            if client.waitForClose(seconds: 0.2) { return true }
            line += 1
            do { try client.send(Array("X-Trickle-\(line): x\r\n".utf8)) } catch { return true }
        }
        return false
    }

    @Test func aTricklingRequestIsCutAtItsDeadline() throws {
        let rig = try ConsoleRig { $0.requestDeadlineSeconds = 1 }
        let slow = try HTTPTestClient(port: rig.port)
        let started = MonotonicClock.now()
        #expect(try Self.trickle(slow, seconds: 8), "a header line every 200 ms does not keep the connection")
        let seconds = Double(MonotonicClock.now() - started) / 1e9
        #expect(seconds >= 0.9 && seconds < 4, "cut after \(seconds) s (deadline 1 s)")
        #expect(rig.console.connectionCounts.cut[.requestDeadline] == 1)
        // A request that arrives whole is answered as before.
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status").status == 200)
    }

    @Test func theOperatorGetsInWhileSlowClientsFillTheConsole() throws {
        let rig = try ConsoleRig { settings in
            settings.maxConnections = 8
            settings.maxConnectionsPerAddress = 4
        }
        var slow: [HTTPTestClient] = []
        for address in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
            for _ in 0..<4 {
                let client = try HTTPTestClient(port: rig.port, from: address)
                try client.send(Array("GET /api/v1/status HTTP/1.1\r\n".utf8))
                slow.append(client)
            }
        }
        // Twelve tried, from three addresses, each address at most four, the console eight.
        #expect(waitUntil(seconds: 5) { rig.console.connectionCounts.waiting == 8 }, "\(rig.console.connectionCounts)")
        let started = MonotonicClock.now()
        let answer = try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status")
        let seconds = Double(MonotonicClock.now() - started) / 1e9
        #expect(answer.status == 200 && seconds < 1, "\(answer) after \(seconds) s")
        let counts = rig.console.connectionCounts
        #expect((counts.cut[.evicted] ?? 0) >= 5, "slow connections made room: \(counts)")
        // The operator's own address is at its limit with slow connections: still in.
        let own = try (0..<4).map { _ in try HTTPTestClient(port: rig.port, from: "127.0.0.1") }
        for client in own { try client.send(Array("GET /api/v1/status HTTP/1.1\r\n".utf8)) }
        #expect(waitUntil(seconds: 5) { rig.console.connectionCounts.waiting >= 4 })
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status").status == 200)
        withExtendedLifetime((slow, own)) {}
    }

    @Test func headIsAnsweredOnGetRoutesWithTheGetsHeaders() throws {
        let rig = try ConsoleRig()
        let get = try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status")
        let head = try HTTPTestClient.fetch(port: rig.port, "HEAD", "/api/v1/status")
        #expect(head.status == 200 && head.body.isEmpty, "\(head)")
        #expect(head.headers["content-length"] == String(get.body.count) && head.headers["content-type"] == get.headers["content-type"],
                "\(head.headers) / \(get.headers)")
        let stream = try HTTPTestClient(port: rig.port)
        try stream.send(HTTPTestClient.requestBytes("HEAD", "/api/v1/events"))
        let raw = String(decoding: stream.read(seconds: 5), as: UTF8.self)
        #expect(raw.hasPrefix("HTTP/1.1 200") && raw.contains("text/event-stream") && !raw.contains("subscribed"), "\(raw)")
        #expect(waitUntil(seconds: 3) { rig.events.clientCount == 0 })
        #expect(try HTTPTestClient.fetch(port: rig.port, "HEAD", "/api/v1/nothing").status == 404)
        let post = try HTTPTestClient.fetch(port: rig.port, "HEAD", "/api/v1/later")
        #expect(post.status == 405 && post.headers["allow"] == "POST", "a POST route takes no HEAD: \(post)")
    }

    @Test func theBearerSchemeAndTheHostAreParsedOnTheWire() throws {
        let rig = try ConsoleRig(token: "secret-token-0123456789")
        let lower = try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status", headers: ["Authorization": "bearer secret-token-0123456789"])
        #expect(lower.status == 200, "\(lower)")
        let open = try ConsoleRig()
        let foreign = try HTTPTestClient.fetch(port: open.port, "GET", "/api/v1/status", headers: ["Host": "127.0.0.1:\(open.port).evil.com"])
        #expect(foreign.status == 403 && foreign.text.contains("is not a loopback name"), "\(foreign)")
        #expect(try HTTPTestClient.fetch(port: open.port, "GET", "/api/v1/status", headers: ["Host": "127.0.0.1:\(open.port)"]).status == 200)
    }
}
