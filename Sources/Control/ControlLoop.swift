import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// One client connection, owned by the control loop.
final class Connection {
    let id: UInt64
    let fd: Int32
    var framer: LineFramer
    /// Unsent output starts at `outputStart`.
    var output: [UInt8] = []
    var outputStart = 0
    var isSubscribed = false
    /// The client shut down its sending side: read no more, but finish the replies it waits for.
    var isReadClosed = false
    /// Requests handed to the handler whose reply has not come yet.
    var pendingReplies = 0
    var shouldClose = false
    /// When the client last sent a request or got its last reply (CLOCK_MONOTONIC ns).
    var lastActivity: UInt64

    init(id: UInt64, fd: Int32, messageLimit: Int, now: UInt64) {
        self.id = id
        self.fd = fd
        self.framer = LineFramer(limit: messageLimit)
        self.lastActivity = now
    }

    /// Closable for idleness: not a subscriber, owed no reply, nothing left to send.
    var isIdle: Bool { !isSubscribed && pendingReplies == 0 && pendingOutput == 0 && !shouldClose }

    var pendingOutput: Int { output.count - outputStart }

    /// Done once nothing more can be read, nothing is owed, and nothing is left to send.
    var isFinished: Bool { isReadClosed && pendingReplies == 0 && pendingOutput == 0 && !isSubscribed }
}

/// When the control loop polls its listener. An `accept` that fails for lack of resources (EMFILE,
/// ENFILE: no descriptor left; ENOBUFS, ENOMEM) leaves the connection pending in the backlog, so the
/// listener stays readable and polling it again at once would spin at 100% CPU. After such an error (or
/// any unexpected one) the listener is left out of poll for `pauseNanoseconds`: pending clients wait in
/// the backlog meanwhile, connected clients are served as usual.
struct AcceptBackoff {
    static let pauseNanoseconds: UInt64 = 100_000_000
    /// CLOCK_MONOTONIC ns when the listener is polled again; nil while it is polled.
    private(set) var resumeAt: UInt64?

    enum Next: Equatable {
        /// Nothing more is pending (EAGAIN): wait for the next readiness.
        case waitForReadiness
        /// That connection failed and is gone (ECONNABORTED, EPROTO, EPERM...): accept the next one.
        case acceptNext
        /// Out of resources (or an unexpected error): the listener is paused.
        case paused
    }

    /// Records a failed accept at `now` and says what the loop does next.
    mutating func acceptFailed(errno: Int32, now: UInt64) -> Next {
        switch errno {
        case EAGAIN, EWOULDBLOCK:
            return .waitForReadiness
        case ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH:
            return .acceptNext
        default:
            resumeAt = now + Self.pauseNanoseconds
            return .paused
        }
    }

    /// Whether to poll the listener at `now` (ends the pause once it is over).
    mutating func pollsListener(now: UInt64) -> Bool {
        guard let resumeAt else { return true }
        if now >= resumeAt {
            self.resumeAt = nil
            return true
        }
        return false
    }

    /// poll()'s timeout at `now` in ms: -1 (wait for events) unless paused, else until the pause ends.
    func pollTimeout(now: UInt64) -> Int32 {
        guard let resumeAt else { return -1 }
        guard resumeAt > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (resumeAt - now + 999_999) / 1_000_000))
    }
}

/// The poll() loop of the control thread.
///
/// `@unchecked Sendable`: created by `ControlServer.start()` and then used only by the control thread
/// (handed over once through `NamedThread.start`); the only state it shares is `ServerShared`.
final class ControlLoop: @unchecked Sendable {
    private let socketPath: String
    private let socketIdentity: (device: UInt64, inode: UInt64)
    private let listener: Int32
    private let wakeRead: Int32
    private let handler: any ControlHandler
    private let limits: ControlServer.Limits
    private let shared: ServerShared

    private var connections: [UInt64: Connection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var acceptBackoff = AcceptBackoff()

    init(socketPath: String, socketIdentity: (device: UInt64, inode: UInt64), listener: Int32, wakeRead: Int32,
         handler: any ControlHandler, limits: ControlServer.Limits, shared: ServerShared) {
        self.socketPath = socketPath
        self.socketIdentity = socketIdentity
        self.listener = listener
        self.wakeRead = wakeRead
        self.handler = handler
        self.limits = limits
        self.shared = shared
    }

    func run() {
        shared.registerControlThread()
        var descriptors: [pollfd] = []
        var order: [Connection] = []
        while !shared.isStopRequested {
            descriptors.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            let now = MonotonicClock.now()
            // A negative fd is ignored by poll (its revents stay 0): the listener's slot stays at index 1.
            let listening = acceptBackoff.pollsListener(now: now)
            descriptors.append(pollfd(fd: listening ? listener : -1, events: Int16(POLLIN), revents: 0))
            for connection in connections.values {
                var events: Int32 = 0
                if !connection.isReadClosed { events |= Int32(POLLIN) }
                if connection.pendingOutput > 0 { events |= Int32(POLLOUT) }
                descriptors.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
                order.append(connection)
            }
            do {
                // -1 (no deadline) as UInt32 is the largest value: min picks the nearer deadline.
                let timeout = min(UInt32(bitPattern: acceptBackoff.pollTimeout(now: now)), UInt32(bitPattern: idleTimeout(now: now)))
                try syscall("poll") { poll(&descriptors, nfds_t(descriptors.count), Int32(bitPattern: timeout)) }
            } catch {
                // Only EINVAL/ENOMEM are possible here; back off instead of spinning.
                MonotonicClock.sleep(seconds: 0.01)
                continue
            }
            if descriptors[0].revents != 0 { drainWakePipe() }
            if shared.isStopRequested { break }

            for (index, connection) in order.enumerated() {
                let revents = Int32(descriptors[index + 2].revents)
                if revents == 0 || connection.shouldClose { continue }
                if revents & Int32(POLLIN) != 0 { readAvailable(from: connection) }
                if revents & Int32(POLLOUT) != 0 { flush(connection) }
                if revents & (Int32(POLLHUP) | Int32(POLLERR) | Int32(POLLNVAL)) != 0 && revents & Int32(POLLIN) == 0 {
                    // The peer is gone (with nothing left to read).
                    connection.shouldClose = true
                }
            }
            if descriptors[1].revents != 0 { acceptClients() }
            deliverOutbox()
            closeIdleConnections(now: MonotonicClock.now())
            for connection in connections.values where connection.pendingOutput > 0 && !connection.shouldClose {
                flush(connection)
            }
            closeFinishedConnections()
        }
        shutdown()
    }

    // MARK: Reading

    private func readAvailable(from connection: Connection) {
        let count: Int
        do {
            guard let read = try UnixSocket.readSome(connection.fd, into: &readBuffer) else { return }
            count = read
        } catch {
            connection.shouldClose = true
            return
        }
        if count == 0 {
            // End of stream. A message cut off mid-way is discarded: it was never complete.
            connection.isReadClosed = true
            return
        }
        let pieces = readBuffer.withUnsafeBytes { connection.framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        for piece in pieces {
            if connection.shouldClose { return }
            switch piece {
            case .tooLarge:
                let error = ControlError(.tooLarge, "the message exceeds \(limits.maxMessageBytes) bytes; discarded up to the next newline")
                queueLine(ControlReply.line(id: .null, outcome: .failure(error)), to: connection)
            case .line(let line):
                connection.lastActivity = MonotonicClock.now()
                dispatch(line, from: connection)
            }
        }
    }

    private func dispatch(_ line: [UInt8], from connection: Connection) {
        let (id, parsed) = ControlRequest.parse(line)
        let request: ControlRequest
        switch parsed {
        case .failure(let error):
            queueLine(ControlReply.line(id: id, outcome: .failure(error)), to: connection)
            return
        case .success(let value):
            request = value
        }
        switch request.command {
        case ControlServer.subscribe.name:
            queueLine(ControlReply.line(id: id, outcome: .success(["subscribed": true])), to: connection)
            connection.isSubscribed = true
        case ControlServer.unsubscribe.name:
            connection.isSubscribed = false
            queueLine(ControlReply.line(id: id, outcome: .success(["subscribed": false])), to: connection)
        default:
            connection.pendingReplies += 1
            let slot = ReplySlot(shared: shared, connection: connection.id, requestID: id, command: request.command)
            handler.handle(request) { reply in slot.deliver(reply) }
        }
    }

    // MARK: Writing

    private func queueLine(_ line: String, to connection: Connection) {
        append(Array((line + "\n").utf8), to: connection)
    }

    /// Queues bytes for a client. A client whose unsent output would pass the limit is dropped (one
    /// message larger than the limit is still accepted into an empty buffer).
    private func append(_ bytes: [UInt8], to connection: Connection) {
        guard !connection.shouldClose else { return }
        if connection.pendingOutput > 0 && connection.pendingOutput + bytes.count > limits.maxWriteBufferBytes {
            connection.shouldClose = true
            shared.countDroppedClient()
            return
        }
        if connection.outputStart > 0 && connection.outputStart * 2 >= connection.output.count {
            connection.output.removeFirst(connection.outputStart)
            connection.outputStart = 0
        }
        connection.output.append(contentsOf: bytes)
    }

    private func flush(_ connection: Connection) {
        while connection.pendingOutput > 0 {
            let written: Int
            do {
                written = try UnixSocket.sendSome(connection.fd, connection.output, from: connection.outputStart)
            } catch {
                // EPIPE / ECONNRESET: the client went away.
                connection.shouldClose = true
                return
            }
            if written == 0 { return }
            connection.outputStart += written
        }
        connection.output.removeAll(keepingCapacity: connection.output.count <= 64 * 1024)
        connection.outputStart = 0
    }

    private func deliverOutbox() {
        for item in shared.takeOutbox() {
            switch item {
            case .reply(let id, let line):
                if let connection = connections[id] {
                    connection.pendingReplies -= 1
                    connection.lastActivity = MonotonicClock.now()
                    append(line, to: connection)
                }
            case .event(let line):
                broadcast(line)
            }
        }
    }

    private func broadcast(_ line: [UInt8]) {
        for connection in connections.values where connection.isSubscribed {
            append(line, to: connection)
        }
    }

    // MARK: Connections

    private func acceptClients() {
        while true {
            let fd: Int32
            do {
                fd = try syscall("accept") { accept(listener, nil, nil) }
            } catch {
                // EAGAIN: no more pending. EMFILE, ENFILE...: the connection stays pending, so stop polling
                // the listener for a moment rather than spin. ECONNABORTED...: that one is gone, go on.
                if acceptBackoff.acceptFailed(errno: error.errno, now: MonotonicClock.now()) == .acceptNext { continue }
                return
            }
            do {
                try UnixSocket.setNonBlocking(fd)
                try UnixSocket.setCloseOnExec(fd)
            } catch {
                UnixSocket.close(fd)
                continue
            }
            if connections.count >= limits.maxClients, let idlest = connections.values.filter(\.isIdle).min(by: { $0.lastActivity < $1.lastActivity }) {
                // Make room: the operator must always get in, whoever holds the connections.
                closeIdle(idlest, reason: "closed to make room for a new client (the server has \(limits.maxClients) control clients); reconnect")
                closeFinishedConnections()
            }
            if connections.count >= limits.maxClients {
                sayWhy(ControlError(.busy, "the server already has \(limits.maxClients) control clients, none of them idle"), to: fd)
                UnixSocket.close(fd)
                continue
            }
            let connection = Connection(id: nextConnectionID, fd: fd, messageLimit: limits.maxMessageBytes, now: MonotonicClock.now())
            nextConnectionID += 1
            connections[connection.id] = connection
        }
    }

    private var idleNanoseconds: UInt64 { UInt64(max(0, limits.idleTimeoutSeconds) * 1e9) }

    /// poll()'s timeout at `now` in ms until the next idle client is due, -1 with none.
    private func idleTimeout(now: UInt64) -> Int32 {
        guard let oldest = connections.values.filter(\.isIdle).map(\.lastActivity).min() else { return -1 }
        let due = oldest + idleNanoseconds
        guard due > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (due - now + 999_999) / 1_000_000))
    }

    private func closeIdleConnections(now: UInt64) {
        for connection in connections.values where connection.isIdle && now >= connection.lastActivity + idleNanoseconds {
            closeIdle(connection, reason: "closed after \(seconds(limits.idleTimeoutSeconds)) s without a request; reconnect")
        }
    }

    /// "60" rather than "60.0"; "0.3" as is.
    private func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// Tells the client why it is closed and marks it so.
    private func closeIdle(_ connection: Connection, reason: String) {
        sayWhy(ControlError(.idle, reason), to: connection.fd)
        connection.shouldClose = true
    }

    /// Sends `error` with `"id": null` to a client about to be closed, best effort: a fresh or idle
    /// socket has room for one line, and nothing else is queued for it.
    private func sayWhy(_ error: ControlError, to fd: Int32) {
        let line = Array((ControlReply.line(id: .null, outcome: .failure(error)) + "\n").utf8)
        _ = line.withUnsafeBytes { try? UnixSocket.sendSome(fd, $0) }
    }

    private func closeFinishedConnections() {
        let finished = connections.values.filter { $0.shouldClose || $0.isFinished }
        for connection in finished {
            UnixSocket.close(connection.fd)
            connections[connection.id] = nil
        }
        shared.setClientCount(connections.count)
    }

    private func drainWakePipe() {
        var scratch = [UInt8](repeating: 0, count: 256)
        while true {
            guard let count = try? UnixSocket.readSome(wakeRead, into: &scratch), count == scratch.count else { return }
        }
    }

    private func shutdown() {
        for connection in connections.values { UnixSocket.close(connection.fd) }
        connections.removeAll()
        UnixSocket.close(listener)
        ControlServer.unlinkIfOurs(socketPath, identity: socketIdentity)
        shared.finish()
        UnixSocket.close(wakeRead)
    }
}
