#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import StudioCore
import StudioSystem

/// The vMix-compatible tally server (`tally.vmix_port`): many TCP clients on one thread (`tally.vmix`,
/// poll(2)), each answered line by line (`VMixProtocol`), the subscribed ones sent `TALLY OK ...` on
/// every change of the board. A client that does not read (more than `outputLimit` unsent), sends a line
/// longer than `lineLimit` or comes past `maximumClients` is dropped and counted; nothing waits for one.
/// Functions go to `perform` (the CLI's commands) and are answered when it replies.
public final class VMixServer: Sendable {
    public typealias Perform = @Sendable (VMixProtocol.Action, @escaping @Sendable (_ error: String?) -> Void) -> Void

    public let listen: ListenAddress
    public let functionsAllowed: Bool
    public static let threadName = "tally.vmix"
    static let maximumClients = 256
    static let lineLimit = 4096
    static let outputLimit = 256 * 1024

    private let feed: TallyFeed
    private let perform: Perform
    private let log: @Sendable (String) -> Void
    private let thread = SocketThread()
    private let state = Mutex(Shared())
    /// The listening socket and the wake-up pair (read end, write end); set by `start`.

    public struct Counters: Sendable, Equatable {
        public var clients = 0
        public var accepted: Int64 = 0
        /// Clients dropped for not reading, for too long a line, or for coming past the limit.
        public var dropped: Int64 = 0
        /// Lines answered with `ER`.
        public var refusedLines: Int64 = 0
    }

    struct Shared {
        var counters = Counters()
        var port: UInt16 = 0
        /// Replies to functions, by client, written by the server's thread.
        var outbox: [(client: Int, line: String)] = []
    }

    public var counters: Counters { state.withLock { $0.counters } }
    /// The port it listens on (the kernel's choice when `listen` says 0).
    public var port: UInt16 { state.withLock { $0.port } }

    public init(listen: ListenAddress, functions: Bool, feed: TallyFeed, perform: @escaping Perform, log: @escaping @Sendable (String) -> Void) {
        self.listen = listen
        self.functionsAllowed = functions
        self.feed = feed
        self.perform = perform
        self.log = log
    }

    /// Listens (throws when the address cannot be had) and starts the thread.
    public func start() throws(SystemError) {
        feed.onChange { [weak self] in self?.wake() }
        let port = try thread.start(listen, type: SOCK_STREAM, threadName: Self.threadName,
                                    prepare: { fd throws(SystemError) in try syscall("listen") { Glibc.listen(fd, 64) } }) { [self] in run(listenFD: $0, wakeFD: $1) }
        state.withLock { $0.port = port }
    }

    public func stop() { thread.stop() }

    private func wake() { thread.wake() }

    // MARK: The thread

    private func run(listenFD: Int32, wakeFD: Int32) {
        var clients = VMixClients()
        var version = feed.latest.version
        defer { clients.closeAll() }
        while !thread.isStopRequested {
            var polled = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let ids = clients.ids
            for id in ids { polled.append(pollfd(fd: clients[id].fd, events: Int16(POLLIN) | (clients[id].output.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)) }
            let ready = poll(&polled, nfds_t(polled.count), 1000)
            if ready == 0 { feed.refresh() }
            if polled[1].revents != 0 { while let bytes = TallySockets.read(from: wakeFD), !bytes.isEmpty {} }

            // A new board: to every subscriber.
            let (board, newest) = feed.latest
            if newest != version {
                version = newest
                let line = VMixProtocol.tallyLine(board)
                for id in clients.ids where clients[id].subscribed { clients.queue(line, to: id) }
            }
            // Replies of functions done since.
            for reply in state.withLock({ s in defer { s.outbox.removeAll() }; return s.outbox }) { clients.queue(reply.line, to: reply.client) }

            for (offset, id) in ids.enumerated() where clients.contains(id) {
                let events = polled[offset + 2].revents
                if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { receive(from: id, in: &clients, board: board) }
            }
            if polled[0].revents & Int16(POLLIN) != 0 { accept(listenFD, into: &clients, board: board) }
            clients.flush()
            state.withLock { s in
                s.counters.clients = clients.count
                s.counters.dropped += clients.takeDropped()
            }
        }
    }

    private func accept(_ listenFD: Int32, into clients: inout VMixClients, board: TallyBoard) {
        while true {
            // The listener is non-blocking (nothing waiting: EAGAIN); a client's socket is used with MSG_DONTWAIT only.
            let fd = Glibc.accept(listenFD, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard clients.count < Self.maximumClients else {
                close(fd)
                state.withLock { $0.counters.dropped += 1 }
                log("tally: vMix client refused: already \(Self.maximumClients) clients")
                continue
            }
            clients.add(fd)
            state.withLock { $0.counters.accepted += 1 }
        }
    }

    private func receive(from id: Int, in clients: inout VMixClients, board: TallyBoard) {
        guard let bytes = TallySockets.read(from: clients[id].fd) else { return clients.remove(id) }
        clients[id].input += bytes
        while let end = clients[id].input.firstIndex(of: 0x0A) {
            var line = Array(clients[id].input[..<end])
            clients[id].input.removeSubrange(...end)
            if line.last == 0x0D { line.removeLast() }
            answer(String(decoding: line, as: UTF8.self), from: id, in: &clients, board: board)
            guard clients.contains(id) else { return }
        }
        if clients[id].input.count > Self.lineLimit {
            clients.queue("ER line longer than \(Self.lineLimit) bytes", to: id)
            clients.flush()
            clients.drop(id)
        }
    }

    private func answer(_ line: String, from id: Int, in clients: inout VMixClients, board: TallyBoard) {
        switch VMixProtocol.parse(line) {
        case .tally: clients.queue(VMixProtocol.tallyLine(board), to: id)
        case .subscribeTally:
            clients[id].subscribed = true
            clients.queue("SUBSCRIBE OK TALLY", to: id)
            clients.queue(VMixProtocol.tallyLine(board), to: id)
        case .unsubscribeTally:
            clients[id].subscribed = false
            clients.queue("UNSUBSCRIBE OK TALLY", to: id)
        case .xml: clients.queue(bytes: VMixProtocol.xmlReply(board), to: id)
        case .function(let name, let query):
            guard functionsAllowed else {
                return refuse("FUNCTION ER functions are off here (tally.vmix_functions: true turns them on)", to: id, in: &clients)
            }
            switch VMixProtocol.action(name, query: query, board: board) {
            case .failure(let refusal): refuse("FUNCTION ER \(refusal.message)", to: id, in: &clients)
            case .success(let action):
                let reply = "FUNCTION OK \(VMixProtocol.printable(name))"
                perform(action) { [weak self] error in
                    guard let self else { return }
                    let line = error.map { "FUNCTION ER " + $0.replacingNewlines } ?? reply
                    state.withLock { $0.outbox.append((id, line)) }
                    wake()
                }
            }
        case .refused(let reply): refuse(reply, to: id, in: &clients)
        }
    }

    private func refuse(_ line: String, to id: Int, in clients: inout VMixClients) {
        state.withLock { $0.counters.refusedLines += 1 }
        clients.queue(line, to: id)
    }
}

private extension String {
    var replacingNewlines: String { String(map { $0.isNewline ? " " : $0 }) }
}
