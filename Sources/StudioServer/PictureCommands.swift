import Foundation
import StudioCore
import Switcher
import Control

/// `picture`: a camera's picture settings in the switcher (crop, mirror/flip, rotation, colour, beauty),
/// changed live from the next program frame on. The change is logged (`picture_changed`) but not
/// written to the config file: the camera's pin keeps what the show starts with.
enum PictureCommands {
    enum Picture: ControlCommand {
        static let name = "picture"
        static let httpRoute: ControlHTTPRoute? = .post("/api/v1/picture/{camera}")
        static let summary = "sets (or, with only camera, shows) a camera's picture: crop, mirror, flip, rotate, colour, beauty"
        static let execution = ControlExecution.deferred

        /// `camera`, then any of the settings (`PictureSettings.Key`'s names) and `reset`.
        struct Arguments: Decodable, Sendable {
            var camera: String
            /// Start from the defaults instead of the camera's current settings.
            var reset = false
            /// The crop given: `.some(nil)` for `"none"` (or null).
            var crop: RelativeRect??
            var mirror: Bool?
            var flip: Bool?
            var rotate: Int?
            var brightness: Double?
            var contrast: Double?
            var saturation: Double?
            var gamma: Double?
            var beauty: Int?

            private enum OtherKeys: String, CodingKey { case camera, reset }

            init(from decoder: any Decoder) throws {
                let other = try decoder.container(keyedBy: OtherKeys.self)
                camera = try other.decode(String.self, forKey: .camera)
                reset = try other.decodeIfPresent(Bool.self, forKey: .reset) ?? false
                let keys = try decoder.container(keyedBy: PictureSettings.Key.self)
                if keys.contains(.crop) {
                    if try keys.decodeNil(forKey: .crop) || (try? keys.decode(String.self, forKey: .crop)) == "none" {
                        crop = .some(nil)
                    } else {
                        guard let numbers = try? keys.decode([Double].self, forKey: .crop), numbers.count == 4 else {
                            throw DecodingError.dataCorruptedError(forKey: .crop, in: keys, debugDescription:
                                "must be [x, y, width, height] in fractions of the picture, or \"none\"")
                        }
                        crop = .some(RelativeRect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]))
                    }
                }
                mirror = try keys.decodeIfPresent(Bool.self, forKey: .mirror)
                flip = try keys.decodeIfPresent(Bool.self, forKey: .flip)
                rotate = try keys.decodeIfPresent(Int.self, forKey: .rotate)
                brightness = try keys.decodeIfPresent(Double.self, forKey: .brightness)
                contrast = try keys.decodeIfPresent(Double.self, forKey: .contrast)
                saturation = try keys.decodeIfPresent(Double.self, forKey: .saturation)
                gamma = try keys.decodeIfPresent(Double.self, forKey: .gamma)
                beauty = try keys.decodeIfPresent(Int.self, forKey: .beauty)
            }

            /// Whether the request changes anything (else it only asks for the current settings).
            var changes: Bool {
                reset || crop != nil || mirror != nil || flip != nil || rotate != nil || brightness != nil || contrast != nil
                    || saturation != nil || gamma != nil || beauty != nil
            }

            /// `current` (the defaults after `reset`) with the given settings.
            func applied(to current: PictureSettings) -> PictureSettings {
                var settings = reset ? PictureSettings() : current
                if let crop { settings.crop = crop }
                if let mirror { settings.mirror = mirror }
                if let flip { settings.flip = flip }
                if let rotate { settings.rotation = rotate }
                if let brightness { settings.brightness = brightness }
                if let contrast { settings.contrast = contrast }
                if let saturation { settings.saturation = saturation }
                if let gamma { settings.gamma = gamma }
                if let beauty { settings.beauty = beauty }
                return settings
            }
        }

        static func start(_ arguments: Arguments, in server: StudioServer,
                          reply: @escaping @Sendable (Result<PictureReply, ControlError>) -> Void) throws {
            let camera = CameraID(arguments.camera)
            let sources = server.switcher.status.sources
            guard sources.contains(camera) else { throw SwitcherCommands.controlError(.unknownCamera(camera, available: sources)) }
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
