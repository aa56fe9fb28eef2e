#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import StudioCore
import StudioSystem

/// OSC in and out over UDP (`osc:`, docs/control-surfaces.md), on its own thread (`osc`, poll(2)):
/// each datagram decoded (`OSCPacket`, strict), its messages handed to `dispatch` (the CLI's commands,
/// through the router; the server maps the addresses) and answered to the sender once done
/// (`/studio/reply`, `/studio/error`). `/studio/subscribe` and `/studio/unsubscribe` it answers itself:
/// subscribers (at most `OSCSettings.maximumSubscribers`, each until `subscriptionSeconds` after its last
/// subscribe) and the config's `feedback` addresses are sent the tally on every change of the board and
/// the audio levels `levelsPerSecond`. Sends never wait: a datagram the kernel will not take now is
/// dropped and counted. Anything refused (malformed, unknown address, wrong arguments, a failed command)
/// is counted by reason and logged at most once per 5 seconds.
public final class OSCServer: Sendable {
    /// Why a message or packet was refused: the `reason` label of `studio_osc_refused_total`.
    public enum Refusal: String, Sendable, CaseIterable {
        case malformed, unknownAddress = "unknown_address", invalidArgument = "invalid_argument", failed, subscriptionsFull = "subscriptions_full"
    }

    /// What a dispatched message came to: the reply for its sender, and why it failed, if it did.
    public struct Answer: Sendable {
        public var reply: OSCMessage
        public var failure: (refusal: Refusal, reason: String)?
        public init(reply: OSCMessage, failure: (refusal: Refusal, reason: String)? = nil) {
            self.reply = reply
            self.failure = failure
        }
    }

    /// Runs `message`, answering (once, from any thread) when done; or refuses it at once (nothing runs).
    public typealias Dispatch = @Sendable (_ message: OSCMessage, _ answer: @escaping @Sendable (Answer) -> Void) -> (refusal: Refusal, reason: String)?
    /// The audio levels now, in dBFS (each input's and the master's loudest channel), by name.
    public typealias Levels = @Sendable () -> [(name: String, dbfs: Double)]

    public static let threadName = "osc"
    public static let subscribe = "/studio/subscribe", unsubscribe = "/studio/unsubscribe"

    public struct Counters: Sendable, Equatable {
        public var packets: Int64 = 0
        public var messages: Int64 = 0
        public var refused: [Refusal: Int64] = [:]
        public var feedbackSent: Int64 = 0
        /// Feedback and replies the kernel would not take at once (or that failed): dropped, never waited for.
        public var sendsDropped: Int64 = 0
        public var subscribers = 0
    }

    public let settings: OSCSettings
    private let listen: ListenAddress
    private let feed: TallyFeed
    private let dispatch: Dispatch
    private let levels: Levels
    private let log: @Sendable (String) -> Void
    private let thread = SocketThread()
    private let state = Mutex(Shared())

    struct Shared {
        var counters = Counters()
        var port: UInt16 = 0
        /// Answers of dispatched messages, for the thread to send and count.
        var outbox: [(to: ListenAddress, answer: Answer)] = []
    }

    public var counters: Counters { state.withLock { $0.counters } }
    /// The port it listens on (the kernel's choice when `listen` says 0).
    public var port: UInt16 { state.withLock { $0.port } }

    /// Nil when `settings` has no `listen` (OSC off).
    public init?(settings: OSCSettings, feed: TallyFeed, dispatch: @escaping Dispatch, levels: @escaping Levels, log: @escaping @Sendable (String) -> Void) {
        guard let listen = settings.listen else { return nil }
        self.settings = settings
        self.listen = listen
        self.feed = feed
        self.dispatch = dispatch
        self.levels = levels
        self.log = log
    }

    /// Binds (throws when the address cannot be had) and starts the thread.
    public func start() throws(SystemError) {
        feed.onChange { [weak self] in self?.wake() }
        let port = try thread.start(listen, type: SOCK_DGRAM, threadName: Self.threadName) { [self] in run(fd: $0, wakeFD: $1) }
        state.withLock { $0.port = port }
    }

    public func stop() { thread.stop() }

    private func wake() { thread.wake() }

    // MARK: The thread

    /// What only the thread touches.
    private struct Local {
        let fd: Int32
        var subscribers: [ListenAddress: UInt64] = [:]
        var refusals = ThrottledCounter()
        var latestRefusal = ""
        var nextLevels: UInt64 = 0
        var nextTally: UInt64 = 0
    }

    private func run(fd: Int32, wakeFD: Int32) {
        var local = Local(fd: fd)
        var version = feed.latest.version
        let levelsInterval = UInt64(1_000_000_000 / OSCSettings.levelsPerSecond)
        while !thread.isStopRequested {
            let listening = !settings.feedback.isEmpty || !local.subscribers.isEmpty
            var polled = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let now = MonotonicClock.now()
            let timeout = listening ? Int32(max(0, min(1000, (Int64(local.nextLevels) - Int64(now)) / 1_000_000))) : 1000
            if poll(&polled, 2, timeout) == 0, !listening { feed.refresh() }
            if polled[1].revents != 0 { while let bytes = TallySockets.read(from: wakeFD), !bytes.isEmpty {} }

            // At most 256 datagrams a round, so feedback and answers keep flowing under a flood.
            for _ in 0..<256 {
                guard let (bytes, sender) = TallySockets.receiveDatagram(from: fd) else { break }
                guard let sender else { continue }  // an error (an ICMP for an earlier send), not a datagram
                receive(bytes, from: sender, local: &local)
            }
            let answers = state.withLock { s in defer { s.outbox.removeAll() }; return s.outbox }
            for item in answers {
                if let failure = item.answer.failure { refuse(failure.refusal, failure.reason, from: item.to, local: &local) }
                send([item.answer.reply], to: [item.to], local: local)
            }

            // A new board (or none sent yet, or the periodic resend for peers that came back): to everyone.
            let (board, newest) = feed.latest
            let clock = MonotonicClock.now()
            if newest != version || clock >= local.nextTally {
                version = newest
                local.nextTally = clock + UInt64(OSCSettings.tallyResendSeconds * 1_000_000_000)
                send(Self.tallyMessages(board), to: destinations(local), local: local, feedback: true)
            }
            if listening, clock >= local.nextLevels {
                local.nextLevels = clock + levelsInterval
                send(levels().map { OSCMessage("/studio/levels/\($0.name)", [.float32(Float($0.dbfs))]) }, to: destinations(local), local: local, feedback: true)
            }
            local.subscribers = local.subscribers.filter { $0.value > clock }
            if let report = local.refusals.due(at: clock) { logRefusals(report, local: local) }
            state.withLock { $0.counters.subscribers = local.subscribers.count }
        }
    }

    private func destinations(_ local: Local) -> [ListenAddress] { settings.feedback + local.subscribers.keys.sorted { $0.description < $1.description } }

    private func receive(_ bytes: [UInt8], from sender: ListenAddress, local: inout Local) {
        state.withLock { $0.counters.packets += 1 }
        let packet: OSCPacket
        do { packet = try OSCPacket.decode(bytes) } catch {
            return refuse(.malformed, "a malformed packet (\(bytes.count) bytes): \(error.reason)", from: sender, local: &local)
        }
        for message in packet.messages {
            state.withLock { $0.counters.messages += 1 }
            switch message.address {
            case Self.subscribe: subscribe(message, from: sender, local: &local)
            case Self.unsubscribe:
                local.subscribers[Self.replyAddress(message, sender) ?? sender] = nil
                send([OSCMessage("/studio/unsubscribed")], to: [sender], local: local)
            default:
                let refusal = dispatch(message) { [weak self] answer in
                    guard let self else { return }
                    state.withLock { $0.outbox.append((sender, answer)) }
                    wake()
                }
                if let refusal {
                    refuse(refusal.refusal, "\(message): \(refusal.reason)", from: sender, local: &local)
                    send([Self.error(message.address, refusal.refusal.rawValue, refusal.reason)], to: [sender], local: local)
                }
            }
        }
    }

    /// `/studio/subscribe` (the sender's address) or `/studio/subscribe i:PORT` (the sender's host, that
    /// port, as any number: where TouchOSC listens is not where it sends from): subscribed or renewed,
    /// then sent the tally.
    private func subscribe(_ message: OSCMessage, from sender: ListenAddress, local: inout Local) {
        guard let peer = Self.replyAddress(message, sender) else {
            let reason = "takes nothing or a port (a number), got \(message)"
            refuse(.invalidArgument, "\(Self.subscribe) \(reason)", from: sender, local: &local)
            return send([Self.error(message.address, Refusal.invalidArgument.rawValue, reason)], to: [sender], local: local)
        }
        let now = MonotonicClock.now()
        guard local.subscribers[peer] != nil || local.subscribers.count < OSCSettings.maximumSubscribers else {
            let reason = "already \(OSCSettings.maximumSubscribers) subscribers"
            refuse(.subscriptionsFull, "\(peer) cannot subscribe: \(reason)", from: sender, local: &local)
            return send([Self.error(message.address, Refusal.subscriptionsFull.rawValue, reason)], to: [sender], local: local)
        }
        local.subscribers[peer] = now + UInt64(OSCSettings.subscriptionSeconds * 1_000_000_000)
        state.withLock { $0.counters.subscribers = local.subscribers.count }
        send([OSCMessage("/studio/subscribed", [.int32(Int32(OSCSettings.subscriptionSeconds))])] + Self.tallyMessages(feed.latest.board),
             to: [peer], local: local, feedback: true)
    }

    private static func replyAddress(_ message: OSCMessage, _ sender: ListenAddress) -> ListenAddress? {
        if message.arguments.isEmpty { return sender }
        guard message.arguments.count == 1 else { return nil }
        // Any number that is a port (TouchOSC's scripts send their numbers as floats).
        let number: Double? = switch message.arguments[0] {
        case .int32(let value): Double(value)
        case .int64(let value): Double(value)
        case .float32(let value): Double(value)
        case .float64(let value): value
        default: nil
        }
        guard let number, number.rounded() == number, (1...65535).contains(number) else { return nil }
        return ListenAddress(host: sender.host, port: UInt16(number))
    }

    /// The board as feedback: who is on program and preview, and each source's state (0 off, 1 program,
    /// 2 preview; program when both), vMix's numbers.
    public static func tallyMessages(_ board: TallyBoard) -> [OSCMessage] {
        [OSCMessage("/studio/tally/program", [.string(board.program ?? "")]), OSCMessage("/studio/tally/preview", [.string(board.preview ?? "")])]
            + board.lamps.map { OSCMessage("/studio/tally/\($0.name)", [.int32($0.program ? 1 : $0.preview ? 2 : 0)]) }
    }

    /// `/studio/error s:ADDRESS s:CODE s:MESSAGE`, to the sender of what failed.
    public static func error(_ address: String, _ code: String, _ message: String) -> OSCMessage {
        OSCMessage("/studio/error", [.string(address), .string(code), .string(message)])
    }

    private func send(_ messages: [OSCMessage], to peers: [ListenAddress], local: Local, feedback: Bool = false) {
        guard !messages.isEmpty, !peers.isEmpty else { return }
        let packets = messages.map { OSCPacket.message($0).encoded }
        var sent: Int64 = 0, dropped: Int64 = 0
        for peer in peers {
            for packet in packets {
                // A peer of the other family than the socket's cannot be reached from it: dropped too.
                do { try TallySockets.send(packet, from: local.fd, to: peer); sent += 1 } catch { dropped += 1 }
            }
        }
        state.withLock { s in
            if feedback { s.counters.feedbackSent += sent }
            s.counters.sendsDropped += dropped
        }
    }

    private func refuse(_ refusal: Refusal, _ reason: String, from sender: ListenAddress, local: inout Local) {
        state.withLock { $0.counters.refused[refusal, default: 0] += 1 }
        local.latestRefusal = "from \(sender): \(reason)"
        if let report = local.refusals.note(at: MonotonicClock.now()) { logRefusals(report, local: local) }
    }

    private func logRefusals(_ report: ThrottledCounter.Report, local: Local) {
        let count = report.count == 1 ? "refused" : "refused \(report.count) messages or packets (\(report.total) in all), the latest"
        log("osc: \(count) \(local.latestRefusal)")
    }
}
