import Synchronization
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// The console's account of its connections, so that no client can keep the operator out.
///
/// MHD's own idle timeout restarts with every byte, so a client that trickles one header line every few
/// seconds (slowloris) would hold its connection, and its thread, for ever. Here every connection is
/// either *waiting* for a request (just accepted, or kept alive after an answer) or *answering* one
/// (the handler is working, the answer is being sent, or it is a stream). A waiting connection must
/// deliver its whole request (headers and body) within `requestSeconds` of starting to wait, however
/// it trickles, or it is cut. When the console is full, or an address is at its own limit, a new
/// connection takes the place of the connection that has waited longest (from that address first), so
/// a request that arrives whole (the operator's) always gets in while others only wait. Long-lived
/// streams (events, tiles) may hold at most half of the slots, overall and per address, so they cannot
/// take every slot either.
///
/// Cutting is `shutdown(2)` on the connection's socket: its MHD thread wakes from its poll, finds the
/// socket ended and closes the connection at once. The socket is shut down under `state`'s lock and
/// only while its connection is listed; MHD announces the close (and the connection leaves the list)
/// before it closes the descriptor, so a descriptor number reused by another socket is never touched.
public final class HTTPConnections: Sendable {
    public struct Limits: Sendable {
        /// Connections at once (each has its MHD thread).
        public var total: Int
        /// Connections at once from one address.
        public var perAddress: Int
        /// A waiting connection's whole request must arrive within this long.
        public var requestSeconds: Double

        public init(total: Int, perAddress: Int, requestSeconds: Double) {
            self.total = total
            self.perAddress = perAddress
            self.requestSeconds = requestSeconds
        }

        /// Streams may hold at most this many slots overall, and `perAddress / 2` from one address.
        var streams: Int { max(1, total / 2) }
        var streamsPerAddress: Int { max(1, perAddress / 2) }
    }

    /// Why the console ended a connection itself.
    public enum Cut: String, Sendable, CaseIterable {
        /// Its request did not arrive whole in time.
        case requestDeadline = "request_deadline"
        /// It was waiting for a request when a new connection needed its slot.
        case evicted
        /// An event-stream client that did not read its events.
        case streamDropped = "stream_dropped"
    }

    /// Why a connection was not accepted.
    public enum Refusal: String, Sendable, CaseIterable {
        /// Its address had `perAddress` connections, none of them waiting.
        case addressLimit = "address_limit"
        /// The console had `total` connections, none of them waiting.
        case full
    }

    /// A snapshot for `/metrics`.
    public struct Counts: Sendable, Equatable {
        public var waiting = 0
        public var answering = 0
        public var streams = 0
        public var refused: [Refusal: Int] = [:]
        public var cut: [Cut: Int] = [:]
        public var open: Int { waiting + answering + streams }
    }

    /// One connection. `@unchecked Sendable`: `fd` and `address` never change; every `var` is read and
    /// written under the owning `HTTPConnections`' lock only.
    public final class Connection: @unchecked Sendable {
        let fd: Int32
        let address: String
        /// When it began waiting for a request; nil while answering.
        var waitingSince: UInt64?
        var isStream = false
        /// Shut down by the console; it no longer counts and is not cut twice.
        var isCut = false

        init(fd: Int32, address: String, now: UInt64) {
            self.fd = fd
            self.address = address
            waitingSince = now
        }
    }

    private struct State {
        var open: [ObjectIdentifier: Connection] = [:]
        var refused: [Refusal: Int] = [:]
        var cut: [Cut: Int] = [:]
    }

    public let limits: Limits
    private let clock: any Clock
    private let state = Mutex(State())

    public init(limits: Limits, clock: any Clock = MonotonicClock()) {
        self.limits = limits
        self.clock = clock
    }

    /// Whether a new connection from `address` may come in, making room when it must (MHD's accept
    /// policy, on its listening thread).
    public func admit(_ address: String) -> Bool {
        state.withLock { state in
            let live = state.open.values.filter { !$0.isCut }
            let fromAddress = live.filter { $0.address == address }
            if fromAddress.count >= limits.perAddress {
                return Self.evictLongestWaiting(fromAddress, &state) || Self.refuse(.addressLimit, &state)
            }
            if live.count >= limits.total {
                return Self.evictLongestWaiting(live, &state) || Self.refuse(.full, &state)
            }
            return true
        }
    }

    /// A connection MHD took (its listening thread), waiting for its first request.
    func opened(fd: Int32, address: String) -> Connection {
        let connection = Connection(fd: fd, address: address, now: clock.now())
        state.withLock { $0.open[ObjectIdentifier(connection)] = connection }
        return connection
    }

    /// MHD closed it (before it closes the socket).
    func closed(_ connection: Connection) {
        _ = state.withLock { $0.open.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Its request arrived whole: no deadline while it is answered.
    func answering(_ connection: Connection) {
        state.withLock { _ in connection.waitingSince = nil }
    }

    /// Its answer is sent; kept alive, it waits for the next request (the deadline starts again).
    func waiting(_ connection: Connection) {
        let now = clock.now()
        state.withLock { _ in
            connection.waitingSince = now
            connection.isStream = false
        }
    }

    /// It is to answer with a stream; false when streams hold their share of the slots already.
    func beginStream(_ connection: Connection) -> Bool {
        state.withLock { state in
            if connection.isStream { return true }
            let streams = state.open.values.filter { $0.isStream && !$0.isCut }
            guard streams.count < limits.streams,
                  streams.count(where: { $0.address == connection.address }) < limits.streamsPerAddress else { return false }
            connection.isStream = true
            return true
        }
    }

    /// Ends `connection` now (any thread), counted under `reason`.
    func cut(_ connection: Connection, _ reason: Cut) {
        state.withLock { state in
            guard state.open[ObjectIdentifier(connection)] != nil else { return }
            Self.cut(connection, reason, &state)
        }
    }

    /// Cuts every waiting connection whose request is overdue; returns how many.
    @discardableResult
    func expire() -> Int {
        let now = clock.now()
        let limit = UInt64(max(0, limits.requestSeconds) * 1e9)
        return state.withLock { state in
            let overdue = state.open.values.filter { connection in
                guard !connection.isCut, let since = connection.waitingSince else { return false }
                return now >= since && now - since >= limit
            }
            for connection in overdue { Self.cut(connection, .requestDeadline, &state) }
            return overdue.count
        }
    }

    public var counts: Counts {
        state.withLock { state in
            var counts = Counts(refused: state.refused, cut: state.cut)
            for connection in state.open.values where !connection.isCut {
                if connection.isStream { counts.streams += 1 } else if connection.waitingSince != nil { counts.waiting += 1 } else { counts.answering += 1 }
            }
            return counts
        }
    }

    private static func evictLongestWaiting(_ candidates: [Connection], _ state: inout State) -> Bool {
        let waiting = candidates.filter { $0.waitingSince != nil }
        guard let longest = waiting.min(by: { $0.waitingSince! < $1.waitingSince! }) else { return false }
        cut(longest, .evicted, &state)
        return true
    }

    private static func refuse(_ reason: Refusal, _ state: inout State) -> Bool {
        state.refused[reason, default: 0] += 1
        return false
    }

    private static func cut(_ connection: Connection, _ reason: Cut, _ state: inout State) {
        guard !connection.isCut else { return }
        connection.isCut = true
        state.cut[reason, default: 0] += 1
        if connection.fd >= 0 { _ = shutdown(connection.fd, Int32(SHUT_RDWR)) }
    }
}

/// The thread that cuts connections whose request is overdue (`HTTPConnections.expire`), a few times a
/// second: `http.deadline`.
final class HTTPDeadlineWatch: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let wake = ConditionLock()
    private let thread = Mutex<NamedThread?>(nil)

    /// How often overdue requests are looked for: a deadline is kept to within this.
    static let periodNanoseconds: UInt64 = 250_000_000

    func start(_ connections: HTTPConnections) {
        let thread = NamedThread.start(name: "http.deadline") { [self] in
            while !stopped.load(ordering: .acquiring) {
                connections.expire()
                let until = MonotonicClock.now() + Self.periodNanoseconds
                wake.withLock {
                    while !stopped.load(ordering: .acquiring), wake.wait(untilMonotonic: until) {}
                }
            }
        }
        self.thread.withLock { $0 = thread }
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        wake.withLock { wake.broadcast() }
        let thread = self.thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        thread?.join()
    }
}
