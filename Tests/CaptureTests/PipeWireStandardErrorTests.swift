import Foundation
import Testing
@testable import Capture
import CSystem
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// pw_init makes stderr line-buffered with glibc's one-byte buffer, which splits every later stdio
/// line into two write(2) calls (its first byte, then the rest). `swift test` drops a chunk that is not
/// whole UTF-8, so swift-testing's closing lines (they start with a 3-byte symbol) vanished after any
/// PipeWire test. After PipeWire's initialisation, a line written through stdio must still leave in one
/// write(2).
@Suite struct PipeWireStandardErrorTests {
    @Test func aStdioLineIsOneWriteAfterPipeWireIsInitialised() throws {
        PipeWireLibrary.initialize()

        // A sequenced-packet socket pair keeps message boundaries: each write(2) is one packet, and each
        // read returns one.
        var ends: [Int32] = [0, 0]
        _ = try syscall("socketpair") { socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) }
        defer { close(ends[0]) }
        let marker = "\u{2714} one line through stdio \(UUID().uuidString)\n"

        // Other tests may write to stderr meanwhile: their lines land in the pipe too, and are skipped below.
        let saved = try syscall("dup") { dup(2) }
        defer { close(saved) }
        guard let stream = csys_standard_error_stream() else {
            Issue.record("no stderr stream")
            return
        }
        fflush(stream)
        _ = try syscall("dup2") { dup2(ends[1], 2) }
        fputs(marker, stream)
        fflush(stream)
        _ = try syscall("dup2") { dup2(saved, 2) }
        close(ends[1])

        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(ends[0], &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count <= 0 { break }
            packets.append(Array(buffer[0..<count]))
        }
        let line = Array(marker.utf8)
        #expect(packets.contains(line), "the line left in \(packets.count) writes of \(packets.map(\.count)) bytes")
    }
}
