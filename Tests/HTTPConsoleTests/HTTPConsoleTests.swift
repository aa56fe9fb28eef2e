import Foundation
import Testing
import Synchronization
import StudioCore
import StudioSystem
import TestSupport
@testable import HTTPConsole

@Suite struct HTTPRouteTableTests {
    let table = HTTPRouteTable([
        HTTPRoute(.get, "/api/v1/status", name: "status"),
        HTTPRoute(.get, "/api/v1/camera/{camera}/controls", name: "controls"),
        HTTPRoute(.post, "/api/v1/camera/{camera}/controls", name: "control"),
        HTTPRoute(.get, "/api/v1/sessions/{session:int}/events", name: "log"),
    ])

    @Test func matchesPathsAndParameters() {
        #expect(table.match(method: "GET", path: "/api/v1/status") == .route(table.routes[0], parameters: [:]))
        #expect(table.match(method: "POST", path: "/api/v1/camera/cam%202/controls")
                == .route(table.routes[2], parameters: ["camera": .text("cam 2")]))
        #expect(table.match(method: "GET", path: "/api/v1/sessions/12/events") == .route(table.routes[3], parameters: ["session": .integer(12)]))
    }

    @Test func wrongMethodNamesTheAllowedOnes() {
        #expect(table.match(method: "POST", path: "/api/v1/status") == .methodNotAllowed(allowed: [.get]))
        #expect(table.match(method: "DELETE", path: "/api/v1/camera/cam1/controls") == .methodNotAllowed(allowed: [.get, .post]))
    }

    @Test func unknownPathsAndBadNumbersAreNotFound() {
        #expect(table.match(method: "GET", path: "/api/v1/nothing") == .notFound(reason: nil))
        guard case .notFound(let reason) = table.match(method: "GET", path: "/api/v1/sessions/abc/events") else {
            Issue.record("a session that is no number matched")
            return
        }
        #expect(reason?.contains("\"abc\" is not a number") == true)
    }
}

@Suite struct HTTPAccessTests {
    @Test func tokenBucketRefusesAFloodAndRefills() {
        let clock = ManualClock()
        let budget = HTTPRequestBudget(burst: 3, ratePerSecond: 2, clock: clock)
        #expect((0..<3).allSatisfy { _ in budget.take("10.0.0.1") })
        #expect(!budget.take("10.0.0.1"), "the fourth request at once is over the burst")
        #expect(budget.take("10.0.0.2"), "another address has its own budget")
        clock.advance(by: 500_000_000)
        #expect(budget.take("10.0.0.1"), "half a second at 2/s gives one request back")
        #expect(!budget.take("10.0.0.1"))
    }

    @Test func tokenIsRequiredAndComparedWhole() {
        let policy = HTTPAccessPolicy(token: "0123456789abcdef")
        #expect(policy.refusal(method: "GET", authorization: nil, queryToken: nil, host: "10.0.0.5:8080", origin: nil) != nil)
        #expect(policy.refusal(method: "GET", authorization: "Bearer 0123456789abcdeX", queryToken: nil, host: nil, origin: nil) != nil)
        #expect(policy.refusal(method: "GET", authorization: "Bearer 0123456789abcde", queryToken: nil, host: nil, origin: nil) != nil)
        #expect(policy.refusal(method: "GET", authorization: "Bearer 0123456789abcdef", queryToken: nil, host: "10.0.0.5:8080", origin: nil) == nil)
        #expect(policy.refusal(method: "GET", authorization: nil, queryToken: "0123456789abcdef", host: nil, origin: nil) == nil)
        #expect(policy.refusal(method: "POST", authorization: nil, queryToken: "0123456789abcdef", host: nil, origin: nil) != nil,
                "a POST takes the token in its header only")
    }

    @Test func theBearerSchemeIsMatchedInAnyCase() {
        let policy = HTTPAccessPolicy(token: "0123456789abcdef")
        for header in ["Bearer 0123456789abcdef", "bearer 0123456789abcdef", "BEARER 0123456789abcdef", "bEaReR   0123456789abcdef "] {
            #expect(policy.refusal(method: "POST", authorization: header, queryToken: nil, host: nil, origin: nil) == nil, "\(header)")
        }
        for header in ["Basic 0123456789abcdef", "Bearer0123456789abcdef", "Bearer ", "0123456789abcdef"] {
            #expect(policy.refusal(method: "POST", authorization: header, queryToken: nil, host: nil, origin: nil) != nil, "\(header)")
        }
    }

    @Test func theHostCheckParsesNameAndPort() {
        #expect(HTTPAccessPolicy.hostAndPort("127.0.0.1:18431")! == ("127.0.0.1", 18431))
        #expect(HTTPAccessPolicy.hostAndPort("localhost")! == ("localhost", nil))
        #expect(HTTPAccessPolicy.hostAndPort("[::1]:80")! == ("::1", 80))
        #expect(HTTPAccessPolicy.hostAndPort("[::1]")! == ("::1", nil))
        for bad in ["127.0.0.1:18431.evil.com", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:80:81", "[::1]evil", "[::1", ":80", "127.0.0.1:+80", "127.0.0.1:８０"] {
            #expect(HTTPAccessPolicy.hostAndPort(bad) == nil, "\(bad)")
            #expect(!HTTPAccessPolicy.isLoopbackHost(bad), "\(bad)")
        }
        let open = HTTPAccessPolicy(token: nil)
        #expect(open.refusal(method: "GET", authorization: nil, queryToken: nil, host: "127.0.0.1:18431.evil.com", origin: nil)
                == .forbidden("Host \"127.0.0.1:18431.evil.com\" is not a loopback name; without http.token only 127.0.0.1, localhost and [::1] are served"))
        #expect(open.refusal(method: "GET", authorization: nil, queryToken: nil, host: "[::1]:18431", origin: nil) == nil)
    }

    @Test func postsFromAnotherOriginAndForeignHostsAreRefused() {
        let open = HTTPAccessPolicy(token: nil)
        #expect(open.refusal(method: "POST", authorization: nil, queryToken: nil, host: "127.0.0.1:8080", origin: nil) == nil)
        #expect(open.refusal(method: "POST", authorization: nil, queryToken: nil, host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080") == nil)
        #expect(open.refusal(method: "POST", authorization: nil, queryToken: nil, host: "127.0.0.1:8080", origin: "https://evil.example") != nil)
        #expect(open.refusal(method: "POST", authorization: nil, queryToken: nil, host: "127.0.0.1:8080", origin: "http://127.0.0.1:9999") != nil)
        #expect(open.refusal(method: "GET", authorization: nil, queryToken: nil, host: "evil.example:8080", origin: nil) != nil,
                "a DNS name pointing at loopback (rebinding) is refused without a token")
        #expect(open.refusal(method: "GET", authorization: nil, queryToken: nil, host: "localhost:8080", origin: nil) == nil)
    }

    @Test func constantTimeCompare() {
        #expect(HTTPAccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!HTTPAccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        #expect(!HTTPAccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abc\0".utf8)))
    }
}

/// A real console on loopback, port 0, with a handler that echoes what it was given.
final class ConsoleRig {
    let console: HTTPConsole
    let events: HTTPEventStream
    var port: Int { Int(console.port) }

    init(token: String? = nil, burst: Int = 1000, keepaliveSeconds: Double = 15, queueLimit: Int = 256,
         listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 0), tls: HTTPTLSCredentials? = nil,
         configure: (inout HTTPConsoleSettings) -> Void = { _ in }) throws {
        var settings = HTTPConsoleSettings(listen: listen, token: token, tls: tls)
        settings.burst = burst
        settings.ratePerSecond = 1
        settings.maxBodyBytes = 1024
        configure(&settings)
        events = HTTPEventStream(queueLimit: queueLimit, keepaliveSeconds: keepaliveSeconds)
        console = HTTPConsole(settings: settings, routes: [
            HTTPRoute(.get, "/api/v1/status", name: "status"),
            HTTPRoute(.post, "/api/v1/camera/{camera}/controls", name: "control"),
            HTTPRoute(.post, "/api/v1/later", name: "later"),
        ], events: events) { call, respond in
            let parameters = call.parameters.map { key, value in
                switch value {
                case .text(let text): return "\(key)=\(text)"
                case .integer(let number): return "\(key)=#\(number)"
                }
            }.sorted().joined(separator: ",")
            let answer = HTTPResponse.json(200, "{\"route\":\"\(call.route.name)\",\"parameters\":\"\(parameters)\",\"body\":\(call.body.count)}")
            if call.route.name == "later" {
                // Answered from another thread, later (as a cut answers once its frame is out).
                _ = NamedThread.start(name: "test.later") { usleep(100_000); respond(answer) }
            } else {
                respond(answer)
            }
        }
        try console.start()
    }

    deinit { console.stop() }
}

@Suite struct HTTPConsoleServerTests {
    @Test func answersRoutesAndErrorsAsJSON() throws {
        let rig = try ConsoleRig()
        #expect(rig.port > 0)
        let status = try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status")
        #expect(status.status == 200 && status.text.contains("\"route\":\"status\""), "\(status)")
        #expect(status.headers["content-type"] == "application/json")

        let control = try HTTPTestClient.fetch(port: rig.port, "POST", "/api/v1/camera/cam2/controls", body: Array("{\"a\":1}".utf8))
        #expect(control.status == 200 && control.text.contains("\"parameters\":\"camera=cam2\""), "\(control)")
        #expect(control.text.contains("\"body\":7"), "\(control)")

        let later = try HTTPTestClient.fetch(port: rig.port, "POST", "/api/v1/later")
        #expect(later.status == 200 && later.text.contains("\"route\":\"later\""), "an answer from another thread arrives: \(later)")

        let missing = try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/nothing")
        #expect(missing.status == 404 && missing.text.contains("\"code\":\"not_found\""), "\(missing)")

        let wrong = try HTTPTestClient.fetch(port: rig.port, "DELETE", "/api/v1/status")
        #expect(wrong.status == 405 && wrong.headers["allow"] == "GET, HEAD", "\(wrong) \(wrong.headers)")
        #expect(wrong.text.contains("\"error\":{\"code\":\"method_not_allowed\""))

        let large = try HTTPTestClient.fetch(port: rig.port, "POST", "/api/v1/camera/cam2/controls", body: [UInt8](repeating: 0x20, count: 5000))
        #expect(large.status == 413 && large.text.contains("too_large"), "\(large)")

        let crossSite = try HTTPTestClient.fetch(port: rig.port, "POST", "/api/v1/later", headers: ["Origin": "https://evil.example"])
        #expect(crossSite.status == 403 && crossSite.text.contains("forbidden"), "\(crossSite)")
    }

    /// A capture node's camera `pc2/cam1` in a path is `pc2%2Fcam1`: one segment, decoded after the path
    /// is split (libmicrohttpd would decode it before); the query's values are decoded whole.
    @Test func anEscapedSlashStaysInItsSegment() throws {
        let rig = try ConsoleRig(token: "secret/token-0123456789")
        let bearer = ["Authorization": "Bearer secret/token-0123456789"]
        let node = try HTTPTestClient.fetch(port: rig.port, "POST", "/api/v1/camera/pc2%2Fcam1/controls", headers: bearer)
        #expect(node.status == 200 && node.text.contains("\"parameters\":\"camera=pc2/cam1\""), "\(node)")
        let percent = try HTTPTestClient.fetch(port: rig.port, "POST", "/api/v1/camera/a%252Fb%20c/controls", headers: bearer)
        #expect(percent.status == 200 && percent.text.contains("\"parameters\":\"camera=a%2Fb c\""), "\(percent)")
        let split = try HTTPTestClient.fetch(port: rig.port, "POST", "/api/v1/camera/pc2/cam1/controls", headers: bearer)
        #expect(split.status == 404, "\(split)")
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status?token=secret%2Ftoken-0123456789").status == 200)
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status?token=secret%252Ftoken-0123456789").status == 401)
    }

    @Test func chunkedBodyOverTheLimitIsRefused() throws {
        let rig = try ConsoleRig()
        let client = try HTTPTestClient(port: rig.port)
        var bytes = Array("POST /api/v1/camera/cam1/controls HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<3 { bytes += Array("200\r\n".utf8) + [UInt8](repeating: 0x20, count: 512) + Array("\r\n".utf8) }
        bytes += Array("0\r\n\r\n".utf8)
        try client.send(bytes)
        let response = try client.readResponse()
        #expect(response.status == 413, "\(response)")
    }

    @Test func tokenIsCheckedOnEveryRequest() throws {
        let rig = try ConsoleRig(token: "secret-token-0123456789")
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status").status == 401)
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/events").status == 401, "the event stream too")
        let wrong = try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status", headers: ["Authorization": "Bearer nope"])
        #expect(wrong.status == 401 && wrong.text.contains("unauthorized"))
        let right = try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status", headers: ["Authorization": "Bearer secret-token-0123456789"])
        #expect(right.status == 200, "\(right)")
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status?token=secret-token-0123456789").status == 200)
    }

    @Test func aFloodingClientGets429() throws {
        let rig = try ConsoleRig(burst: 5)
        let statuses = try (0..<8).map { _ in try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status").status }
        #expect(statuses.prefix(5).allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(statuses.suffix(3).allSatisfy { $0 == 429 }, "\(statuses)")
        #expect(rig.console.throttledCount == 3)
    }

    @Test func eventStreamDeliversLinesAndKeepalives() throws {
        let rig = try ConsoleRig(keepaliveSeconds: 0.2)
        let client = try HTTPTestClient(port: rig.port)
        try client.send(HTTPTestClient.requestBytes("GET", "/api/v1/events"))
        let head = client.read { String(decoding: $0, as: UTF8.self).contains(": subscribed") }
        #expect(String(decoding: head, as: UTF8.self).contains("text/event-stream"))
        #expect(waitUntil { rig.events.clientCount == 1 })
        rig.events.publish("{\"event\":{\"kind\":\"switch\"}}")
        let event = client.read { String(decoding: $0, as: UTF8.self).contains("data: {\"event\":{\"kind\":\"switch\"}}") }
        #expect(String(decoding: event, as: UTF8.self).contains("data: {\"event\":{\"kind\":\"switch\"}}"))
        let keepalive = client.read(seconds: 5) { String(decoding: $0, as: UTF8.self).contains(": keepalive") }
        #expect(String(decoding: keepalive, as: UTF8.self).contains(": keepalive"))
    }

    @Test func aClientThatDoesNotReadIsDroppedNotBuffered() throws {
        let rig = try ConsoleRig(queueLimit: 16)
        let slow = try HTTPTestClient(port: rig.port, receiveBuffer: 2048)
        try slow.send(HTTPTestClient.requestBytes("GET", "/api/v1/events"))
        #expect(waitUntil { rig.events.clientCount == 1 })
        let line = "{\"event\":{\"kind\":\"tally\",\"padding\":\"" + String(repeating: "x", count: 400) + "\"}}"
        let started = MonotonicClock.now()
        var published = 0
        while rig.events.droppedClientCount == 0, published < 100_000 {
            rig.events.publish(line)
            published += 1
        }
        let seconds = Double(MonotonicClock.now() - started) / 1e9
        #expect(rig.events.droppedClientCount == 1, "the client that never reads is dropped")
        #expect(rig.events.clientCount == 0)
        #expect(seconds < 5, "publishing never waited for the client (\(seconds) s for \(published) events)")
        // Its socket is freed at once, not after the idle timeout (its thread was waiting to write).
        #expect(slow.waitForClose(seconds: 3), "the dropped client's connection is closed")
        #expect(waitUntil(seconds: 3) { rig.console.connectionCounts.open == 0 }, "\(rig.console.connectionCounts)")
        #expect(rig.console.connectionCounts.cut[.streamDropped] == 1)
        // A reading client still gets what comes next.
        let reader = try HTTPTestClient(port: rig.port)
        try reader.send(HTTPTestClient.requestBytes("GET", "/api/v1/events"))
        #expect(waitUntil { rig.events.clientCount == 1 })
        rig.events.publish("{\"event\":{\"kind\":\"cut\"}}")
        let got = reader.read { String(decoding: $0, as: UTF8.self).contains("\"cut\"") }
        #expect(String(decoding: got, as: UTF8.self).contains("\"cut\""))
    }
}

