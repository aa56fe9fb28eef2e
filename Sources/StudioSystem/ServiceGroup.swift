import Synchronization

/// Services started in order and stopped in reverse, from one list (swift-service-lifecycle's
/// `ServiceGroup`, without async). Whoever builds a process adds each service as it starts it; a failure
/// part-way (a start that throws) and a normal shutdown both end in `stopAll()`, which stops exactly
/// the services that started, last first, each once. There is no second, hand-written stop order to
/// keep in step with the start order.
///
/// ```swift
/// let services = ServiceGroup()
/// do {
///     let store = try services.make("store", EventStore(path: path)) { $0.close() }
///     try services.start("control", { try control.start() }, stop: { control.stop() })
/// } catch {
///     services.stopAll()
///     throw error
/// }
/// ```
public final class ServiceGroup: Sendable {
    private struct Entry {
        var name: String
        var stop: @Sendable () -> Void
    }

    private let started = Mutex<[Entry]>([])
    private let onStop: (@Sendable (String) -> Void)?
    private let onStopped: (@Sendable (String, Double) -> Void)?
    private let now: @Sendable () -> UInt64

    /// - Parameters:
    ///   - onStop: told each service's name just before it is stopped (for the log).
    ///   - onStopped: told each service's name and the seconds its stop took, once it returned (a stop
    ///     that takes long says which service it was).
    ///   - now: the clock those seconds are read from (ns; injected by tests).
    public init(onStop: (@Sendable (String) -> Void)? = nil, onStopped: (@Sendable (String, Double) -> Void)? = nil,
                now: @escaping @Sendable () -> UInt64 = { MonotonicClock.now() }) {
        self.onStop = onStop
        self.onStopped = onStopped
        self.now = now
    }

    /// Runs `start`; if it returns, `stop` joins the list and runs at `stopAll()`. If it throws, the
    /// service is not in the list (nothing of it started) and the error goes to the caller.
    public func start(_ name: String, _ start: () throws -> Void, stop: @escaping @Sendable () -> Void) rethrows {
        try start()
        add(name, stop: stop)
    }

    /// Makes a service with `make` (which starts it) and registers `stop(service)`; returns the service.
    public func make<Service: Sendable>(_ name: String, _ make: @autoclosure () throws -> Service,
                                        stop: @escaping @Sendable (Service) -> Void) rethrows -> Service {
        let service = try make()
        add(name, stop: { stop(service) })
        return service
    }

    /// Registers a service that is already running.
    public func add(_ name: String, stop: @escaping @Sendable () -> Void) {
        started.withLock { $0.append(Entry(name: name, stop: stop)) }
    }

    /// The services running, in the order they started.
    public var names: [String] { started.withLock { $0.map(\.name) } }

    /// Stops every started service, the last started first. Safe to call more than once and from a
    /// service's own stop: each service is stopped once.
    public func stopAll() {
        while let entry = started.withLock({ $0.popLast() }) {
            onStop?(entry.name)
            let begun = now()
            entry.stop()
            onStopped?(entry.name, Double(now() - begun) / 1e9)
        }
    }
}
