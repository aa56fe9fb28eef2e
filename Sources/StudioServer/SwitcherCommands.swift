import Foundation
import StudioCore
import Switcher
import Control

/// The vision mixer's commands: what goes on program and preview, and how (cuts and transitions).
/// Each answers once its frame is on air, like `switch`.
enum SwitcherCommands {
    /// Turns a switcher outcome into the reply every one of these commands gives.
    static func answer(_ reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void, _ server: StudioServer)
        -> @Sendable (Result<SwitchOutcome, SwitchError>) -> Void {
        let rate = server.switcher.format.frameRate
        return { result in
            switch result {
            case .success(let outcome): reply(.success(SwitchReply(outcome, rate: rate)))
            case .failure(let error): reply(.failure(controlError(error)))
            }
        }
    }

    static func controlError(_ error: SwitchError) -> ControlError {
        switch error {
        case .unknownCamera, .removedCamera: return ControlError(.unknownCamera, error.description)
        case .unknownSource, .unknownScene, .unknownOverlay: return ControlError(.notFound, error.description)
        case .invalidTransition, .invalidScene, .invalidPicture, .invalidOverlay: return ControlError(.invalidArgument, error.description)
        case .nothingOnPreview, .transitionRunning, .stopped, .stoppedBefore: return ControlError(.unavailable, error.description)
        }
    }

    static func source(_ name: String, in server: StudioServer) throws -> ProgramSource {
        do { return try server.switcher.source(named: name) } catch { throw controlError(error) }
    }

    enum Switch: SignedCommand {
        typealias Signature = SwitcherSignatures.Switch
        static let execution = ControlExecution.deferred
        static func start(_ arguments: SourceArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            server.switcher.switchProgram(to: try source(arguments.name(name), in: server), completion: answer(reply, server))
        }
    }

    enum Scene: SignedCommand {
        typealias Signature = SwitcherSignatures.Scene
        static let execution = ControlExecution.deferred
        static func start(_ arguments: SceneArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            let status = server.switcher.status
            guard status.scenes.contains(arguments.scene) else {
                throw controlError(.unknownScene(arguments.scene, scenes: status.scenes))
            }
            server.switcher.switchProgram(to: .scene(arguments.scene), completion: answer(reply, server))
        }
    }

    enum Preview: SignedCommand {
        typealias Signature = SwitcherSignatures.Preview
        static let execution = ControlExecution.deferred
        static func start(_ arguments: SourceArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            server.switcher.setPreview(try source(arguments.name(name), in: server), completion: answer(reply, server))
        }
    }

    enum Cut: SignedCommand {
        typealias Signature = SwitcherSignatures.Cut
        static let execution = ControlExecution.deferred
        static func start(_ arguments: NoArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) {
            server.switcher.cut(completion: answer(reply, server))
        }
    }

    enum Auto: SignedCommand {
        typealias Signature = SwitcherSignatures.Auto
        static let execution = ControlExecution.deferred
        static func start(_ arguments: TransitionArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            let spec = try arguments.spec(name, base: server.switcher.status.defaultTransition, rate: server.switcher.format.frameRate,
                                          stingers: server.reloader.configuration.transitions)
            server.switcher.auto(spec, completion: answer(reply, server))
        }
    }

    enum Transition: SignedCommand {
        typealias Signature = SwitcherSignatures.Transition
        static func run(_ arguments: TransitionArguments, in server: StudioServer) throws -> TransitionReply {
            let rate = server.switcher.format.frameRate
            let spec = try arguments.spec(name, base: server.switcher.status.defaultTransition, rate: rate,
                                          stingers: server.reloader.configuration.transitions)
            if arguments.kind != nil || arguments.frames != nil || arguments.ms != nil {
                do { try server.switcher.setDefaultTransition(spec) } catch { throw controlError(error) }
            }
            // As set: a stinger's frames are its clip's.
            return TransitionReply(server.switcher.status.defaultTransition, rate: rate)
        }
    }

    enum Overlay: SignedCommand {
        typealias Signature = SwitcherSignatures.Overlay
        static let execution = ControlExecution.deferred
        static func start(_ arguments: OverlayArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<OverlayReply, ControlError>) -> Void) {
            server.switcher.setOverlay(arguments.name, on: arguments.on) { result in
                switch result {
                case .success(let outcome): reply(.success(OverlayReply(outcome)))
                case .failure(let error): reply(.failure(controlError(error)))
                }
            }
        }
    }

    enum Scenes: SignedCommand {
        typealias Signature = SwitcherSignatures.Scenes
        static func run(_ arguments: NoArguments, in server: StudioServer) -> ScenesReply { server.scenesView() }
    }
}

extension SourceArguments {
    /// The name given, as `source` or `camera`.
    func name(_ command: String) throws -> String {
        guard let name = source ?? camera else { throw ControlError(.invalidArgument, "\(command): missing argument \"source\"") }
        return name
    }
}

extension TransitionArguments {
    /// The transition asked for, from `base` (the default transition). A `stinger` lasts its clip: it
    /// takes no length, and plays `base`'s clip when `base` is one, else the first stinger of
    /// `stingers` (the config's transitions, whose clips are loaded).
    func spec(_ command: String, base: TransitionSpec, rate: Rational, stingers: [TransitionSpec]) throws -> TransitionSpec {
        var kind = base.kind
        if let name = self.kind {
            guard let parsed = TransitionKind(rawValue: name) else {
                throw ControlError(.invalidArgument, "\(command): unknown transition '\(name)'; transitions: \(TransitionKind.names)")
            }
            kind = parsed
        }
        if kind == .stinger {
            if frames != nil || ms != nil { throw ControlError(.invalidArgument, "\(command): a stinger lasts its clip's length; give no frames or ms") }
            guard let stinger = base.kind == .stinger ? base : stingers.first(where: { $0.kind == .stinger }) else {
                throw ControlError(.invalidArgument, "\(command): no stinger is configured: set transition: {kind: stinger, clip: FILE, cut_at_ms: MS} in the config and reload")
            }
            return stinger
        }
        if frames != nil, ms != nil { throw ControlError(.invalidArgument, "\(command): give frames or ms, not both") }
        var frames = self.frames ?? base.frames
        if let ms {
            guard ms > 0 else { throw ControlError(.invalidArgument, "\(command): ms must be above 0, got \(ms)") }
            frames = TransitionSpec.frames(milliseconds: ms, rate: rate)
        }
        let spec = TransitionSpec(kind: kind, frames: frames, color: base.color)
        if let problem = spec.problem(rate: rate) { throw ControlError(.invalidArgument, "\(command): \(problem)") }
        return spec
    }
}
