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
}
