import Foundation
import StudioCore
import Switcher
import Control

/// The vision mixer's commands: what goes on program and preview, and how (cuts and transitions).
/// Each answers once its frame is on air, like `switch`.
enum SwitcherCommands {
    /// A camera or scene name: `source`, or `camera` (the older name of the argument).
    struct SourceArguments: Decodable, Sendable {
        var source: String?
        var camera: String?

        func name(_ command: String) throws -> String {
            guard let name = source ?? camera else { throw ControlError(.invalidArgument, "\(command): missing argument \"source\"") }
            return name
        }
    }

    /// `kind` with `frames` or `ms`: a transition (the default's kind and length where left out).
    struct TransitionArguments: Decodable, Sendable {
        var kind: String?
        var frames: Int?
        var ms: Int?

        func spec(_ command: String, base: TransitionSpec, rate: Rational) throws -> TransitionSpec {
            var kind = base.kind
            if let name = self.kind {
                guard let parsed = TransitionKind(rawValue: name) else {
                    throw ControlError(.invalidArgument, "\(command): unknown transition '\(name)'; transitions: \(TransitionKind.names)")
                }
                kind = parsed
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
        case .unknownCamera: return ControlError(.unknownCamera, error.description)
        case .unknownSource, .unknownScene, .unknownOverlay: return ControlError(.notFound, error.description)
        case .invalidTransition, .invalidScene, .invalidPicture, .invalidOverlay: return ControlError(.invalidArgument, error.description)
        case .nothingOnPreview, .transitionRunning, .stopped, .stoppedBefore: return ControlError(.unavailable, error.description)
        }
    }

    static func source(_ name: String, in server: StudioServer) throws -> ProgramSource {
        do { return try server.switcher.source(named: name) } catch { throw controlError(error) }
    }

    enum Switch: ControlCommand {
        static let name = "switch"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/switch")
        static let summary = "cuts the program to a camera or scene; answers once the cut is on air"
        static let execution = ControlExecution.deferred
        static func start(_ arguments: SourceArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            server.switcher.switchProgram(to: try source(arguments.name(name), in: server), completion: answer(reply, server))
        }
    }

    enum Scene: ControlCommand {
        static let name = "scene"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/scene/{scene}")
        static let summary = "cuts the program to a scene (switch, for scenes only)"
        static let execution = ControlExecution.deferred
        struct Arguments: Decodable, Sendable { var scene: String }
        static func start(_ arguments: Arguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            let status = server.switcher.status
            guard status.scenes.contains(arguments.scene) else {
                throw controlError(.unknownScene(arguments.scene, scenes: status.scenes))
            }
            server.switcher.switchProgram(to: .scene(arguments.scene), completion: answer(reply, server))
        }
    }

    enum Preview: ControlCommand {
        static let name = "preview"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/preview")
        static let summary = "puts a camera or scene on preview, ready for cut or auto"
        static let execution = ControlExecution.deferred
        static func start(_ arguments: SourceArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            server.switcher.setPreview(try source(arguments.name(name), in: server), completion: answer(reply, server))
        }
    }

    enum Cut: ControlCommand {
        static let name = "cut"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/cut")
        static let summary = "swaps preview and program on the next frame (completes a running transition at once)"
        static let execution = ControlExecution.deferred
        static func start(_ arguments: NoArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) {
            server.switcher.cut(completion: answer(reply, server))
        }
    }

    enum Auto: ControlCommand {
        static let name = "auto"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/auto")
        static let summary = "runs a transition from program to preview (the default one unless given)"
        static let execution = ControlExecution.deferred
        static func start(_ arguments: TransitionArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<SwitchReply, ControlError>) -> Void) throws {
            let spec = try arguments.spec(name, base: server.switcher.status.defaultTransition, rate: server.switcher.format.frameRate)
            server.switcher.auto(spec, completion: answer(reply, server))
        }
    }

    enum Transition: ControlCommand {
        static let name = "transition"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/transition")
        static let summary = "sets (or, with no arguments, shows) the transition auto runs"
        static func run(_ arguments: TransitionArguments, in server: StudioServer) throws -> TransitionReply {
            let rate = server.switcher.format.frameRate
            let spec = try arguments.spec(name, base: server.switcher.status.defaultTransition, rate: rate)
            if arguments.kind != nil || arguments.frames != nil || arguments.ms != nil {
                do { try server.switcher.setDefaultTransition(spec) } catch { throw controlError(error) }
            }
            return TransitionReply(spec, rate: rate)
        }
    }

    enum Overlay: ControlCommand {
        static let name = "overlay"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/overlay/{name}")
        static let summary = "switches an overlay on or off (toggles it without on); answers once the frame is on air"
        static let execution = ControlExecution.deferred
        struct Arguments: Decodable, Sendable {
            var name: String
            var on: Bool?
        }
        static func start(_ arguments: Arguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<OverlayReply, ControlError>) -> Void) {
            server.switcher.setOverlay(arguments.name, on: arguments.on) { result in
                switch result {
                case .success(let outcome): reply(.success(OverlayReply(outcome)))
                case .failure(let error): reply(.failure(controlError(error)))
                }
            }
        }
    }

    enum Scenes: ControlCommand {
        static let name = "scenes"
        static let httpRoute: ControlHTTPRoute? = .get("/api/v1/scenes")
        static let summary = "the scenes with their layers, sources and tally"
        static func run(_ arguments: NoArguments, in server: StudioServer) -> ScenesReply { server.scenesView() }
    }
}
