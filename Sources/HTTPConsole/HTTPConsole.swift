import Foundation
import Synchronization
import CMicroHTTPD
import StudioCore
import StudioSystem

/// How the console listens and what it accepts.
public struct HTTPConsoleSettings: Sendable {
    public var listen: ListenAddress
    /// Required on every request when set (see `HTTPAccessPolicy`).
    public var token: String?
    /// HTTPS with this certificate and key; nil: plain HTTP.
    public var tls: HTTPTLSCredentials?
    /// A larger request body is answered 413 (and not read).
    public var maxBodyBytes = 64 * 1024
    /// Connections (each its own thread, streams included) at once, and from one address; when full, a
    /// new connection takes the place of one that waits for its request (see `HTTPConnections`).
    public var maxConnections = 512
    public var maxConnectionsPerAddress = 64
    /// A connection's request (headers and body) must arrive whole within this long of its accept, or of
    /// its previous answer on a kept-alive connection, however slowly it trickles in.
    public var requestDeadlineSeconds = 10.0
    /// A connection that neither sends nor takes data for this long is closed.
    public var idleTimeoutSeconds: UInt32 = 30
    /// How long a connection waits for a command's answer (a cut answers once its frame is out).
    public var replyTimeoutSeconds = 10.0
    /// Each client address's request budget (see `HTTPRequestBudget`).
    public var burst = 200
    public var ratePerSecond = 100.0

    public init(listen: ListenAddress, token: String?, tls: HTTPTLSCredentials? = nil) {
        self.listen = listen
        self.token = token
        self.tls = tls
    }

    /// `http` or `https`.
    public var scheme: String { tls == nil ? "http" : "https" }
}

/// A certificate (chain) and its private key, PEM, with the names of the files they came from (for
/// the operator, when the library refuses them).
public struct HTTPTLSCredentials: Sendable {
    public var certificatePEM: [UInt8]
    public var keyPEM: [UInt8]
    public var certificateName: String
    public var keyName: String

    public init(certificatePEM: [UInt8], keyPEM: [UInt8], certificateName: String, keyName: String) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
        self.certificateName = certificateName
        self.keyName = keyName
    }
}

public struct HTTPConsoleError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// The TLS certificate or key is the problem (not the address).
    public var concernsTLS = false
}

/// The operator's HTTP API on libmicrohttpd: MHD's listening thread and one thread per connection
/// (bounded by `maxConnections`, accounted by `HTTPConnections`, whose `http.deadline` thread cuts
/// requests that do not arrive in time), never the Swift cooperative pool nor a media thread. Each
/// request is checked (request budget 429, token 401, Host/Origin 403, route 404/405, body size 413),
/// then handed to `handler`, whose answer its connection thread waits for; `GET /api/v1/events` streams
/// `events`. `HEAD` is answered on every `GET` route: the GET's status and headers, no body.
public final class HTTPConsole: Sendable {
    /// The console's own route: the server-sent event stream.
    public static let eventsRoute = HTTPRoute(.get, "/api/v1/events", name: "events")
    /// The request headers handed to a route (`HTTPCall.headers`): `Range`, for a recording's download.
    public static let passedHeaders = ["Range"]

    public let settings: HTTPConsoleSettings
    public let events: HTTPEventStream
    let core: Core
    private let daemon = DaemonHandle()
    private let deadlines = HTTPDeadlineWatch()

    public init(settings: HTTPConsoleSettings, routes: [HTTPRoute], events: HTTPEventStream, clock: any Clock = MonotonicClock(),
                handler: @escaping HTTPHandler) {
        self.settings = settings
        self.events = events
        core = Core(settings: settings, table: HTTPRouteTable(routes + [Self.eventsRoute]), events: events,
                    budget: HTTPRequestBudget(burst: settings.burst, ratePerSecond: settings.ratePerSecond, clock: clock),
                    connections: HTTPConnections(limits: .init(total: settings.maxConnections, perAddress: settings.maxConnectionsPerAddress,
                                                               requestSeconds: settings.requestDeadlineSeconds), clock: clock),
                    handler: handler)
    }

    /// The port bound (the kernel's choice when `listen` asked for 0); 0 before `start`.
    public var port: UInt16 { daemon.port }

    /// Whether this libmicrohttpd speaks TLS (Debian's is built with GnuTLS) and IPv6.
    public static var supportsTLS: Bool { cmhd_supports_tls() != 0 }
    public static var supportsIPv6: Bool { cmhd_supports_ipv6() != 0 }

    /// Binds and starts MHD's threads. Throws when the address cannot be bound (in use, not this
    /// machine's) or the TLS certificate and key are refused, with what the library said.
    public func start() throws {
        let listen = settings.listen
        guard var (storage, _) = listen.socketAddress else {
            throw HTTPConsoleError(description: "\(listen.host) is not an IPv4 or IPv6 address")
        }
        var family: Int32 = 0
        if let bytes = ListenAddress.ipv6Bytes(listen.host) {
            guard Self.supportsIPv6 else { throw HTTPConsoleError(description: "this libmicrohttpd has no IPv6 support: listen on an IPv4 address") }
            // `::` is every interface: IPv4 too (dual stack); any other IPv6 address is that address only.
            family = bytes.allSatisfy { $0 == 0 } ? 2 : 1
        }
        if settings.tls != nil, !Self.supportsTLS {
            throw HTTPConsoleError(description: Self.noTLS, concernsTLS: true)
        }
        // The PEM texts as C strings (NUL-terminated); MHD reads them during the start only (GnuTLS
        // copies them into its credentials).
        let certificate = settings.tls.map { $0.certificatePEM.map { CChar(bitPattern: $0) } + [0] }
        let key = settings.tls.map { $0.keyPEM.map { CChar(bitPattern: $0) } + [0] }
        let log = UnsafeMutablePointer<cmhd_start_log>.allocate(capacity: 1)
        log.initialize(to: cmhd_start_log())
        let context = Unmanaged.passRetained(core)
        let started = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                cmhd_start(address, family, Self.threadLimit(settings), settings.idleTimeoutSeconds, certificate, key, log,
                           acceptPolicy, connectionNotice, accessHandler, context.toOpaque(), completedHandler)
            }
        }
        guard let started else {
            let said = Self.text(of: log)
            log.deallocate()
            context.release()
            throw Self.startFailure(listen: listen, tls: settings.tls, said: said)
        }
        daemon.set(started, context: context, log: log)
        deadlines.start(core.connections)
    }

    /// MHD's own limit, above the console's: a connection the console cut keeps its thread for the
    /// moment it takes to notice, while the connection that took its place already has one.
    static func threadLimit(_ settings: HTTPConsoleSettings) -> UInt32 {
        UInt32(clamping: settings.maxConnections + max(8, settings.maxConnections / 4))
    }

    /// What MHD wrote while starting, one line per message.
    private static func text(of log: UnsafeMutablePointer<cmhd_start_log>) -> String {
        let text = withUnsafeBytes(of: &log.pointee.text) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// Why the start failed, in the operator's words: the TLS files when the library refused them (a
    /// key that is not the certificate's, a file it cannot parse), else the address.
    static func startFailure(listen: ListenAddress, tls: HTTPTLSCredentials?, said: String) -> HTTPConsoleError {
        let lowered = said.lowercased()
        if let tls, lowered.contains("tls") || lowered.contains("certificate") || lowered.contains("key") || lowered.contains("gnutls") {
            var why = "libmicrohttpd refused the certificate \(tls.certificateName) with the key \(tls.keyName)"
            if lowered.contains("do not match") || lowered.contains("mismatch") { why += ": the key does not belong to that certificate" }
            return HTTPConsoleError(description: "\(why) (\(said))", concernsTLS: true)
        }
        // MHD names the port it was given apart from the address (0 here): the reason alone.
        var reason = said
        if let bind = said.range(of: "Failed to bind to port "), let colon = said[bind.upperBound...].firstIndex(of: ":") {
            reason = said[said.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return HTTPConsoleError(description: "cannot listen on \(listen) (\(reason.isEmpty ? "in use, or not an address of this machine" : reason))")
    }

    /// Why a TLS listener cannot start on a libmicrohttpd without TLS.
    public static let noTLS = "this libmicrohttpd was built without TLS (MHD_FEATURE_TLS), so http.tls_cert cannot be served: install Debian's libmicrohttpd12 (built with GnuTLS), or leave tls_cert and tls_key out and put a reverse proxy in front (docs/http-api.md)"

    /// Ends the event streams, answers waiting requests 503, and stops MHD (which joins its threads).
    public func stop() {
        events.close()
        core.stopping()
        deadlines.stop()
        daemon.stop()
    }

    /// Requests refused because their client had spent its budget.
    public var throttledCount: Int { core.throttled.load(ordering: .relaxed) }

    /// The connections now, and those refused or cut so far (`/metrics`).
    public var connectionCounts: HTTPConnections.Counts { core.connections.counts }
}

/// The MHD daemon and the retained `Core` it calls back into.
private final class DaemonHandle: @unchecked Sendable {
    // Invariant: `daemon` and `context` are set once by `start` and cleared once by `stop`, under `lock`.
    private let lock = NSLock()
    // `log` lives until MHD has stopped: its logger may write to it (and drops the message) until then.
    private var daemon: OpaquePointer?
    private var context: Unmanaged<HTTPConsole.Core>?
    private var log: UnsafeMutablePointer<cmhd_start_log>?
    private var boundPort: UInt16 = 0

    func set(_ daemon: OpaquePointer, context: Unmanaged<HTTPConsole.Core>, log: UnsafeMutablePointer<cmhd_start_log>) {
        lock.withLock {
            self.daemon = daemon
            self.context = context
            self.log = log
            boundPort = cmhd_bound_port(daemon)
        }
    }

    var port: UInt16 { lock.withLock { boundPort } }

    func stop() {
        let (daemon, context, log) = lock.withLock { () -> (OpaquePointer?, Unmanaged<HTTPConsole.Core>?, UnsafeMutablePointer<cmhd_start_log>?) in
            defer { self.daemon = nil; self.context = nil; self.log = nil }
            return (self.daemon, self.context, self.log)
        }
        if let daemon { MHD_stop_daemon(daemon) }
        context?.release()
        log?.deallocate()
    }
}

/// One request's state across MHD's calls (`*con_cls`): the body read so far, or the refusal already sent.
final class RequestState: @unchecked Sendable {
    // Invariant: used only by the connection's thread, between the first call and the completion callback.
    var match: HTTPRouteTable.Match?
    var body: [UInt8] = []
    var tooLarge = false
    var query: [String: String] = [:]
    var headers: [String: String] = [:]
    var answered = false
}

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, data, dataSize, state in
    guard let context, let connection, let url, let method, let dataSize, let state else { return .NO }
    let core = Unmanaged<HTTPConsole.Core>.fromOpaque(context).takeUnretainedValue()
    return core.access(connection, url: String(cString: url), method: String(cString: method), data: data, size: dataSize, state: state)
}

/// A request is over (answered, or its connection closed): on a kept-alive connection the next request's
/// deadline starts now.
private let completedHandler: MHD_RequestCompletedCallback = { context, connection, state, _ in
    if let context, let connection, let tracked = HTTPConsole.Core.tracked(connection) {
        Unmanaged<HTTPConsole.Core>.fromOpaque(context).takeUnretainedValue().connections.waiting(tracked)
    }
    guard let state, let pointer = state.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(pointer).release()
    state.pointee = nil
}

/// Whether MHD may take a new connection (`HTTPConnections.admit`), on its listening thread.
private let acceptPolicy: MHD_AcceptPolicyCallback = { context, address, _ in
    guard let context else { return .NO }
    let text = HTTPConsole.Core.addressText { cmhd_address_text(address, $0, $1) }
    return Unmanaged<HTTPConsole.Core>.fromOpaque(context).takeUnretainedValue().connections.admit(text) ? .YES : .NO
}

/// A connection starts (listening thread) or ends (before MHD closes its socket): listed in, and out of,
/// `HTTPConnections`, which MHD's socket context holds a reference to meanwhile.
private let connectionNotice: MHD_NotifyConnectionCallback = { context, connection, socketContext, code in
    guard let context, let connection, let socketContext else { return }
    let core = Unmanaged<HTTPConsole.Core>.fromOpaque(context).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        let tracked = core.connections.opened(fd: cmhd_connection_fd(connection), address: core.clientAddress(connection))
        socketContext.pointee = Unmanaged.passRetained(tracked).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        guard let pointer = socketContext.pointee else { return }
        let tracked = Unmanaged<HTTPConnections.Connection>.fromOpaque(pointer).takeRetainedValue()
        socketContext.pointee = nil
        core.connections.closed(tracked)
    }
}
