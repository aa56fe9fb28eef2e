import CSRT
import Foundation
import Testing
@testable import Capture
import StudioCore

/// `SRTConnection` on a socket accepted from a non-blocking listener, as `SRTListener`'s is (its accept
/// loop polls): an accepted socket inherits the listener's options, so without its own blocking mode a
/// read with nothing to read returned at once and every node camera's receive thread spun (a third of a
/// core each, measured by scripts/bench-nodes.sh). Real libsrt on loopback.
@Suite struct SRTConnectionTests {
    @Test func anIdleReadWaitsForItsReceiveTimeout() throws {
        srt_startup()
        defer { srt_cleanup() }
        let listener = srt_create_socket()
        defer { srt_close(listener) }
        var no: Int32 = 0
        srt_setsockflag(listener, SRTO_RCVSYN, &no, Int32(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = Int32(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_bind(listener, $0, length) } }
        try #require(bound != SRT_ERROR && srt_listen(listener, 1) != SRT_ERROR, "\(String(cString: srt_getlasterror_str()))")
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_getsockname(listener, $0, &length) } }
        // Watched before the caller comes, as SRTListener's accept loop does.
        let poll = srt_epoll_create()
        defer { srt_epoll_release(poll) }
        var events = Int32(SRT_EPOLL_IN.rawValue)
        srt_epoll_add_usock(poll, listener, &events)

        let caller = srt_create_socket()
        defer { srt_close(caller) }
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_connect(caller, $0, length) } }
        try #require(connected != SRT_ERROR, "\(String(cString: srt_getlasterror_str()))")
        var ready = [SRTSOCKET](repeating: SRT_INVALID_SOCK, count: 1)
        var count: Int32 = 1
        try #require(srt_epoll_wait(poll, &ready, &count, nil, nil, 5000, nil, nil, nil, nil) > 0, "nothing to accept within 5 s")
        let accepted = srt_accept(listener, nil, nil)
        try #require(accepted != SRT_INVALID_SOCK)

        let spec = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: 0), callers: [])
        let connection = SRTConnection(socket: accepted, gate: SRTListener.Gate(spec: spec))
        var buffer = [CChar](repeating: 0, count: 1500)
        let started = ContinuousClock.now
        let received = buffer.withUnsafeMutableBufferPointer { connection.receive(into: $0.baseAddress!, capacity: 1500) }
        let waited = ContinuousClock.now - started
        // The caller sent nothing: "none within the timeout" (0), after the 200 ms timeout, not at once.
        #expect(received == 0)
        #expect(waited >= .milliseconds(150), "an idle read returned after \(waited)")
    }
}
