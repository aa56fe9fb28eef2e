import Foundation
import StudioCore
import StudioViews
import StudioConfig
import Control
import StudioCLI

/// `studio picture cam1 --mirror --beauty 40`: a camera's picture settings, live. One option per
/// `PictureSettings.Key`: on/off settings as `--mirror` / `--no-mirror`, the others with a value.
enum PictureCommand: ClientCommand {
    typealias Key = PictureSettings.Key

    static let reset = OptionSpec("reset", help: "start from the defaults (the picture as the camera delivers it)")

    static var settingOptions: [OptionSpec] {
        Key.allCases.flatMap { key -> [OptionSpec] in
            if key.isSwitch { return [OptionSpec(key.rawValue, help: key.help), OptionSpec("no-" + key.rawValue, help: "undo --\(key)")] }
            let valueName = switch key {
            case .crop: "X,Y,W,H"
            case .rotate: "DEGREES"
            default: "N"
            }
            return [OptionSpec(key.rawValue, valueName, help: key.help)]
        }
    }

    static let spec = CommandSpec(
        "picture", abstract: "set or show a camera's picture settings in the switcher.",
        summary: "set (or show) a camera's crop, mirror, flip, rotation,\ncolour and beauty filter",
        positionals: [PositionalSpec("NAME")], options: settingOptions + [reset, .json, .socket],
        positionalsError: "expected one camera name, e.g. `studio picture cam1 --mirror --beauty 40`",
        discussion: """
        Applied to the camera's frames from the next program frame on, wherever the camera
        is shown (full frame, in a scene or a transition), in this order: crop, mirror/flip,
        rotation, brightness/contrast/saturation/gamma, beauty. Settings not given keep their
        value (--reset first goes back to the defaults). Without options, prints the current
        settings. Each change is logged as an event (picture_changed) but NOT written to the
        config file: to keep it for the next show, put it under the camera's pin
        (cameras: pins: - picture:). The beauty filter costs about 4 ms of the program
        thread per new 720p frame of each camera shown with it.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        var request = PictureArguments(camera: arguments.positionals[0], reset: arguments.flag(reset.name))
        for key in Key.allCases {
            if key.isSwitch {
                let (on, off) = (arguments.flag(key.rawValue), arguments.flag("no-" + key.rawValue))
                if on && off { throw UsageError("studio picture: give --\(key) or --no-\(key), not both") }
                guard on || off else { continue }
                if key == .mirror { request.mirror = on } else { request.flip = on }
                continue
            }
            switch key {
            case .crop: if let crop = try arguments.parse(key.rawValue, .crop) { request.crop = .some(crop) }
            case .rotate: request.rotate = try arguments.parse(key.rawValue, .wholeNumber)
            case .beauty: request.beauty = try arguments.parse(key.rawValue, .wholeNumber)
            case .brightness: request.brightness = try arguments.parse(key.rawValue, .number)
            case .contrast: request.contrast = try arguments.parse(key.rawValue, .number)
            case .saturation: request.saturation = try arguments.parse(key.rawValue, .number)
            case .gamma: request.gamma = try arguments.parse(key.rawValue, .number)
            case .mirror, .flip: break
            }
        }
        let reply = try call(socket, PictureSignatures.Picture.self, request)
        print(json ? reply.json.jsonText : Format.picture(reply.value))
        return 0
    }
}

extension Format {
    /// `cam1: mirror · beauty 40`, with when a change took effect and what it changed.
    static func picture(_ reply: PictureReply) -> String {
        var text = "\(reply.camera): \(pictureSettings(reply.picture))"
        if let ms = reply.programMilliseconds {
            let changed = reply.changed.isEmpty ? "nothing changed"
                : "changed " + PictureSettings.Key.allCases.compactMap { key in reply.changed[key.rawValue].map { "\(key) \($0)" } }.joined(separator: ", ")
            text += "\n  from program time \(programTime(ms)): \(changed)"
        }
        return text
    }

    /// The settings that change the picture (`mirror · rotate 90 · beauty 40`), or that none do.
    static func pictureSettings(_ settings: PictureSettings) -> String {
        let plain = PictureSettings()
        let changed = PictureSettings.Key.allCases.filter { settings.text($0) != plain.text($0) }.map { key in
            key.isSwitch ? key.rawValue : "\(key) \(settings.text(key))"
        }
        return changed.isEmpty ? "as delivered (no picture settings)" : changed.joined(separator: " · ")
    }
}
