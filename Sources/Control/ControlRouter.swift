import Synchronization

/// Dispatches requests to a table of `ControlCommand` types, Voctomix style: each command is a small
/// function from its arguments to its reply.
///
/// ```swift
/// let router = ControlRouter<StudioServer>(commands: [Ping.self, Switch.self, Sessions.self], worker: queries.submit)
/// let server = ControlServer(socketPath: path, handler: router)
/// ...
/// router.attach(studioServer)
/// ```
///
/// The router answers `help` itself, from the table. Commands see the context once it is attached;
/// before that (and after the context is gone) they are answered `unavailable`. The context is held
/// weakly: the context usually owns the control server, which owns this router.
///
/// Commands run on the control thread and must not block it; `.worker` commands run on `worker`
/// (`.deferred` ones answer from wherever they finish).
public final class ControlRouter<Context: AnyObject & Sendable>: ControlHandler {
    /// Runs a job on another thread; false when it cannot take more (the request is answered `busy`).
    public typealias Worker = @Sendable (@escaping @Sendable () -> Void) -> Bool
    typealias Handle = @Sendable (ControlRequest, Context, @escaping @Sendable (ControlReply) -> Void) throws -> Void

    private struct ContextReference: ~Copyable {
        weak var value: Context?
    }

    /// Every command answered, in declaration order: the table's, `help`, then those the control server
    /// answers itself (`subscribe`, `unsubscribe`).
    public let commands: [ControlCommandInfo]
    private let handlers: [String: Handle]
    private let context = Mutex(ContextReference())

    public static var help: ControlCommandInfo {
        ControlCommandInfo(name: "help", summary: "lists the commands with a line about each")
    }

    /// A router for `commands`. `worker` runs the `.worker` commands; without one they run on the
    /// control thread.
    public init(commands: [any ControlCommand<Context>.Type], worker: Worker? = nil) {
        var handlers: [String: Handle] = [:]
        var infos: [ControlCommandInfo] = []
        for command in commands {
            precondition(handlers[command.name] == nil && command.name != Self.help.name, "control command \(command.name) declared twice")
            handlers[command.name] = Self.handle(command, worker: worker)
            infos.append(command.info)
        }
        self.handlers = handlers
        self.commands = infos + [Self.help] + ControlServer.builtInCommands
    }

    /// Hands the commands their context; until then they answer `unavailable`.
    public func attach(_ context: Context) {
        self.context.withLock { $0.value = context }
    }

    public func handle(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
        if request.command == Self.help.name {
            reply(Self.encoded(HelpReply(commands: commands), command: request.command))
            return
        }
        guard let handler = handlers[request.command] else {
            let known = commands.map(\.name).sorted().joined(separator: ", ")
            reply(.failure(.unknownCommand, "unknown command \"\(request.command)\" (known: \(known))"))
            return
        }
        guard let context = context.withLock({ $0.value }) else {
            reply(.failure(.unavailable, "the server is starting or stopping"))
            return
        }
        do {
            try handler(request, context, reply)
        } catch {
            reply(.failure(Self.controlError(error, command: request.command)))
        }
    }

    private static func handle<Command: ControlCommand>(_ command: Command.Type, worker: Worker?) -> Handle
    where Command.Context == Context {
        { request, context, reply in
            let arguments = told(try request.decodeArguments(Command.Arguments.self), origin: request.origin)
            let answer: @Sendable (Result<Command.Reply, ControlError>) -> Void = { result in
                switch result {
                case .success(let value): reply(encoded(value, command: request.command))
                case .failure(let error): reply(.failure(error))
                }
            }
            switch Command.execution {
            case .immediate:
                answer(.success(try Command.run(arguments, in: context)))
            case .deferred:
                try Command.start(arguments, in: context, reply: answer)
            case .worker:
                let job: @Sendable () -> Void = {
                    do { answer(.success(try Command.run(arguments, in: context))) } catch {
                        answer(.failure(controlError(error, command: nil)))
                    }
                }
                guard let worker else { return job() }
                if !worker(job) { throw ControlError(.busy, "too many queries waiting; try again") }
            }
        }
    }

    /// `arguments` with the request's origin set, where they are `RequesterAware`.
    private static func told<Arguments>(_ arguments: Arguments, origin: String) -> Arguments {
        guard var aware = arguments as? any RequesterAware else { return arguments }
        aware.requester = origin
        return aware as? Arguments ?? arguments
    }

    /// A thrown `ControlError` as it is; anything else `internal`, prefixed with the command's name when given.
    private static func controlError(_ error: any Error, command: String?) -> ControlError {
        if let error = error as? ControlError { return error }
        return ControlError(.internal, command.map { "\($0): \(error)" } ?? "\(error)")
    }

    private static func encoded(_ value: some Encodable, command: String) -> ControlReply {
        do { return .success(try JSONValue(encoding: value)) } catch {
            return .failure(.internal, "\(command): cannot encode the reply: \(error)")
        }
    }
}
