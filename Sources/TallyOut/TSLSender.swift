#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import StudioCore
import StudioSystem

/// Sends the tally to one TSL UMD receiver on its own thread (`tally.tslN`): every camera's message on
/// each change and again every second; over TCP (TSL 5, DLE/STX framed) it connects, and connects again
/// after a failure or a close with a growing pause (0.5 s doubling to 8 s). Only the newest board is
/// ever sent (`TallyFeed`); a receiver that does not read has its connection dropped, never waited for.
public final class TSLSender: Sendable {
    public let destination: TSLDestination
    public let threadName: String
    private let feed: TallyFeed
    private let log: @Sendable (String) -> Void
    private let worker = WorkerThread()
    private let counts = Mutex(Counters())

    /// How often everything is sent again without a change.
    public static let resendSeconds = 1.0
    /// The pauses between TCP connection attempts.
    static let firstBackoff = 0.5, longestBackoff = 8.0
    /// How much unsent data a TCP receiver may hold up before its connection is dropped.
    static let pendingLimit = 64 * 1024

    public struct Counters: Sendable, Equatable {
        /// Messages handed to the socket.
        public var messages: Int64 = 0
        /// TCP connections made, and lost (closed by the receiver, failed, or dropped for not reading).
        public var connects: Int64 = 0
        public var disconnects: Int64 = 0
        public var connected = false
    }

    public var counters: Counters { counts.withLock { $0 } }

    public init(destination: TSLDestination, number: Int, feed: TallyFeed, log: @escaping @Sendable (String) -> Void) {
        self.destination = destination
        self.threadName = "tally.tsl\(number)"
        self.feed = feed
        self.log = log
    }

    public func start() {
        _ = worker.start(name: threadName) { [self] in run() }
    }

    public func stop() { worker.stop() }

    private var format: TSLDestinationFormat {
        destination.version == .v31 ? .v31(programTally: destination.programTally) : .v5(screen: destination.screen, framed: destination.transport == .tcp)
    }

    private func run() {
        var version: UInt64 = 0
        var lastSent: UInt64 = 0
        var udp: Int32 = -1
        var tcp = TCPLink(destination: destination, log: log)
        defer {
            if udp >= 0 { close(udp) }
            tcp.close()
        }
        while !worker.isStopRequested {
            // Short waits: a stop, a TCP reconnect or a closed receiver is seen within a quarter second.
            var (board, newest) = feed.wait(newerThan: version, seconds: 0.25)
            let now = MonotonicClock.now()
            let due = now >= lastSent + UInt64(Self.resendSeconds * 1e9)
            // Once a second the board is read again (a camera that came or went changes no tally).
            if due && newest == version {
                feed.refresh()
                (board, newest) = feed.latest
            }
            let changed = newest != version
            version = newest
            switch destination.transport {
            case .udp:
                guard changed || due else { continue }
                if udp < 0 { udp = (try? TallySockets.open(for: destination.address, type: SOCK_DGRAM)) ?? -1 }
                guard udp >= 0 else { continue }
                let messages = TSLPacket.messages(for: board, to: format)
                for message in messages { try? TallySockets.send(message, from: udp, to: destination.address) }
                counts.withLock { $0.messages += Int64(messages.count) }
                lastSent = now
            case .tcp:
                let wasConnected = tcp.isConnected
                tcp.service(now: now)
                if tcp.isConnected != wasConnected { note(connected: tcp.isConnected) }
                guard tcp.isConnected, changed || due || !wasConnected else { continue }
                let messages = TSLPacket.messages(for: board, to: format)
                tcp.send(messages.flatMap { $0 })
                if !tcp.isConnected { note(connected: false); continue }
                counts.withLock { $0.messages += Int64(messages.count) }
                lastSent = now
            }
        }
    }

    private func note(connected: Bool) {
        counts.withLock {
            $0.connected = connected
            if connected { $0.connects += 1 } else { $0.disconnects += 1 }
        }
    }
}

/// One TSL 5 TCP connection and its reconnection schedule (the sender's thread only).
struct TCPLink {
    let destination: TSLDestination
    let log: @Sendable (String) -> Void
    private var fd: Int32 = -1
    private var pending: ArraySlice<UInt8> = []
    private var nextAttempt: UInt64 = 0
    private var backoff = TSLSender.firstBackoff
    private var lastError: String?

    init(destination: TSLDestination, log: @escaping @Sendable (String) -> Void) {
        self.destination = destination
        self.log = log
    }

    var isConnected: Bool { fd >= 0 }

    /// Connects when due; notices a close (or discards what the receiver sent); writes what is pending.
    mutating func service(now: UInt64) {
        if fd < 0 {
            guard now >= nextAttempt else { return }
            do {
                fd = try TallySockets.connect(to: destination.address, seconds: 1)
                backoff = TSLSender.firstBackoff
                lastError = nil
                log("tally: connected to \(destination)")
            } catch {
                let reason = "\(error)"
                if reason != lastError { log("tally: cannot connect to \(destination): \(reason); trying again") }
                lastError = reason
                nextAttempt = MonotonicClock.now() + UInt64(backoff * 1e9)
                backoff = min(backoff * 2, TSLSender.longestBackoff)
            }
            return
        }
        guard TallySockets.read(from: fd) != nil else { return drop("closed by the receiver") }
        if !pending.isEmpty { send([]) }
    }

    /// Queues `bytes` after what is pending and writes what the socket takes now.
    mutating func send(_ bytes: [UInt8]) {
        guard fd >= 0 else { return }
        pending += bytes
        do { pending = try TallySockets.write(pending, to: fd) } catch { return drop("\(error)") }
        if pending.count > TSLSender.pendingLimit { drop("it does not read (\(pending.count) bytes unsent)") }
    }

    mutating func drop(_ reason: String) {
        log("tally: connection to \(destination) lost: \(reason); connecting again")
        close()
        nextAttempt = MonotonicClock.now() + UInt64(backoff * 1e9)
    }

    mutating func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        pending = []
    }
}
