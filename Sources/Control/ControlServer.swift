import StudioSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why the control server could not start.
public enum ControlServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another server answers on the socket path.
    case alreadyRunning(path: String)
    /// Something that is not a socket sits at the path; it is left alone.
    case notASocket(path: String)
    /// The path does not fit a Unix socket address.
    case invalidPath(path: String, reason: String)
    /// The socket's directory is owned by another user (not root, not us), who could replace the socket.
    case unsafeDirectory(path: String, owner: UInt32)
    /// With a socket group, the socket's directory (not this user's to change) keeps the group out.
    case groupCannotReach(path: String, directory: String, group: UInt32)
    /// A system call failed.
    case system(path: String, SystemError)
    /// `start()` was called twice, or after `stop()`.
    case alreadyStarted

    public var description: String {
        switch self {
        case .alreadyRunning(let path):
            return "another studio server is already listening on \(path); stop it first or use another --socket path"
        case .notASocket(let path):
            return "\(path) exists and is not a socket; not replacing it (remove it or use another --socket path)"
        case .invalidPath(let path, let reason):
            return "cannot use \(path) as the control socket: \(reason)"
        case .unsafeDirectory(let path, let owner):
            return "the directory of the control socket \(path) belongs to \(SocketOwnership.userName(owner)), not to this user (\(SocketOwnership.userName(geteuid()))) or root; "
                + "another user may have created it to pose as the studio server: refusing to use it (remove it, or use another --socket path)"
        case .groupCannotReach(let path, let directory, let group):
            let name = SocketOwnership.groupName(group)
            let bare = name.split(separator: " ").first.map(String.init) ?? "\(group)"
            return "members of the socket group \(name) cannot reach the control socket \(path): its directory \(directory) is not open to that group "
                + "and does not belong to this user; run `chgrp \(bare) \(directory) && chmod g+x \(directory)` (as its owner or root), or use another --socket path"
        case .system(let path, let error):
            return "control socket \(path): \(error)"
        case .alreadyStarted:
            return "the control server was already started"
        }
    }
}

/// The operator's control plane: newline-delimited JSON over a Unix stream socket (see
/// docs/control-protocol.md).
///
/// One dedicated thread ("studio.control") runs a poll() loop over the listening socket, a wake-up
/// pipe and every client. Client sockets are non-blocking, each with its own read buffer (framed by
/// `LineFramer`) and write buffer, so a slow client never stalls the loop; one whose unsent output
/// exceeds `Limits.maxWriteBufferBytes` is disconnected. Handlers run on the control thread; their
/// replies, and `broadcast` events, may come from any thread: they are queued and the loop is woken
/// through the pipe.
///
/// The server itself answers two commands: `subscribe` (this connection receives broadcast events)
/// and `unsubscribe`. Everything else goes to the handler.
public final class ControlServer: Sendable {
    public struct Limits: Sendable {
        /// Longest request line, without its newline.
        public var maxMessageBytes: Int = 64 * 1024
        /// Unsent output a client may accumulate before it is disconnected.
        public var maxWriteBufferBytes: Int = 4 * 1024 * 1024
        /// Clients connected at once. A client arriving when all are taken closes the one idle the
        /// longest (not subscribed, owed nothing), so the operator always gets in; with none idle, it
        /// is told `busy` and closed.
        public var maxClients: Int = 64
        /// A client that sends no request for this long, is not subscribed and is owed no reply is
        /// told `idle` and closed.
        public var idleTimeoutSeconds: Double = 60
        /// Broadcast events waiting for the loop; beyond this, new events are dropped (and counted).
        public var maxQueuedEvents: Int = 4096
        public init() {}
    }

    public let socketPath: String
    public let handler: any ControlHandler
    public let limits: Limits
    /// When set, members of this group may use the socket too (mode 0660, this group), so operators
    /// can drive a server that runs as a service user; nil keeps it owner-only (0600).
    public let group: UInt32?

    private let shared: ServerShared
    private let thread = Mutex<NamedThread?>(nil)

    public init(socketPath: String, handler: any ControlHandler, limits: Limits = Limits(), group: UInt32? = nil) {
        self.socketPath = socketPath
        self.handler = handler
        self.limits = limits
        self.group = group
        self.shared = ServerShared(limits: limits)
    }

    /// A server whose handler is one closure.
    public convenience init(socketPath: String, limits: Limits = Limits(),
                            handle: @escaping @Sendable (ControlRequest, @escaping @Sendable (ControlReply) -> Void) -> Void) {
        self.init(socketPath: socketPath, handler: ClosureControlHandler(handle), limits: limits)
    }

    deinit { stop() }

    /// Binds the socket and starts the control thread. Creates the socket's directory (mode 0700, or
    /// 0750 and `group` when given) if missing, refuses to start when another server answers on the
    /// path, replaces a stale socket file, and leaves the new socket with mode 0600 (owner only), or
    /// 0660 owned by `group`.
    public func start() throws(ControlServerError) {
        try shared.claimStart()
        let listener: Int32
        let wake: (read: Int32, write: Int32)
        let identity: (device: UInt64, inode: UInt64)
        do {
            (listener, identity) = try Self.bindListener(at: socketPath, group: group)
        } catch {
            shared.resetAfterFailedStart()
            throw error
        }
        do {
            wake = try Self.makeWakePipe()
        } catch {
            UnixSocket.close(listener)
            Self.unlinkIfOurs(socketPath, identity: identity)
            shared.resetAfterFailedStart()
            throw .system(path: socketPath, error)
        }
        shared.setWakeDescriptor(wake.write)
        let loop = ControlLoop(socketPath: socketPath, socketIdentity: identity, listener: listener,
                               wakeRead: wake.read, handler: handler, limits: limits, shared: shared)
        let started = NamedThread.start(name: "studio.control") { loop.run() }
        thread.withLock { $0 = started }
    }

    /// Closes every connection and the listening socket, removes the socket file and joins the
    /// control thread. Replies that arrive afterwards are dropped. Safe to call more than once.
    /// Called from a handler (on the control thread itself), it only requests the stop: the loop
    /// finishes after the handler returns.
    public func stop() {
        shared.requestStop()
        if shared.isControlThread { return }
        let running = thread.withLock { value -> NamedThread? in
            defer { value = nil }
            return value
        }
        running?.join()
    }

    /// True between a successful `start()` and `stop()`.
    public var isRunning: Bool { shared.isRunning }

    /// Clients connected right now.
    public var clientCount: Int { shared.clientCount }

    /// Broadcast events dropped because the loop's queue was full, and clients disconnected because
    /// they did not read their output.
    public var droppedEventCount: Int { shared.droppedEventCount }
    public var droppedClientCount: Int { shared.droppedClientCount }

    /// Sends `{"event": event}` to every subscribed client. Callable from any thread; never blocks
    /// (the event is queued for the control thread).
    public func broadcast(_ event: JSONValue) {
        shared.enqueue(.event(Array((ControlReply.eventLine(event) + "\n").utf8)))
    }

    /// Broadcasts a studio event in the shape of `EventView`.
    public func broadcast(_ event: StudioEvent) {
        // An event holds strings, integers and a date: encoding it cannot fail.
        broadcast((try? JSONValue(encoding: EventView(event))) ?? .null)
    }

    /// The commands the server answers itself, whatever its handler.
    public static let subscribe = ControlCommandInfo(
        name: "subscribe", summary: "this connection receives the server's events from now on ({\"subscribed\": true})")
    public static let unsubscribe = ControlCommandInfo(
        name: "unsubscribe", summary: "this connection stops receiving events ({\"subscribed\": false})")
    public static var builtInCommands: [ControlCommandInfo] { [subscribe, unsubscribe] }

    // MARK: Setup

    private static func bindListener(at path: String, group: UInt32?) throws(ControlServerError) -> (Int32, (device: UInt64, inode: UInt64)) {
        guard path.hasPrefix("/") else { throw .invalidPath(path: path, reason: "the path must be absolute") }
        guard let address = UnixSocket.address(for: path) else {
            throw .invalidPath(path: path, reason: "a socket path can have at most \(UnixSocket.maxPathLength) bytes")
        }
        try prepareDirectory(for: path, group: group)
        try removeStaleSocket(at: path, address: address)

        let fd: Int32
        do {
            fd = try UnixSocket.makeStreamSocket()
        } catch {
            throw .system(path: path, error)
        }
        do {
            // The umask makes bind create the file as 0600 from the start, so no other user can
            // connect in the moment before the chmod below (which makes it certain). The umask is
            // process-wide: a file another thread creates in this instant also gets owner-only bits.
            let previous = umask(0o177)
            defer { umask(previous) }
            try UnixSocket.bind(fd, to: address)
        } catch {
            UnixSocket.close(fd)
            throw .system(path: path, error)
        }
        do throws(SystemError) {
            try syscall("chmod") { chmod(path, 0o600) }
            if let group {
                // Owner-only until the group is set, then opened to the group.
                try syscall("chown") { chown(path, uid_t(bitPattern: -1), gid_t(group)) }
                try syscall("chmod") { chmod(path, 0o660) }
            }
            try syscall("listen") { listen(fd, 16) }
            try UnixSocket.setNonBlocking(fd)
            guard let identity = try UnixSocket.fileIdentity(path) else { throw SystemError(call: "lstat", errno: ENOENT) }
            return (fd, (identity.device, identity.inode))
        } catch {
            UnixSocket.close(fd)
            _ = try? syscall("unlink") { unlink(path) }
            throw .system(path: path, error)
        }
    }

    /// Creates missing directories above the socket with mode 0700 and checks that the socket's own
    /// directory belongs to us or to root. With a `group`, the directories it creates get that group
    /// and mode 0750 (members may reach the socket); of existing directories, only the socket's own
    /// one changes, and only when it is ours and private (see `openDirectory`).
    private static func prepareDirectory(for path: String, group: UInt32?) throws(ControlServerError) {
        let above = path.split(separator: "/").dropLast()
        let parent = above.isEmpty ? "/" : "/" + above.joined(separator: "/")
        let created: [String]
        do { created = try makeDirectories(parent, mode: 0o700) } catch {
            throw .system(path: path, error)
        }
        if let group {
            for directory in created {
                do throws(SystemError) {
                    try syscall("chown") { chown(directory, uid_t(bitPattern: -1), gid_t(group)) }
                    try syscall("chmod") { chmod(directory, 0o750) }
                } catch {
                    throw .system(path: path, SystemError(call: "\(error.call) \(directory)", errno: error.errno))
                }
            }
        }
        var info = stat()
        do {
            try syscall("stat") { stat(parent, &info) }
        } catch {
            throw .system(path: path, SystemError(call: "stat \(parent)", errno: error.errno))
        }
        guard UnixSocket.isDirectory(info.st_mode) else {
            throw .invalidPath(path: path, reason: "\(parent) is not a directory")
        }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw .unsafeDirectory(path: path, owner: info.st_uid)
        }
        if let group { try openDirectory(parent, info, to: group, socketPath: path) }
    }

    /// With a socket group, the socket's directory must let the group's members through. A private
    /// directory of ours (mode 0700: what an earlier start without the group, or one that failed,
    /// left) is opened to the group (0750, that group); any other that keeps the group out is an
    /// error that says what to run.
    private static func openDirectory(_ directory: String, _ info: stat, to group: UInt32, socketPath path: String) throws(ControlServerError) {
        let mode = UInt32(info.st_mode) & 0o7777
        let reachable = (info.st_gid == group && mode & 0o010 != 0) || mode & 0o001 != 0
        if reachable { return }
        guard info.st_uid == geteuid(), mode & 0o077 == 0 else {
            throw .groupCannotReach(path: path, directory: directory, group: group)
        }
        do throws(SystemError) {
            try syscall("chown") { chown(directory, uid_t(bitPattern: -1), gid_t(group)) }
            try syscall("chmod") { chmod(directory, 0o750) }
        } catch {
            throw .system(path: path, SystemError(call: "\(error.call) \(directory)", errno: error.errno))
        }
    }

    /// Refuses when a live server answers on `path`; removes a socket file nobody listens on.
    private static func removeStaleSocket(at path: String, address: sockaddr_un) throws(ControlServerError) {
        let existing: (mode: mode_t, device: UInt64, inode: UInt64)?
        do {
            existing = try UnixSocket.fileIdentity(path)
        } catch {
            throw .system(path: path, error)
        }
        guard let existing else { return }
        guard UnixSocket.isSocket(existing.mode) else { throw .notASocket(path: path) }

        let probe: Int32
        do {
            probe = try UnixSocket.makeStreamSocket()
        } catch {
            throw .system(path: path, error)
        }
        defer { UnixSocket.close(probe) }
        do {
            try UnixSocket.connect(probe, to: address)
        } catch where error.errno == ECONNREFUSED || error.errno == ENOENT {
            // Stale: the server that made it is gone.
            do {
                try syscall("unlink") { unlink(path) }
            } catch where error.errno == ENOENT {
                // Removed meanwhile.
            } catch {
                throw .system(path: path, error)
            }
            return
        } catch where error.errno == EAGAIN {
            // The listener's backlog is full: it is alive.
            throw .alreadyRunning(path: path)
        } catch {
            throw .system(path: path, error)
        }
        throw .alreadyRunning(path: path)
    }

    private static func makeWakePipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        try syscall("pipe") { pipe(&descriptors) }
        do {
            for fd in descriptors {
                try UnixSocket.setNonBlocking(fd)
                try UnixSocket.setCloseOnExec(fd)
            }
        } catch {
            descriptors.forEach(UnixSocket.close)
            throw error
        }
        return (descriptors[0], descriptors[1])
    }

    static func unlinkIfOurs(_ path: String, identity: (device: UInt64, inode: UInt64)) {
        // Another server may have replaced the file since (after a failed liveness check on its side):
        // only remove the socket this server created.
        guard let current = try? UnixSocket.fileIdentity(path),
              current.device == identity.device, current.inode == identity.inode else { return }
        _ = try? syscall("unlink") { unlink(path) }
    }
}

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
