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
    /// A larger request body is answered 413 (and not read).
    public var maxBodyBytes = 64 * 1024
    /// Connections (each its own thread, event streams included) at once, and from one address.
    public var maxConnections: UInt32 = 64
    public var maxConnectionsPerAddress: UInt32 = 32
    /// A connection that neither sends nor takes data for this long is closed.
    public var idleTimeoutSeconds: UInt32 = 30
    /// How long a connection waits for a command's answer (a cut answers once its frame is out).
    public var replyTimeoutSeconds = 10.0
    /// Each client address's request budget (see `HTTPRequestBudget`).
    public var burst = 200
    public var ratePerSecond = 100.0

    public init(listen: ListenAddress, token: String?) {
        self.listen = listen
        self.token = token
    }
}

public struct HTTPConsoleError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// The operator's HTTP API on libmicrohttpd: MHD's listening thread and one thread per connection
/// (bounded by `maxConnections`), never the Swift cooperative pool nor a media thread. Each request is
/// checked (request budget 429, token 401, Host/Origin 403, route 404/405, body size 413), then handed
/// to `handler`, whose answer its connection thread waits for; `GET /api/v1/events` streams `events`.
public final class HTTPConsole: Sendable {
    /// The console's own route: the server-sent event stream.
    public static let eventsRoute = HTTPRoute(.get, "/api/v1/events", name: "events")

    public let settings: HTTPConsoleSettings
    public let events: HTTPEventStream
    let core: Core
    private let daemon = DaemonHandle()

    public init(settings: HTTPConsoleSettings, routes: [HTTPRoute], events: HTTPEventStream, clock: any Clock = MonotonicClock(),
                handler: @escaping HTTPHandler) {
        self.settings = settings
        self.events = events
        core = Core(settings: settings, table: HTTPRouteTable(routes + [Self.eventsRoute]), events: events,
                    budget: HTTPRequestBudget(burst: settings.burst, ratePerSecond: settings.ratePerSecond, clock: clock),
                    handler: handler)
    }

    /// The port bound (the kernel's choice when `listen` asked for 0); 0 before `start`.
    public var port: UInt16 { daemon.port }

    /// Binds and starts MHD's threads. Throws when the address cannot be bound (in use, not this machine's).
    public func start() throws {
        guard let octets = ListenAddress.octets(settings.listen.host) else {
            throw HTTPConsoleError(description: "\(settings.listen.host) is not an IPv4 address")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = settings.listen.port.bigEndian
        address.sin_addr.s_addr = (UInt32(octets[0]) << 24 | UInt32(octets[1]) << 16 | UInt32(octets[2]) << 8 | UInt32(octets[3])).bigEndian
        let context = Unmanaged.passRetained(core)
        let started = cmhd_start(&address, settings.maxConnections, settings.maxConnectionsPerAddress, settings.idleTimeoutSeconds,
                                 accessHandler, context.toOpaque(), completedHandler, nil)
        guard let started else {
            context.release()
            throw HTTPConsoleError(description: "cannot listen on \(settings.listen) (in use, or not an address of this machine)")
        }
        daemon.set(started, context: context)
    }

    /// Ends the event streams, answers waiting requests 503, and stops MHD (which joins its threads).
    public func stop() {
        events.close()
        core.stopping()
        daemon.stop()
    }

    /// Requests refused because their client had spent its budget.
    public var throttledCount: Int { core.throttled.load(ordering: .relaxed) }
}

/// The MHD daemon and the retained `Core` it calls back into.
private final class DaemonHandle: @unchecked Sendable {
    // Invariant: `daemon` and `context` are set once by `start` and cleared once by `stop`, under `lock`.
    private let lock = NSLock()
    private var daemon: OpaquePointer?
    private var context: Unmanaged<HTTPConsole.Core>?
    private var boundPort: UInt16 = 0

    func set(_ daemon: OpaquePointer, context: Unmanaged<HTTPConsole.Core>) {
        lock.withLock {
            self.daemon = daemon
            self.context = context
            boundPort = cmhd_bound_port(daemon)
        }
    }

    var port: UInt16 { lock.withLock { boundPort } }

    func stop() {
        let (daemon, context) = lock.withLock { () -> (OpaquePointer?, Unmanaged<HTTPConsole.Core>?) in
            defer { self.daemon = nil; self.context = nil }
            return (self.daemon, self.context)
        }
        if let daemon { MHD_stop_daemon(daemon) }
        context?.release()
    }
}

/// One request's state across MHD's calls (`*con_cls`): the body read so far, or the refusal already sent.
final class RequestState: @unchecked Sendable {
    // Invariant: used only by the connection's thread, between the first call and the completion callback.
    var match: HTTPRouteTable.Match?
    var body: [UInt8] = []
    var tooLarge = false
    var query: [String: String] = [:]
    var answered = false
}

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, data, dataSize, state in
    guard let context, let connection, let url, let method, let dataSize, let state else { return .NO }
    let core = Unmanaged<HTTPConsole.Core>.fromOpaque(context).takeUnretainedValue()
    return core.access(connection, url: String(cString: url), method: String(cString: method), data: data, size: dataSize, state: state)
}

private let completedHandler: MHD_RequestCompletedCallback = { _, _, state, _ in
    guard let state, let pointer = state.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(pointer).release()
    state.pointee = nil
}
