import StudioSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What other threads hand to the control loop.
enum Outgoing {
    /// A handler's reply for a request on `connection`.
    case reply(connection: UInt64, line: [UInt8])
    /// A line for every subscribed client.
    case event([UInt8])
}

/// State shared between the public `ControlServer`, reply closures and the control loop.
///
/// `@unchecked Sendable`: every mutable field is guarded by `lock`. The wake pipe's write end is
/// written and closed only while holding `lock`, so no thread writes to a descriptor after the loop
/// closed it (and possibly the number was reused).
final class ServerShared: @unchecked Sendable {
    private enum Phase { case idle, running, stopping, stopped }

    private let lock = ConditionLock()
    private let limits: ControlServer.Limits
    private var phase = Phase.idle
    private var outbox: [Outgoing] = []
    private var queuedEvents = 0
    private var wakeWrite: Int32 = -1
    private var clients = 0
    private var droppedEvents = 0
    private var droppedClients = 0
    private var loopThread: pthread_t?

    init(limits: ControlServer.Limits) { self.limits = limits }

    func claimStart() throws(ControlServerError) {
        let claimed = lock.withLock { () -> Bool in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
        if !claimed { throw .alreadyStarted }
    }

    func setWakeDescriptor(_ fd: Int32) { lock.withLock { wakeWrite = fd } }

    /// Called by the loop when it starts, so `stop()` from a handler does not join its own thread.
    func registerControlThread() { lock.withLock { loopThread = pthread_self() } }

    var isControlThread: Bool {
        lock.withLock { loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// A start that failed leaves the server as new, so it can be started again once the cause is fixed.
    func resetAfterFailedStart() { lock.withLock { if phase == .running { phase = .idle } } }

    var isRunning: Bool { lock.withLock { phase == .running } }
    var isStopRequested: Bool { lock.withLock { phase == .stopping || phase == .stopped } }
    var clientCount: Int { lock.withLock { clients } }
    var droppedEventCount: Int { lock.withLock { droppedEvents } }
    var droppedClientCount: Int { lock.withLock { droppedClients } }

    func setClientCount(_ count: Int) { lock.withLock { clients = count } }
    func countDroppedClient() { lock.withLock { droppedClients += 1 } }

    func requestStop() {
        lock.withLock {
            if phase == .running { phase = .stopping }
            if phase == .idle { phase = .stopped }
            wakeLocked()
        }
    }

    /// Queues `item` for the loop and wakes it. Events beyond the limit are dropped; replies never are
    /// (each answers a request the loop already accepted, so their number is bounded by the clients).
    func enqueue(_ item: Outgoing) {
        lock.withLock {
            guard phase == .running else { return }
            if case .event = item {
                guard queuedEvents < limits.maxQueuedEvents else {
                    droppedEvents += 1
                    return
                }
                queuedEvents += 1
            }
            outbox.append(item)
            wakeLocked()
        }
    }

    /// Takes everything queued (control thread).
    func takeOutbox() -> [Outgoing] {
        lock.withLock {
            queuedEvents = 0
            defer { outbox.removeAll(keepingCapacity: true) }
            return outbox
        }
    }

    /// Called by the loop as it exits: no more wake-ups, and the write end is closed under the lock.
    func finish() {
        lock.withLock {
            phase = .stopped
            outbox.removeAll()
            clients = 0
            UnixSocket.close(wakeWrite)
            wakeWrite = -1
        }
    }

    private func wakeLocked() {
        guard wakeWrite >= 0 else { return }
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) already guarantees a wake-up.
        _ = try? syscall("write") { write(wakeWrite, &byte, 1) }
    }
}

/// Delivers exactly one reply for one request; if released unanswered, replies `internal` so the
/// client is not left waiting.
///
/// `@unchecked Sendable`: `answered` is guarded by a Mutex; the other fields are immutable.
final class ReplySlot: @unchecked Sendable {
    private let shared: ServerShared
    private let connection: UInt64
    private let requestID: RequestID
    private let command: String
    private let answered = Mutex(false)

    init(shared: ServerShared, connection: UInt64, requestID: RequestID, command: String) {
        self.shared = shared
        self.connection = connection
        self.requestID = requestID
        self.command = command
    }

    func deliver(_ reply: ControlReply) {
        let first = answered.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        let line = Array((ControlReply.line(id: requestID, outcome: reply.outcome) + "\n").utf8)
        shared.enqueue(.reply(connection: connection, line: line))
    }

    deinit {
        if !answered.withLock({ $0 }) {
            let error = ControlError(.internal, "the handler for \"\(command)\" finished without replying")
            let line = Array((ControlReply.line(id: requestID, outcome: .failure(error)) + "\n").utf8)
            shared.enqueue(.reply(connection: connection, line: line))
        }
    }
}
