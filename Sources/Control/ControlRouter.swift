import Synchronization

/// Dispatches requests by command name to small functions, Voctomix style: each command returns a
/// reply, which may carry an event for subscribers (`.success(result, event: ...)`).
///
/// ```swift
/// let router = ControlRouter()
/// router.add("cameras") { _ in .success(["cameras": ["cam1", "cam2"]]) }
/// router.addDeferred("switch") { request, reply in
///     let camera = try request.string("camera")
///     program.switch(to: camera) { reply(.success(["camera": .string(camera)], event: ...)) }
/// }
/// let server = ControlServer(socketPath: path, handler: router)
/// ```
///
/// A thrown `ControlError` becomes that error reply; any other error becomes `internal`.
/// Commands run on the control thread and must not block it.
public final class ControlRouter: ControlHandler {
    public typealias Command = @Sendable (ControlRequest) throws -> ControlReply
    public typealias DeferredCommand = @Sendable (ControlRequest, @escaping @Sendable (ControlReply) -> Void) throws -> Void

    private enum Entry {
        case immediate(Command)
        case deferred(DeferredCommand)
    }

    private let entries = Mutex<[String: Entry]>([:])

    public init() {}

    /// Adds (or replaces) a command that answers at once.
    public func add(_ name: String, _ command: @escaping Command) {
        entries.withLock { $0[name] = .immediate(command) }
    }

    /// Adds (or replaces) a command that answers later, from any thread, by calling `reply` once.
    public func addDeferred(_ name: String, _ command: @escaping DeferredCommand) {
        entries.withLock { $0[name] = .deferred(command) }
    }

    /// The commands known, sorted (plus `subscribe` and `unsubscribe`, which the server answers itself).
    public var commandNames: [String] { entries.withLock { $0.keys.sorted() } }

    public func handle(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
        guard let entry = entries.withLock({ $0[request.command] }) else {
            let known = (commandNames + ["subscribe", "unsubscribe"]).sorted().joined(separator: ", ")
            reply(.failure(.unknownCommand, "unknown command \"\(request.command)\" (known: \(known))"))
            return
        }
        do {
            switch entry {
            case .immediate(let command): reply(try command(request))
            case .deferred(let command): try command(request, reply)
            }
        } catch let error as ControlError {
            reply(.failure(error))
        } catch {
            reply(.failure(.internal, "\(request.command): \(error)"))
        }
    }
}
