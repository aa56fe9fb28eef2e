import StudioCore

/// A stable camera name for a device identity (a V4L2 by-id name, a serial, a PipeWire node name).
public struct CameraPin: Sendable, Equatable, Codable {
    /// Matched against the device's identity: equal to it, or else contained in it or in the device's name.
    public var match: String
    public var name: CameraID
    /// This camera's ISO recording (`iso:` in the pin: true, false, passthrough or encode); nil follows
    /// `CameraSettings.iso`.
    public var iso: IsoRecording?
    /// This camera's ISO encoder (`encoder:` in the pin); nil follows `CameraSettings.isoEncoder`.
    public var encoder: EncoderChoice?
    /// Device cameras (V4L2): the size (`size: 1280x720`) and frame rate (`fps: 30`) to ask for instead
    /// of the mode nearest the program, and controls to set when the camera appears (`controls:`
    /// mapping of control name to value, in order). Nil/empty: the defaults.
    public var size: (width: Int, height: Int)?
    public var fps: Rational?
    public var controls: [(name: String, value: String)] = []
    /// Where the program goes when this camera is lost on air (`backup:` and `back:`); nil: the slate.
    public var backup: BackupRule?
    /// The switcher's picture settings for this camera (`picture:` mapping: crop, mirror, flip, rotate,
    /// brightness, contrast, saturation, gamma, beauty), applied when it appears. `studio picture`
    /// changes them live without writing the file.
    public var picture = PictureSettings()
    /// Its tally index (`index:` in the pin: TSL's index or address, 1 to 65534); nil: its place in the
    /// switcher's list of sources.
    public var tallyIndex: UInt16?

    public init(match: String, name: CameraID, iso: IsoRecording? = nil, encoder: EncoderChoice? = nil,
                size: (width: Int, height: Int)? = nil, fps: Rational? = nil, controls: [(name: String, value: String)] = [],
                picture: PictureSettings = PictureSettings()) {
        self.match = match
        self.name = name
        self.iso = iso
        self.encoder = encoder
        self.size = size
        self.fps = fps
        self.controls = controls
        self.picture = picture
    }

    public static func == (a: CameraPin, b: CameraPin) -> Bool {
        a.match == b.match && a.name == b.name && a.iso == b.iso && a.encoder == b.encoder
            && a.size?.width == b.size?.width && a.size?.height == b.size?.height && a.fps == b.fps
            && a.controls.map(\.name) == b.controls.map(\.name) && a.controls.map(\.value) == b.controls.map(\.value)
            && a.backup == b.backup && a.picture == b.picture && a.tallyIndex == b.tallyIndex
    }

    /// The pin without what a reload may change while the server runs (`StudioConfiguration.reloadKeys`).
    public var withoutLiveSettings: CameraPin {
        var pin = self
        pin.backup = nil
        pin.picture = PictureSettings()
        return pin
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case match, name, iso, encoder, size, fps, controls, picture, backup, back, tallyIndex = "index"
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with match and name, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        guard let match = try keys.parse(.match, .text()), !match.isEmpty else {
            throw decoder.failure("missing: the device identity to match (for example a /dev/v4l/by-id name)", at: CodingKeys.match)
        }
        guard let name = try keys.parse(.name, .text()) else {
            throw decoder.failure("missing: the camera name to give it (for example cam1)", at: CodingKeys.name)
        }
        _ = try decoder.check(at: CodingKeys.name) { () throws(ValueError) in try ValueSyntax.name.parse(name) }
        self.init(match: match, name: CameraID(name))
        iso = try keys.parse(.iso, .isoRecording)
        encoder = try keys.parse(.encoder, .encoder)
        size = try keys.parse(.size, .deviceSize).map { ($0.width, $0.height) }
        fps = try keys.parse(.fps, .deviceRate)
        controls = try keys.decodeIfPresent(ControlList.self, forKey: .controls)?.settings ?? []
        backup = try keys.backupRule(decoder, backup: .backup, back: .back)
        picture = try keys.decodeIfPresent(PictureEntry.self, forKey: .picture)?.settings ?? picture
        tallyIndex = try keys.parse(.tallyIndex, .tslIndex)
    }

    /// For the snapshot: absent settings are left out.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(match, forKey: .match)
        try keys.encode(name.name, forKey: .name)
        try keys.encodeIfPresent(iso, forKey: .iso)
        try keys.encodeIfPresent(self.encoder, forKey: .encoder)
        try keys.encodeIfPresent(size.map { "\($0.width)x\($0.height)" }, forKey: .size)
        try keys.encodeIfPresent(fps?.description, forKey: .fps)
        if !controls.isEmpty {
            try keys.encode(Dictionary(controls.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last }), forKey: .controls)
        }
        try keys.encodeIfPresent(backup?.backup, forKey: .backup)
        try keys.encodeIfPresent(backup?.back.rawValue, forKey: .back)
        if !picture.isIdentity { try keys.encode(picture, forKey: .picture) }
        try keys.encodeIfPresent(tallyIndex, forKey: .tallyIndex)
    }
}

/// A pin's `controls:` — control names to values, in file order.
private struct ControlList: Decodable {
    var settings: [(name: String, value: String)] = []

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping of control names to values (for example brightness: 140), got \($0)" }) {
            try decoder.container(keyedBy: NodeKey.self)
        }
        for key in keys.allKeys {
            if let value = try keys.parse(key, .text("a value")) { settings.append((key.stringValue, value)) }
        }
    }
}

/// `cameras.pins:` — matches and names are unique.
private struct PinList: Decodable {
    var pins: [CameraPin] = []

    init(from decoder: any Decoder) throws {
        var items = try decoder.unkeyedContainer()
        var matches = FirstGiven(), names = FirstGiven(), indices = FirstGiven()
        while !items.isAtEnd {
            let item = try items.superDecoder()
            let pin = try CameraPin(from: item)
            try matches.note(pin.match, at: CameraPin.CodingKeys.match, of: item) { "\"\(pin.match)\" is already pinned on line \($0)" }
            try names.note(pin.name.name, at: CameraPin.CodingKeys.name, of: item) { "the name \"\(pin.name.name)\" is already given on line \($0)" }
            if let index = pin.tallyIndex {
                try indices.note(String(index), at: CameraPin.CodingKeys.tallyIndex, of: item) { "the tally index \(index) is already given on line \($0)" }
            }
            pins.append(pin)
        }
    }
}

extension BackendName {
    /// `v4l2,pipewire` or `none` (as `--backends` takes it), names from `selectable` only; nil for
    /// anything else.
    public static func parseList(_ text: String) -> Set<BackendName>? {
        let words = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if words == ["none"] { return [] }
        var result = Set<BackendName>()
        for word in words {
            guard let backend = selectable.first(where: { $0.rawValue == word }) else { return nil }
            result.insert(backend)
        }
        return result.isEmpty ? nil : result
    }
}

/// `cameras.backends:` — `[v4l2, pipewire]`, `[]`, or one word (`v4l2,pipewire`, `none`).
private struct BackendList: Decodable {
    var backends: Set<BackendName> = []

    init(from decoder: any Decoder) throws {
        if (try? decoder.singleValueContainer().decode(String.self)) != nil {
            backends = try decoder.parse(.cameraBackends)
            return
        }
        var items = try decoder.unkeyedContainer()
        while !items.isAtEnd {
            backends.insert(try items.superDecoder().parse(.cameraBackend))
        }
    }
}

public struct CameraSettings: Sendable, Equatable, Codable {
    /// Which real camera families to look for (`cameras.backends`, names from `BackendName.selectable`):
    /// all of them by default. Test-pattern cameras come on top with `--demo` / `--cameras N`.
    public var backends: Set<BackendName> = Set(BackendName.selectable)
    /// How many test-pattern cameras the demo mode (`--demo`) starts.
    public var demoCount = 3
    public var pins: [CameraPin] = []
    /// ISO recordings: when recording (`record:`), each camera is also recorded on its own (`cameras.iso`,
    /// default true: passthrough for a camera that sends compressed frames, encoded for a raw one; a
    /// pin's `iso:` overrides it for that camera). See `IsoRecording`.
    public var iso = IsoRecording.auto
    /// x264 preset of the ISO encoders (`cameras.iso_preset`), default ultrafast: one software encoder
    /// per camera runs beside the program's.
    public var isoPreset = "ultrafast"
    /// The ISO encoders (`cameras.iso_encoder`): auto, vaapi or x264; nil follows `video.encoder`. A
    /// pin's `encoder:` overrides it for that camera.
    public var isoEncoder: EncoderChoice?
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case backends, demoCount = "demo", pins, iso, isoPreset = "iso_preset", isoEncoder = "iso_encoder"
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        if let list = try keys.decodeIfPresent(BackendList.self, forKey: .backends) { backends = list.backends }
        try keys.update(&demoCount, .demoCount, .cameraCount)
        if let list = try keys.decodeIfPresent(PinList.self, forKey: .pins) { pins = list.pins }
        try keys.update(&iso, .iso, .isoRecording)
        try keys.update(&isoPreset, .isoPreset, .x264Preset)
        isoEncoder = try keys.parse(.isoEncoder, .encoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(backends.sorted(), forKey: .backends)
        try keys.encode(demoCount, forKey: .demoCount)
        try keys.encode(pins, forKey: .pins)
        try keys.encode(iso, forKey: .iso)
        try keys.encode(isoPreset, forKey: .isoPreset)
        try keys.encodeIfPresent(isoEncoder, forKey: .isoEncoder)
    }

    /// The ISO encoder of the camera with this identity: its pin's, else `isoEncoder`, else the program's.
    public func isoEncoder(forIdentity identity: String, displayName: String = "", program: EncoderChoice) -> EncoderChoice {
        pin(forIdentity: identity, displayName: displayName)?.encoder ?? isoEncoder ?? program
    }

    /// The pin for a device: the last pin whose `match` equals its identity, else the last whose `match`
    /// occurs in its identity or display name (so `C920` pins `/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_...`).
    public func pin(forIdentity identity: String, displayName: String = "") -> CameraPin? {
        pins.last { $0.match == identity }
            ?? pins.last { identity.contains($0.match) || (!displayName.isEmpty && displayName.contains($0.match)) }
    }

    /// The ISO recording of the camera with this identity: its pin's `iso:` if given, else `iso`.
    public func isoRecording(forIdentity identity: String, displayName: String = "") -> IsoRecording {
        pin(forIdentity: identity, displayName: displayName)?.iso ?? iso
    }

    /// Whether the camera with this identity gets an ISO recording at all.
    public func isoEnabled(forIdentity identity: String, displayName: String = "") -> Bool {
        isoRecording(forIdentity: identity, displayName: displayName) != .off
    }
}

/// A camera's ISO recording (`iso:` in `cameras` and in a pin), declared here once: the value syntax,
/// the snapshot's JSON and the docs all come from it.
///
/// - `true` (`auto`): record it; the camera's own frames copied as they came (passthrough) when it sends
///   them compressed (an MJPEG webcam), else encoded (x264/VAAPI, `iso_encoder`).
/// - `passthrough`: record the frames as the camera sent them. A camera that sends raw frames cannot:
///   the server logs a warning naming the camera and encodes its ISO instead (not a config error: what
///   a camera sends is known only once it is found, and the show goes on).
/// - `encode`: always encode (decoded frames through the ISO encoder), even an MJPEG camera's.
/// - `false`: no ISO for it.
public enum IsoRecording: String, Sendable, Equatable, CaseIterable, Encodable {
    case off, auto, passthrough, encode

    /// The words the syntax takes for each value.
    static let spellings: [(words: [String], value: IsoRecording)] = [
        (["true", "yes", "on", "auto"], .auto), (["false", "no", "off"], .off),
        (["passthrough"], .passthrough), (["encode"], .encode),
    ]

    /// `true` and `false` stay booleans in the snapshot (as they were before the modes came).
    public func encode(to encoder: any Encoder) throws {
        var value = encoder.singleValueContainer()
        switch self {
        case .off: try value.encode(false)
        case .auto: try value.encode(true)
        case .passthrough, .encode: try value.encode(rawValue)
        }
    }
}

extension ValueSyntax where Value == IsoRecording {
    /// true/false (yes/no, on/off), passthrough or encode.
    public static var isoRecording: Self {
        Self("true or false, passthrough or encode") { (text: String) throws(ValueError) -> IsoRecording in
            guard let value = IsoRecording.spellings.first(where: { $0.words.contains(text.lowercased()) })?.value else {
                throw ValueError("expected true or false, passthrough (the camera's own frames, for cameras that send MJPEG) or encode, got \(quoted(text))")
            }
            return value
        }
    }
}
