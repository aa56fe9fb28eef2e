import Foundation
import Synchronization
import Testing
import StudioCore
import TestSupport
@testable import TallyOut

/// The vMix server with real sockets and clients that misbehave: one that never reads, one that sends a
/// line without end, 200 subscribers at once. The others are answered throughout; the bad ones dropped.
@Suite struct VMixServerTests {
    /// A board the test changes, and a server reading it.
    final class Board: Sendable {
        let value = Mutex(TallyBoard())
        func withLock<T>(_ body: (inout TallyBoard) -> T) -> T { value.withLock { body(&$0) } }
    }

    final class Rig: Sendable {
        let board = Board()
        let feed: TallyFeed
        let server: VMixServer

        init(lamps: Int, nameLength: Int = 4) throws {
            let board = self.board
            board.withLock { $0 = TallyBoard(lamps: (1...lamps).map { TallyLamp(name: "cam\($0)" + String(repeating: "x", count: nameLength), kind: .camera, index: UInt16($0)) }) }
            feed = TallyFeed { board.withLock { $0 } }
            server = VMixServer(listen: ListenAddress(host: "127.0.0.1", port: 0), functions: false, feed: feed, perform: { _, done in done("no") }, log: { _ in })
            try server.start()
        }

        /// Puts lamp `number` (from 1) on program, the others off.
        func program(_ number: Int) {
            board.withLock { board in for i in board.lamps.indices { board.lamps[i].program = i == number - 1 } }
            feed.changed()
        }
    }

    static func lines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
    }

    @Test func aClientThatNeverReadsIsDroppedAndTheOthersGoOn() throws {
        let rig = try Rig(lamps: 200, nameLength: 60)
        defer { rig.server.stop() }
        let port = Int(rig.server.port)
        // Never reads, with a small receive buffer: each XML reply is some 30 KB.
        let stuck = try HTTPTestClient(port: port, receiveBuffer: 4096)
        try stuck.send(Array(String(repeating: "XML\r\n", count: 100).utf8))
        let good = try HTTPTestClient(port: port)
        try good.send(Array("SUBSCRIBE TALLY\r\n".utf8))
        #expect(waitUntil(seconds: 10) { rig.server.counters.dropped == 1 }, "\(rig.server.counters)")
        rig.program(3)
        let seen = good.read(seconds: 5) { Self.lines($0).contains { $0.hasPrefix("TALLY OK 001") } }
        #expect(Self.lines(seen).first == "SUBSCRIBE OK TALLY" && Self.lines(seen).contains { $0.hasPrefix("TALLY OK 001") })
        #expect(stuck.waitForClose(seconds: 5), "the stuck client's connection was closed")
    }

    @Test func aLineWithoutEndIsRefusedAndItsClientDropped() throws {
        let rig = try Rig(lamps: 3)
        defer { rig.server.stop() }
        let flood = try HTTPTestClient(port: Int(rig.server.port))
        try flood.send([UInt8](repeating: UInt8(ascii: "A"), count: 5000))
        let reply = flood.read(seconds: 5) { $0.contains(0x0A) }
        #expect(Self.lines(reply).first?.hasPrefix("ER line longer than") == true, "\(Self.lines(reply))")
        #expect(flood.waitForClose(seconds: 5))
        #expect(waitUntil(seconds: 5) { rig.server.counters.dropped == 1 }, "\(rig.server.counters)")
        let next = try HTTPTestClient(port: Int(rig.server.port))
        try next.send(Array("TALLY\r\n".utf8))
        #expect(Self.lines(next.read(seconds: 5) { $0.contains(0x0A) }) == ["TALLY OK 000"])
    }

    @Test func twoHundredSubscribersEachGetTheChange() throws {
        let rig = try Rig(lamps: 4)
        defer { rig.server.stop() }
        let clients = try (0..<200).map { _ in try HTTPTestClient(port: Int(rig.server.port)) }
        for client in clients { try client.send(Array("SUBSCRIBE TALLY\r\n".utf8)) }
        #expect(waitUntil(seconds: 10) { rig.server.counters.clients == 200 })
        for client in clients { _ = client.read(seconds: 5) { Self.lines($0).contains("TALLY OK 0000") } }
        rig.program(2)
        let got = clients.filter { Self.lines($0.read(seconds: 5) { Self.lines($0).contains("TALLY OK 0100") }).contains("TALLY OK 0100") }
        #expect(got.count == 200)
        #expect(rig.server.counters.dropped == 0)
    }
}
