import Synchronization
import StudioSystem

/// The clients of `GET /api/v1/events` (server-sent events): each `publish`ed line goes to every client's
/// own bounded queue, which its connection thread writes out as `data: LINE`. A client whose queue is
/// full (it does not read) is dropped, and counted, rather than buffered without bound, and its
/// connection ended at once (`connect(dropped:)`): `publish` never blocks and never waits for a client.
public final class HTTPEventStream: Sendable {
    /// Lines one client may have waiting before it is dropped.
    public let queueLimit: Int
    /// A comment line (`: keepalive`) goes out after this long without an event, so proxies and
    /// browsers keep the stream open and a vanished client is noticed.
    public let keepaliveSeconds: Double
    private let clients = Mutex<[ObjectIdentifier: Client]>([:])
    private let dropped = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    public init(queueLimit: Int = 256, keepaliveSeconds: Double = 15) {
        self.queueLimit = queueLimit
        self.keepaliveSeconds = keepaliveSeconds
    }

    /// Clients connected now.
    public var clientCount: Int { clients.withLock { $0.count } }
    /// Clients dropped for not reading their events.
    public var droppedClientCount: Int { dropped.load(ordering: .relaxed) }

    /// Sends `line` (one line of JSON) to every client. Any thread; never blocks. `line` is not made
    /// when no client listens.
    public func publish(_ line: @autoclosure () -> String) {
        let all = clients.withLock { Array($0.values) }
        guard !all.isEmpty else { return }
        let message = Array(("data: " + line() + "\n\n").utf8)
        for client in all where !client.push(message, limit: queueLimit) {
            remove(client)
            dropped.add(1, ordering: .relaxed)
            client.dropped()
        }
    }

    /// Ends every stream (the console is stopping): their threads return at once.
    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in all { client.end() }
    }

    /// A new client; nil when the console is stopping. `dropped` ends its connection when it is dropped
    /// for not reading (called on the publishing thread: it must not block).
    func connect(dropped: @escaping @Sendable () -> Void = {}) -> Client? {
        guard !closed.load(ordering: .sequentiallyConsistent) else { return nil }
        let client = Client(keepaliveSeconds: keepaliveSeconds, dropped: dropped)
        clients.withLock { $0[ObjectIdentifier(client)] = client }
        return client
    }

    func remove(_ client: Client) {
        client.end()
        _ = clients.withLock { $0.removeValue(forKey: ObjectIdentifier(client)) }
    }

    /// One stream: its queue, read by its connection's thread.
    final class Client: @unchecked Sendable {
        // Invariant: `queue`, `ended` are touched only under `lock`; `lastSent` only by the connection's
        // thread (MHD asks one response for its content from one thread at a time).
        private let lock = ConditionLock()
        private var queue: [[UInt8]] = [Array(": subscribed\n\n".utf8)]
        private var ended = false
        private var lastSent = MonotonicClock.now()
        private let keepaliveNanoseconds: UInt64
        let dropped: @Sendable () -> Void

        init(keepaliveSeconds: Double, dropped: @escaping @Sendable () -> Void) {
            keepaliveNanoseconds = UInt64(keepaliveSeconds * 1e9)
            self.dropped = dropped
        }

        /// Queues `message`; false when the queue is full or the stream over (the client is to go).
        func push(_ message: [UInt8], limit: Int) -> Bool {
            lock.withLock {
                guard !ended, queue.count < limit else { return false }
                queue.append(message)
                lock.signal()
                return true
            }
        }

        func end() {
            lock.withLock {
                ended = true
                queue.removeAll()
                lock.broadcast()
            }
        }

        /// The next message, waiting (on the connection's own thread) up to a second for one: an event,
        /// the keepalive when it is due, else `[]`; nil when the stream is over (`HTTPBodyStream.next`).
        func next() -> [UInt8]? {
            let now = MonotonicClock.now()
            let keepaliveDue = lastSent + keepaliveNanoseconds
            let deadline = min(keepaliveDue, now + 1_000_000_000)
            let next: [UInt8]? = lock.withLock {
                while queue.isEmpty && !ended {
                    if !lock.wait(untilMonotonic: deadline) { break }
                }
                if ended { return nil }
                if queue.isEmpty { return MonotonicClock.now() >= keepaliveDue ? Array(": keepalive\n\n".utf8) : [] }
                return queue.removeFirst()
            }
            if let next, !next.isEmpty { lastSent = MonotonicClock.now() }
            return next
        }
    }
}
