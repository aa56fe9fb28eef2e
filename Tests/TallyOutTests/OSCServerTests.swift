import Foundation
import Synchronization
import Testing
import StudioCore
import TestSupport
@testable import TallyOut

/// The OSC server with real UDP sockets on loopback and peers whose packets python3 builds and reads
/// (osc_packet.py): subscriptions and feedback, the config's feedback addresses, a dead peer, levels at
/// their rate, and refusals counted and logged once per interval however many come.
@Suite struct OSCServerTests {
    /// A value behind a lock that closures can share.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
    }

    final class Rig: Sendable {
        let board = Shared(TallyBoard(lamps: [TallyLamp(name: "cam1", kind: .camera, index: 1, program: true),
                                              TallyLamp(name: "cam2", kind: .camera, index: 2)], program: "cam1"))
        let feed: TallyFeed
        let server: OSCServer
        let logged = Shared<[String]>([])
        let dispatched = Shared<[OSCMessage]>([])

        init(feedback: [ListenAddress] = []) throws {
            let board = self.board, logged = self.logged, dispatched = self.dispatched
            feed = TallyFeed { board.withLock { $0 } }
            let made = OSCServer(
                settings: OSCSettings(listen: ListenAddress(host: "127.0.0.1", port: 0), feedback: feedback), feed: feed,
                dispatch: { message, answer in
                    guard message.address == "/studio/cut" else { return (.unknownAddress, "not here") }
                    dispatched.withLock { $0.append(message) }
                    answer(OSCServer.Answer(reply: OSCMessage("/studio/reply", [.string(message.address), .string("{}")])))
                    return nil
                },
                levels: { [("mic1", -12.5), ("master", -6)] }, log: { line in logged.withLock { $0.append(line) } })
            guard let made else { throw OSCError("no server with a listen address") }
            server = made
            try server.start()
        }

        /// cam2 on program, cam1 on preview.
        func cut() {
            board.withLock { board in
                board.lamps[0].program = false
                board.lamps[0].preview = true
                board.lamps[1].program = true
                board.program = "cam2"
                board.preview = "cam1"
            }
            feed.changed()
        }
    }

    @Test func subscribersGetTheTallyAtOnceAndOnEveryChangeAndLevelsAtTheirRate() throws {
        let rig = try Rig()
        defer { rig.server.stop() }
        let surface = try OSCPeer(), listener = try OSCPeer()
        // The surface subscribes the port it listens on (TouchOSC sends from another than it receives on).
        try surface.send(#"["/studio/subscribe", ["i", \#(listener.port)]]"#, to: rig.server.port)
        // Sent in order: subscribed, program, preview, then each source.
        #expect(listener.receive(seconds: 5) { $0.contains(#"["/studio/tally/cam2", ["i", 0]]"#) }, "\(listener.received)")
        #expect(listener.got("/studio/subscribed", #"["i", 60]"#) && listener.got("/studio/tally/program", #"["s", "cam1"]"#)
                && listener.got("/studio/tally/preview", #"["s", ""]"#) && listener.got("/studio/tally/cam1", #"["i", 1]"#))
        rig.cut()
        #expect(listener.receive(seconds: 5) { $0.contains(#"["/studio/tally/cam2", ["i", 1]]"#) }, "\(listener.received.suffix(8))")
        #expect(listener.got("/studio/tally/program", #"["s", "cam2"]"#) && listener.got("/studio/tally/cam1", #"["i", 2]"#))

        // Levels: about ten a second (a hundred milliseconds apart), each name's loudest channel.
        let before = listener.received.count
        // Twenty intervals, so that the test's own late reading of the first (python3 decodes in batches) hardly counts.
        #expect(listener.receive(seconds: 10) { $0.dropFirst(before).filter { $0.hasPrefix(#"["/studio/levels/mic1""#) }.count >= 21 })
        let times = zip(listener.received, listener.arrivals).dropFirst(before).filter { $0.0.hasPrefix(#"["/studio/levels/mic1""#) }.map(\.1)
        let spacing = try #require(times.last).timeIntervalSince(try #require(times.first)) / Double(times.count - 1)
        #expect(spacing > 0.08 && spacing < 0.5, "levels every \(spacing) s")
        #expect(listener.got("/studio/levels/mic1", #"["f", -12.5]"#) && listener.got("/studio/levels/master", #"["f", -6.0]"#))
        #expect(rig.server.counters.subscribers == 1 && rig.server.counters.feedbackSent > 20)

        // Unsubscribed: nothing more after the answer.
        try surface.send(#"["/studio/unsubscribe", ["i", \#(listener.port)]]"#, to: rig.server.port)
        #expect(surface.receive(seconds: 5) { $0.contains(#"["/studio/unsubscribed"]"#) })
        #expect(waitUntil(seconds: 5) { rig.server.counters.subscribers == 0 })
    }

    @Test func feedbackAddressesAreSentWithoutSubscribingAndADeadOneCostsNothing() throws {
        let console = try OSCPeer()
        var dead: UInt16 = 0
        do { dead = try OSCPeer().port }  // bound, then closed: nobody listens there
        let rig = try Rig(feedback: [ListenAddress(host: "127.0.0.1", port: dead), ListenAddress(host: "127.0.0.1", port: console.port)])
        defer { rig.server.stop() }
        rig.cut()
        #expect(console.receive(seconds: 5) { $0.contains(#"["/studio/tally/program", ["s", "cam2"]]"#) }, "\(console.received.suffix(6))")
        let count = console.received.count
        #expect(console.receive(seconds: 5) { $0.count > count + 20 }, "levels keep coming past the dead peer")
        // A command still goes through and is answered.
        try console.send(#"["/studio/cut"]"#, to: rig.server.port)
        #expect(console.receive(seconds: 5) { $0.contains(#"["/studio/reply", ["s", "/studio/cut"], ["s", "{}"]]"#) })
        #expect(rig.dispatched.withLock { $0 } == [OSCMessage("/studio/cut")])
    }

    @Test func refusalsAreCountedByReasonAnsweredAndLoggedOncePerInterval() throws {
        let rig = try Rig()
        defer { rig.server.stop() }
        let peer = try OSCPeer()
        for _ in 0..<50 { peer.send([0x2F, 0x61, 0, 0, 0x2C, 0x62, 0, 0, 1, 2, 3, 4], to: rig.server.port) }  // a blob: not read
        for _ in 0..<10 { peer.send([1, 2, 3], to: rig.server.port) }
        peer.send([], to: rig.server.port)  // an empty datagram
        try peer.send(#"{"elements": [["/studio/nope"], ["/studio/cut"]]}"#, to: rig.server.port)
        #expect(peer.receive(seconds: 5) { $0.contains { $0.hasPrefix(#"["/studio/error", ["s", "/studio/nope"], ["s", "unknown_address"]"#) }
                && $0.contains(#"["/studio/reply", ["s", "/studio/cut"], ["s", "{}"]]"#) }, "\(peer.received)")
        #expect(waitUntil(seconds: 5) { rig.server.counters.refused[.malformed] == 61 }, "\(rig.server.counters)")
        #expect(rig.server.counters.refused[.unknownAddress] == 1 && rig.server.counters.packets == 62 && rig.server.counters.messages == 2)
        let lines = rig.logged.withLock { $0 }
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.hasPrefix("osc: refused from 127.0.0.1:\(peer.port): a malformed packet (12 bytes): the type tag string has an unknown or unsupported tag 'b'") == true, "\(lines)")

        // A subscribe with something else than a port is refused too; the server goes on.
        try peer.send(#"["/studio/subscribe", ["s", "everyone"]]"#, to: rig.server.port)
        #expect(peer.receive(seconds: 5) { $0.contains { $0.hasPrefix(#"["/studio/error", ["s", "/studio/subscribe"], ["s", "invalid_argument"]"#) } })
        #expect(rig.server.counters.subscribers == 0)
    }

    @Test func subscriptionsAreBounded() throws {
        let rig = try Rig()
        defer { rig.server.stop() }
        let peer = try OSCPeer()
        for port in 0..<OSCSettings.maximumSubscribers {
            try peer.send(#"["/studio/subscribe", ["i", \#(40000 + port)]]"#, to: rig.server.port)
        }
        #expect(waitUntil(seconds: 10) { rig.server.counters.subscribers == OSCSettings.maximumSubscribers })
        try peer.send(#"["/studio/subscribe"]"#, to: rig.server.port)
        #expect(peer.receive(seconds: 5) { $0.contains { $0.hasPrefix(#"["/studio/error", ["s", "/studio/subscribe"], ["s", "subscriptions_full"]"#) } })
        #expect(rig.server.counters.refused[.subscriptionsFull] == 1)
        // Renewing one already subscribed is no new one.
        try peer.send(#"["/studio/subscribe", ["i", 40000]]"#, to: rig.server.port)
        try peer.send(#"["/studio/unsubscribe", ["i", 40001]]"#, to: rig.server.port)
        #expect(waitUntil(seconds: 5) { rig.server.counters.subscribers == OSCSettings.maximumSubscribers - 1 })
        #expect(rig.server.counters.refused[.subscriptionsFull] == 1)
    }
}
