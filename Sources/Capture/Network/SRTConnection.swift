import CFFmpeg
import CSRT
import Foundation
import Synchronization
import StudioCore

/// One caller's connection, accepted by the SRT listener and handed to its camera, read as MPEG-TS by
/// libavformat through a custom AVIOContext (`makeInput`): its read callback runs on the camera's
/// receive thread and blocks in `srt_recvmsg` at most 200 ms at a time, so a stop, a hang-up or the
/// read deadline (`PullInterrupt`) is seen within that. Closed once, by `close` or `deinit`.
final class SRTConnection: Sendable {
    let socket: SRTSOCKET
    private let gate: SRTListener.Gate
    /// A node camera's: when it last received (the listener lets a new call take a silent one's place).
    private let heard: SRTListener.LastHeard?
    private let closed = Atomic<Bool>(false)

    init(socket: SRTSOCKET, gate: SRTListener.Gate, heard: SRTListener.LastHeard? = nil) {
        self.socket = socket
        self.gate = gate
        self.heard = heard
        gate.connected.add(1, ordering: .relaxed)
        // Blocking reads: an accepted socket inherits the listener's options, and the listener is
        // non-blocking (its accept loop polls), which made every read return at once: a busy loop
        // (libsrt throws and catches an exception per empty read) taking a core's third per camera.
        var blocking: Int32 = 1
        srt_setsockflag(socket, SRTO_RCVSYN, &blocking, Int32(MemoryLayout<Int32>.size))
        var timeout: Int32 = 200
        srt_setsockflag(socket, SRTO_RCVTIMEO, &timeout, Int32(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        srt_close(socket)
        gate.connected.subtract(1, ordering: .relaxed)
    }

    /// libsrt's figures of the connection.
    var statistics: NetworkSourceStatus.SRTStatistics? {
        var perf = SRT_TRACEBSTATS()
        guard srt_bstats(socket, &perf, 0) != SRT_ERROR else { return nil }
        return .init(rttMilliseconds: perf.msRTT, packetsLost: Int(perf.pktRcvLossTotal), packetsRetransmitted: Int(perf.pktRcvRetrans),
                     packetsDropped: Int(perf.pktRcvDropTotal), receiveRateMbps: perf.mbpsRecvRate)
    }

    /// Reads one message (an SRT live packet: up to 1316 bytes of MPEG-TS) into `buffer`; 0 when none
    /// came within the receive timeout, nil when the connection is over.
    func receive(into buffer: UnsafeMutablePointer<CChar>, capacity: Int32) -> Int32? {
        let received = srt_recvmsg(socket, buffer, capacity)
        if received > 0 {
            heard?.note()
            return received
        }
        // A blocking read's timeout is SRT_ETIMEOUT (SRT_EASYNCRCV: a non-blocking one's "nothing yet").
        if received == SRT_ERROR, [SRT_ETIMEOUT.rawValue, SRT_EASYNCRCV.rawValue].contains(srt_getlasterror(nil)) { return 0 }
        return nil
    }
}

/// The reader libavformat calls back (on the receive thread): SRT messages staged whole (libsrt hands
/// out a live message only into a buffer that holds it), then copied out as asked.
final class SRTInputReader {
    let connection: SRTConnection
    let interrupt: PullInterrupt
    private var staging = [CChar](repeating: 0, count: 1500)
    private var start = 0, end = 0

    init(connection: SRTConnection, interrupt: PullInterrupt) {
        self.connection = connection
        self.interrupt = interrupt
    }

    func read(_ buffer: UnsafeMutablePointer<UInt8>, _ size: Int32) -> Int32 {
        while start == end {
            if interrupt.isInterrupted { return cff_averror_exit() }
            let received = staging.withUnsafeMutableBufferPointer { connection.receive(into: $0.baseAddress!, capacity: Int32($0.count)) }
            guard let received else { return cff_averror_eof() }
            start = 0
            end = Int(received)
        }
        let count = min(Int(size), end - start)
        staging.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress! + start, byteCount: count) }
        start += count
        return Int32(count)
    }
}
