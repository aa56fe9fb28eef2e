import Foundation
import StudioCore
import Switcher
import Control

/// `picture`: a camera's picture settings in the switcher (crop, mirror/flip, rotation, colour, beauty),
/// changed live from the next program frame on. The change is logged (`picture_changed`) but not
/// written to the config file: the camera's pin keeps what the show starts with.
enum PictureCommands {
    enum Picture: SignedCommand {
        typealias Signature = PictureSignatures.Picture
        static let execution = ControlExecution.deferred

        static func start(_ arguments: PictureArguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<PictureReply, ControlError>) -> Void) throws {
            let camera = CameraID(arguments.camera)
            let sources = server.switcher.status.sources
            guard sources.contains(camera) else {
                let error: SwitchError = server.cameras.isRemoved(camera) ? .removedCamera(camera, available: sources) : .unknownCamera(camera, available: sources)
                throw SwitcherCommands.controlError(error)
            }
            let current = server.switcher.picture(of: camera)
            guard arguments.changes else { return reply(.success(PictureReply(camera: camera, settings: current))) }
            let settings = arguments.applied(to: current)
            if let problem = settings.problem { throw ControlError(.invalidArgument, "picture: \(problem)") }
            let log = server.log
            do {
                try server.switcher.setPicture(settings, for: camera) { result in
                    switch result {
                    case .success(let outcome):
                        let changes = outcome.settings.changes(from: outcome.previous)
                        if !changes.isEmpty {
                            log.info("\(camera.name): picture \(changes.map { "\($0.key) \($0.change)" }.joined(separator: ", ")) (live; the config file is unchanged)")
                        }
                        reply(.success(PictureReply(outcome)))
                    case .failure(let error):
                        reply(.failure(SwitcherCommands.controlError(error)))
                    }
                }
            } catch {
                throw SwitcherCommands.controlError(error)
            }
        }
    }
}


extension PictureReply {
    init(camera: CameraID, settings: PictureSettings) {
        self.init(camera: camera.name, picture: settings, changed: [:])
    }

    init(_ outcome: PictureOutcome) {
        self.init(camera: outcome.camera.name, picture: outcome.settings,
                  changed: Dictionary(uniqueKeysWithValues: outcome.settings.changes(from: outcome.previous).map { ($0.key.rawValue, $0.change) }),
                  programMilliseconds: outcome.programTime.milliseconds, frame: Int(outcome.frameNumber))
    }
}
