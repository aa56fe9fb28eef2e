import Foundation
import StudioCore
import StudioSystem
import Control
import Output

/// The program's destinations while on air (`ProgramOutputs`): list them, add one, stop, start again,
/// remove. Nothing here is written to the config file.
enum OutputCommands {
    enum Outputs: SignedCommand {
        typealias Signature = OutputSignatures.List
        static func run(_ arguments: NoArguments, in server: StudioServer) -> OutputsReply {
            OutputsReply(outputs: server.outputs.entries.map(server.outputView), limit: ProgramOutputs.limit)
        }
    }

    enum Output: SignedCommand {
        typealias Signature = OutputSignatures.Change
        static let execution = ControlExecution.deferred

        static func start(_ arguments: OutputChange, in server: StudioServer,
                          reply: @escaping @Sendable (Result<OutputReply, ControlError>) -> Void) throws {
            guard let action = OutputChange.Action(rawValue: arguments.action) else {
                let actions = OutputChange.Action.allCases.map(\.rawValue).joined(separator: ", ")
                throw ControlError(.invalidArgument, "output: unknown action \"\(arguments.action)\" (actions: \(actions))")
            }
            let outputs = server.outputs, name = arguments.output, by = arguments.requester
            let answer: @Sendable (ProgramOutputs.Entry) -> Void = { entry in
                reply(.success(OutputReply(action: action.rawValue, output: server.outputView(entry))))
            }
            if action != .add, arguments.url != nil || arguments.record != nil {
                throw ControlError(.invalidArgument, "output \(action.rawValue): url and record are for add only")
            }
            switch action {
            case .add: answer(try outputs.add(name: name, url: arguments.url, record: arguments.record ?? false, by: by))
            case .start: answer(try outputs.start(name, by: by))
            case .stop: try outputs.stop(name, by: by, done: answer)
            case .remove: try outputs.remove(name, by: by, done: answer)
            }
        }
    }
}

extension StudioServer {
    /// An output as `outputs` and `status` show it.
    func outputView(_ entry: ProgramOutputs.Entry) -> OutputView {
        outputView(entry.output, origin: entry.origin.rawValue, addedBy: entry.addedBy, stopped: entry.stopped)
    }

    /// An output as `status` shows it: a program output (above), or a node's sender's connection (origin `node`).
    func outputView(_ output: MediaOutput, origin: String = "node", addedBy: String? = nil, stopped: Bool = false) -> OutputView {
        let s = output.statistics
        return OutputView(
            name: s.name, url: s.maskedURL, kind: output.destination.kind.name, origin: origin, addedBy: addedBy,
            state: (stopped ? OutputState.stopped : s.state).rawValue, bytesSent: Int(s.bytesSent), packetsSent: s.packetsSent,
            droppedVideo: s.droppedVideo, droppedAudio: s.droppedAudio, reconnects: s.reconnectCount,
            reconnectAttempts: s.reconnectAttempts, lastError: s.lastError, bitsPerSecond: s.bitsPerSecond,
            nextAttemptInSeconds: s.secondsToNextAttempt.map { ($0 * 1000).rounded() / 1000 },
            latency: Self.latencyView(s.latency))
    }
}
