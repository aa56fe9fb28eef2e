import StudioCore
import Control

// `picture` as the server and the CLI both know it: its name, arguments, reply and route. The server's
// `PictureCommands.Picture` implements it; `studio picture` calls it.

/// `camera`, then any of the settings (`PictureSettings.Key`'s names) and `reset`. A setting left out
/// keeps its value; with none (and no `reset`) the command only shows the camera's settings.
public struct PictureArguments: Codable, Sendable {
    public var camera: String
    /// Start from the defaults instead of the camera's current settings.
    public var reset = false
    /// The crop given: `.some(nil)` for `"none"` (or null), which removes the crop.
    public var crop: RelativeRect??
    public var mirror: Bool?
    public var flip: Bool?
    public var rotate: Int?
    public var brightness: Double?
    public var contrast: Double?
    public var saturation: Double?
    public var gamma: Double?
    public var beauty: Int?

    public init(camera: String, reset: Bool = false) {
        self.camera = camera
        self.reset = reset
    }

    private enum OtherKeys: String, CodingKey { case camera, reset }

    public init(from decoder: any Decoder) throws {
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

    /// The same keys `init(from:)` reads: the crop as `[x, y, width, height]` or `"none"`.
    public func encode(to encoder: any Encoder) throws {
        var other = encoder.container(keyedBy: OtherKeys.self)
        try other.encode(camera, forKey: .camera)
        if reset { try other.encode(true, forKey: .reset) }
        var keys = encoder.container(keyedBy: PictureSettings.Key.self)
        switch crop {
        case .some(.some(let rect)): try keys.encode([rect.x, rect.y, rect.width, rect.height], forKey: .crop)
        case .some(.none): try keys.encode("none", forKey: .crop)
        case .none: break
        }
        try keys.encodeIfPresent(mirror, forKey: .mirror)
        try keys.encodeIfPresent(flip, forKey: .flip)
        try keys.encodeIfPresent(rotate, forKey: .rotate)
        try keys.encodeIfPresent(brightness, forKey: .brightness)
        try keys.encodeIfPresent(contrast, forKey: .contrast)
        try keys.encodeIfPresent(saturation, forKey: .saturation)
        try keys.encodeIfPresent(gamma, forKey: .gamma)
        try keys.encodeIfPresent(beauty, forKey: .beauty)
    }

    /// Whether the request changes anything (else it only asks for the current settings).
    public var changes: Bool {
        reset || crop != nil || mirror != nil || flip != nil || rotate != nil || brightness != nil || contrast != nil
            || saturation != nil || gamma != nil || beauty != nil
    }

    /// `current` (the defaults after `reset`) with the given settings.
    public func applied(to current: PictureSettings) -> PictureSettings {
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

public enum PictureSignatures {
    public enum Picture: CommandSignature {
        public typealias Arguments = PictureArguments
        public typealias Reply = PictureReply
        public static let name = "picture"
        public static let summary = "sets (or, with only camera, shows) a camera's picture: crop, mirror, flip, rotate, colour, beauty"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/picture/{camera}")
    }
}
