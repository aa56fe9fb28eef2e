import Foundation
import Synchronization
import Testing
import StudioCore
import StudioSystem
import TestSupport
@testable import TallyOut
#if canImport(Glibc)
import Glibc
#endif

/// A TSL 5 TCP receiver that accepts and never reads: the sender drops the connection once 64 KiB wait
/// unsent (never blocking), says so, and connects again.
@Suite struct TSLSenderTests {
    final class Board: Sendable {
        let value = Mutex(TallyBoard())
        func withLock<T>(_ body: (inout TallyBoard) -> T) -> T { value.withLock { body(&$0) } }
    }

    @Test func aReceiverThatNeverReadsIsDroppedAndConnectedAgain() throws {
        // A listener with a small receive buffer (accepted sockets inherit it) that accepts and never reads.
        let listener = try syscall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        defer { close(listener) }
        var size: Int32 = 4096
        setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = NginxRTMP.loopbackAddress(port: 0)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(listener, 4)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let port = UInt16(bigEndian: address.sin_port)

        // 500 cameras with long names: each full send is some 60 KB.
        let board = Board()
        board.withLock { $0 = TallyBoard(lamps: (1...500).map { TallyLamp(name: "camera \($0) " + String(repeating: "n", count: 100), kind: .camera, index: UInt16($0)) }) }
        let feed = TallyFeed { board.withLock { $0 } }
        let lines = Mutex<[String]>([])
        let sender = TSLSender(destination: TSLDestination(address: ListenAddress(host: "127.0.0.1", port: port), version: .v5, transport: .tcp),
                               number: 1, feed: feed, log: { line in lines.withLock { $0.append(line) } })
        sender.start()
        defer { sender.stop() }
        var accepted: [Int32] = []
        defer { for fd in accepted { close(fd) } }
        func acceptOne() -> Bool {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { return false }
            let fd = accept(listener, nil, nil)
            if fd >= 0 { accepted.append(fd) }
            return fd >= 0
        }
        #expect(waitUntil(seconds: 10) { acceptOne() })
        // Changes until the unsent data passes the limit: each makes a full send.
        var flip = false
        let started = MonotonicClock.now()
        #expect(waitUntil(seconds: 20, every: 0.05) {
            flip.toggle()
            board.withLock { $0.lamps[0].program = flip }
            feed.changed()
            return sender.counters.disconnects >= 1
        }, "\(sender.counters)")
        #expect(MonotonicClock.now() - started < 15_000_000_000)
        #expect(lines.withLock { $0 }.contains { $0.contains("it does not read") }, "\(lines.withLock { $0 })")
        // And it comes back.
        #expect(waitUntil(seconds: 10) { acceptOne() }, "connected again")
        #expect(waitUntil(seconds: 5) { sender.counters.connects >= 2 })
    }
}
