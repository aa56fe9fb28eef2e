import Foundation
import Testing
import Synchronization
import StudioCore
import StudioSystem
import TestSupport
@testable import HTTPConsole

@Suite struct HTTPRouteSuffixTests {
    @Test func aParameterWithAFixedEndingMatchesOnlyThatEnding() {
        let table = HTTPRouteTable([
            HTTPRoute(.get, "/api/v1/tiles/{tile}.jpg", name: "picture"),
            HTTPRoute(.get, "/api/v1/tiles/{tile}/stream", name: "stream"),
        ])
        #expect(table.match(method: "GET", path: "/api/v1/tiles/cam2.jpg") == .route(table.routes[0], parameters: ["tile": .text("cam2")]))
        #expect(table.match(method: "GET", path: "/api/v1/tiles/my%20cam.jpg") == .route(table.routes[0], parameters: ["tile": .text("my cam")]))
        #expect(table.match(method: "GET", path: "/api/v1/tiles/cam2/stream") == .route(table.routes[1], parameters: ["tile": .text("cam2")]))
        #expect(table.match(method: "GET", path: "/api/v1/tiles/cam2.png") == .notFound(reason: nil))
        #expect(table.match(method: "GET", path: "/api/v1/tiles/.jpg") == .notFound(reason: nil), "an empty name is no name")
        #expect(table.match(method: "GET", path: "/api/v1/tiles/cam2") == .notFound(reason: nil))
    }
}

/// A real console whose `/count` streams numbered parts for as long as the client reads.
final class StreamRig: Sendable {
    let console: HTTPConsole
    let partsMade = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    let started = Atomic<Int>(0)

    /// `pause`: each part waits this long first (0: as fast as the client takes them); `silent`: the
    /// stream never has anything to send (it answers "nothing yet").
    init(pauseSeconds: Double = 0, silent: Bool = false) throws {
        let routes = [HTTPRoute(.get, "/count", name: "count")]
        let box = Mutex<StreamRig?>(nil)
        console = HTTPConsole(settings: HTTPConsoleSettings(listen: ListenAddress(host: "127.0.0.1", port: 0), token: nil),
                              routes: routes, events: HTTPEventStream()) { _, respond in
            guard let rig = box.withLock({ $0 }) else { return respond(.error(503, code: "unavailable", "not ready")) }
            rig.started.add(1, ordering: .relaxed)
            respond(.streaming(contentType: "text/plain", HTTPBodyStream(next: {
                if silent {
                    usleep(50_000)
                    return []
                }
                if pauseSeconds > 0 { usleep(UInt32(pauseSeconds * 1e6)) }
                let number = rig.partsMade.add(1, ordering: .relaxed).newValue
                return Array("part \(number)\n".utf8) + [UInt8](repeating: 0x2E, count: 4000) + [0x0A]
            }, finished: { rig.finished.add(1, ordering: .relaxed) })))
        }
        box.withLock { $0 = self }
        try console.start()
    }
}

@Suite struct HTTPBodyStreamTests {
    @Test func aStreamSendsItsPartsAndFinishesWhenTheClientGoes() throws {
        let rig = try StreamRig(pauseSeconds: 0.01)
        var client: HTTPTestClient? = try HTTPTestClient(port: Int(rig.console.port))
        try client!.send(HTTPTestClient.requestBytes("GET", "/count"))
        let received = String(decoding: client!.read { String(decoding: $0, as: UTF8.self).contains("part 5\n") }, as: UTF8.self)
        #expect(received.hasPrefix("HTTP/1.1 200") && received.lowercased().contains("content-type: text/plain"), "\(received.prefix(200))")
        for number in 1...5 { #expect(received.contains("part \(number)\n")) }
        #expect(rig.finished.load(ordering: .relaxed) == 0, "finished while the client still reads")
        client = nil  // closes the socket
        #expect(waitUntil { rig.finished.load(ordering: .relaxed) == 1 }, "the stream was not finished after its client went away")
        let made = rig.partsMade.load(ordering: .relaxed)
        usleep(200_000)
        #expect(rig.partsMade.load(ordering: .relaxed) == made, "parts were still made for a client that is gone")
    }

    @Test func stoppingTheConsoleEndsAStreamWithNothingToSend() throws {
        let rig = try StreamRig(silent: true)
        let client = try HTTPTestClient(port: Int(rig.console.port))
        try client.send(HTTPTestClient.requestBytes("GET", "/count"))
        let head = String(decoding: client.read { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }, as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
        let started = MonotonicClock.now()
        rig.console.stop()
        #expect(MonotonicClock.now() - started < 3_000_000_000, "stop waited for the stream")
        #expect(rig.finished.load(ordering: .relaxed) == 1)
    }
}
