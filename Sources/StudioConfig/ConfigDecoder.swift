import Foundation
import StudioCore

/// Turns the node tree into a `StudioConfiguration`, key by key. Unknown keys and wrong types or
/// values are errors with the line and key path. A key given with no value (`record:` or `~`) keeps
/// its default.
struct ConfigDecoder {
    let source: String

    private static let topKeys = ["program", "video", "audio", "outputs", "record", "database", "socket", "socket_group", "cameras"]
    private static let programKeys = ["size", "format", "fps"]
    private static let videoKeys = ["encoder", "preset", "bitrate", "keyframe_interval"]
    private static let audioKeys = ["source", "bitrate"]
    private static let outputKeys = ["url", "name"]
    private static let cameraKeys = ["backends", "demo", "pins", "iso", "iso_preset", "iso_encoder"]
    private static let pinKeys = ["match", "name", "iso", "encoder", "size", "fps", "controls"]

    func decode(_ root: ConfigNode) throws(ConfigError) -> StudioConfiguration {
        var config = StudioConfiguration()
        guard case .mapping(let entries) = root.value else {
            throw fail(root.line, nil, "the top level must be a mapping of keys (\(Self.topKeys.joined(separator: ", "))), got \(describe(root))")
        }
        for entry in entries {
            let path = entry.key
            switch entry.key {
            case "program": config.program = try program(entry)
            case "video": config.video = try video(entry)
            case "audio": config.audio = try audio(entry)
            case "outputs": config.outputs = try outputs(entry)
            case "record": config.recordDirectory = try pathValue(entry, keyPath: path)
            case "database": config.databasePath = try pathValue(entry, keyPath: path)
            case "socket":
                config.socketPath = try pathValue(entry, keyPath: path)
                if let socket = config.socketPath, !socket.hasPrefix("/") {
                    throw fail(entry.keyLine, path, "the control socket path must be absolute, got \(quoted(socket))")
                }
            case "socket_group":
                guard let text = try scalar(entry, keyPath: path, expected: "a group name") else { continue }
                guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0 == "/" || $0 == ":" }) else {
                    throw fail(entry.keyLine, path, "expected a group name, got \(quoted(text))")
                }
                config.socketGroup = text
            case "cameras": config.cameras = try cameras(entry)
            default: throw unknownKey(entry, parent: "", known: Self.topKeys)
            }
        }
        return config
    }

    // MARK: Sections

    private func program(_ section: ConfigEntry) throws(ConfigError) -> ProgramFormat {
        var size: (width: Int, height: Int)?
        var rate: Rational?
        var sizeEntry: ConfigEntry?
        var rateFromFormat: ConfigEntry?
        var rateEntry: ConfigEntry?
        for entry in try mapping(section, parent: "", known: Self.programKeys) {
            let path = "program." + entry.key
            guard let text = try scalar(entry, keyPath: path, expected: "a string") else { continue }
            switch entry.key {
            case "size":
                if let other = sizeEntry { throw conflict(entry, path, with: "program.\(other.key)") }
                guard let parsed = Self.parseSize(text) else {
                    throw fail(entry.keyLine, path, "expected WIDTHxHEIGHT like 1280x720 (even numbers, at most 7680x4320), got \(quoted(text))")
                }
                size = parsed
                sizeEntry = entry
            case "format":
                if let other = sizeEntry { throw conflict(entry, path, with: "program.\(other.key)") }
                if text.contains("@") {
                    guard let format = ProgramFormat(parsing: text) else {
                        throw fail(entry.keyLine, path, "expected WIDTHxHEIGHT@FPS like 1280x720@30 or 1920x1080@30000/1001, got \(quoted(text))")
                    }
                    if rateEntry != nil { throw conflict(entry, path, with: "program.fps") }
                    size = (format.width, format.height)
                    rate = format.frameRate
                    rateFromFormat = entry
                } else {
                    guard let parsed = Self.parseSize(text) else {
                        throw fail(entry.keyLine, path, "expected WIDTHxHEIGHT@FPS like 1280x720@30, got \(quoted(text))")
                    }
                    size = parsed
                }
                sizeEntry = entry
            case "fps":
                if rateFromFormat != nil { throw conflict(entry, path, with: "program.format") }
                guard let parsed = Rational(parsingRate: text), (1.0...240.0).contains(parsed.doubleValue) else {
                    throw fail(entry.keyLine, path, "expected a frame rate from 1 to 240 like 30, 29.97 or 30000/1001, got \(quoted(text))")
                }
                rate = parsed
                rateEntry = entry
            default:
                break
            }
        }
        let base = ProgramFormat.default
        return ProgramFormat(width: size?.width ?? base.width, height: size?.height ?? base.height,
                             frameRate: rate ?? base.frameRate)
    }

    private func video(_ section: ConfigEntry) throws(ConfigError) -> VideoSettings {
        var video = VideoSettings()
        for entry in try mapping(section, parent: "", known: Self.videoKeys) {
            let path = "video." + entry.key
            switch entry.key {
            case "encoder":
                if let choice = try encoderChoice(entry, keyPath: path) { video.encoder = choice }
            case "preset":
                guard let text = try scalar(entry, keyPath: path, expected: "a string") else { continue }
                guard VideoSettings.presets.contains(text) else {
                    throw fail(entry.keyLine, path, "expected an x264 preset (\(VideoSettings.presets.joined(separator: ", "))), got \(quoted(text))")
                }
                video.preset = text
            case "bitrate":
                if let rate = try bitRate(entry, keyPath: path, range: 100_000...100_000_000) { video.bitRate = rate }
            case "keyframe_interval":
                guard let text = try scalar(entry, keyPath: path, expected: "a number of seconds") else { continue }
                guard let seconds = Double(text), seconds.isFinite, (0.1...20).contains(seconds) else {
                    throw fail(entry.keyLine, path, "expected a number of seconds from 0.1 to 20, got \(quoted(text))")
                }
                video.keyframeIntervalSeconds = seconds
            default:
                break
            }
        }
        return video
    }

    private func audio(_ section: ConfigEntry) throws(ConfigError) -> AudioSettings {
        var audio = AudioSettings()
        for entry in try mapping(section, parent: "", known: Self.audioKeys) {
            let path = "audio." + entry.key
            switch entry.key {
            case "source":
                guard let text = try scalar(entry, keyPath: path, expected: "a string") else { continue }
                switch text {
                case "tone": audio.source = .tone
                case "silence": audio.source = .silence
                // The PipeWire daemon's default microphone.
                case "pipewire": audio.source = .pipewire(node: "")
                default:
                    let node = text.hasPrefix("pipewire:") ? String(text.dropFirst("pipewire:".count)) : ""
                    guard !node.trimmingCharacters(in: .whitespaces).isEmpty else {
                        throw fail(entry.keyLine, path, "expected tone, silence, pipewire (the default microphone) or pipewire:<node name>, got \(quoted(text))")
                    }
                    audio.source = .pipewire(node: node)
                }
            case "bitrate":
                if let rate = try bitRate(entry, keyPath: path, range: 16_000...512_000) { audio.bitRate = rate }
            default:
                break
            }
        }
        return audio
    }

    private func outputs(_ section: ConfigEntry) throws(ConfigError) -> [OutputTarget] {
        var targets: [OutputTarget] = []
        var nameLines: [String: Int] = [:]
        for (index, item) in try sequence(section, keyPath: "outputs").enumerated() {
            let path = "outputs[\(index)]"
            var url: String?
            var name: String?
            var nameLine = item.line
            switch item.value {
            case .scalar(let text, _) where !item.isNull:
                url = text  // shorthand: `- rtmp://host/app/key`
            case .mapping(let entries):
                for entry in entries {
                    let keyPath = path + "." + entry.key
                    guard Self.outputKeys.contains(entry.key) else { throw unknownKey(entry, parent: path, known: Self.outputKeys) }
                    guard let text = try scalar(entry, keyPath: keyPath, expected: "a string", masked: entry.key == "url") else { continue }
                    if entry.key == "url" { url = text } else { name = text; nameLine = entry.keyLine }
                }
            default:
                throw fail(item.line, path, "expected a mapping with url (and optional name), got \(describe(item, masked: true))")
            }
            guard let url else { throw fail(item.line, path + ".url", "missing: every output needs an rtmp:// or rtmps:// URL") }
            try validateOutputURL(url, line: item.line, keyPath: path + ".url")
            let finalName = name ?? "output\(index + 1)"
            guard Self.isValidName(finalName) else {
                throw fail(nameLine, path + ".name", "expected a name of letters, digits, '-' or '_' (at most 32), got \(quoted(finalName))")
            }
            if let first = nameLines[finalName] {
                throw fail(nameLine, path + ".name", "the name \"\(finalName)\" is already used by the output on line \(first)")
            }
            nameLines[finalName] = nameLine
            targets.append(OutputTarget(name: finalName, url: url))
        }
        return targets
    }

    private func cameras(_ section: ConfigEntry) throws(ConfigError) -> CameraSettings {
        var cameras = CameraSettings()
        for entry in try mapping(section, parent: "", known: Self.cameraKeys) {
            let path = "cameras." + entry.key
            switch entry.key {
            case "demo":
                guard let text = try scalar(entry, keyPath: path, expected: "a number") else { continue }
                guard let count = Int(text), (0...16).contains(count) else {
                    throw fail(entry.keyLine, path, "expected a number of cameras from 0 to 16, got \(quoted(text))")
                }
                cameras.demoCount = count
            case "backends":
                cameras.backends = try backends(entry, keyPath: path)
            case "pins":
                cameras.pins = try pins(entry)
            case "iso":
                if let value = try boolean(entry, keyPath: path) { cameras.iso = value }
            case "iso_encoder":
                cameras.isoEncoder = try encoderChoice(entry, keyPath: path)
            case "iso_preset":
                guard let text = try scalar(entry, keyPath: path, expected: "a string") else { continue }
                guard VideoSettings.presets.contains(text) else {
                    throw fail(entry.keyLine, path, "expected an x264 preset (\(VideoSettings.presets.joined(separator: ", "))), got \(quoted(text))")
                }
                cameras.isoPreset = text
            default:
                break
            }
        }
        return cameras
    }

    /// auto, vaapi or x264; nil when the value is null (keep the default).
    private func encoderChoice(_ entry: ConfigEntry, keyPath: String) throws(ConfigError) -> EncoderChoice? {
        guard let text = try scalar(entry, keyPath: keyPath, expected: "a string") else { return nil }
        guard let choice = EncoderChoice(rawValue: text) else {
            throw fail(entry.keyLine, keyPath, "expected one of \(EncoderChoice.allCases.map(\.rawValue).joined(separator: ", ")), got \(quoted(text))")
        }
        return choice
    }

    /// `[v4l2, pipewire]`, `[]`, or one word (`none` for none).
    private func backends(_ entry: ConfigEntry, keyPath: String) throws(ConfigError) -> Set<CameraBackendChoice> {
        let known = CameraBackendChoice.allCases.map(\.rawValue).joined(separator: ", ")
        if case .scalar(let text, _) = entry.value.value {
            guard let list = CameraBackendChoice.parseList(text) else {
                throw fail(entry.keyLine, keyPath, "expected a list of camera backends (\(known)) or none, got \(quoted(text))")
            }
            return list
        }
        var result = Set<CameraBackendChoice>()
        for (index, item) in try sequence(entry, keyPath: keyPath).enumerated() {
            guard case .scalar(let text, _) = item.value, let backend = CameraBackendChoice(rawValue: text.lowercased()) else {
                throw fail(item.line, "\(keyPath)[\(index)]", "expected a camera backend (\(known)), got \(describe(item))")
            }
            result.insert(backend)
        }
        return result
    }

    private func pins(_ section: ConfigEntry) throws(ConfigError) -> [CameraPin] {
        var pins: [CameraPin] = []
        var matchLines: [String: Int] = [:]
        var nameLines: [String: Int] = [:]
        for (index, item) in try sequence(section, keyPath: "cameras.pins").enumerated() {
            let path = "cameras.pins[\(index)]"
            guard case .mapping(let entries) = item.value else {
                throw fail(item.line, path, "expected a mapping with match and name, got \(describe(item))")
            }
            var match: (text: String, line: Int)?
            var name: (text: String, line: Int)?
            var iso: Bool?
            var encoder: EncoderChoice?
            var size: (width: Int, height: Int)?
            var fps: Rational?
            var controls: [(name: String, value: String)] = []
            for entry in entries {
                let keyPath = path + "." + entry.key
                guard Self.pinKeys.contains(entry.key) else { throw unknownKey(entry, parent: path, known: Self.pinKeys) }
                if entry.key == "size" {
                    guard let text = try scalar(entry, keyPath: keyPath, expected: "WIDTHxHEIGHT") else { continue }
                    let parts = text.lowercased().split(separator: "x")
                    guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (16...7680).contains(w), (16...4320).contains(h) else {
                        throw fail(entry.keyLine, keyPath, "expected WIDTHxHEIGHT (for example 1280x720), got \(quoted(text))")
                    }
                    size = (w, h)
                    continue
                }
                if entry.key == "fps" {
                    guard let text = try scalar(entry, keyPath: keyPath, expected: "a frame rate") else { continue }
                    guard let rate = Rational(parsingRate: text) else {
                        throw fail(entry.keyLine, keyPath, "expected a frame rate (30, 29.97, 30000/1001), got \(quoted(text))")
                    }
                    fps = rate
                    continue
                }
                if entry.key == "controls" {
                    if entry.value.isNull { continue }
                    guard case .mapping(let settings) = entry.value.value else {
                        throw fail(entry.keyLine, keyPath, "expected a mapping of control names to values (for example brightness: 140), got \(describe(entry.value))")
                    }
                    for setting in settings {
                        guard let value = try scalar(setting, keyPath: keyPath + "." + setting.key, expected: "a value") else { continue }
                        controls.append((setting.key, value))
                    }
                    continue
                }
                if entry.key == "iso" {
                    iso = try boolean(entry, keyPath: keyPath)
                    continue
                }
                if entry.key == "encoder" {
                    encoder = try encoderChoice(entry, keyPath: keyPath)
                    continue
                }
                guard let text = try scalar(entry, keyPath: keyPath, expected: "a string") else { continue }
                if entry.key == "match" { match = (text, entry.keyLine) } else { name = (text, entry.keyLine) }
            }
            guard let match, !match.text.isEmpty else {
                throw fail(item.line, path + ".match", "missing: the device identity to match (for example a /dev/v4l/by-id name)")
            }
            guard let name else { throw fail(item.line, path + ".name", "missing: the camera name to give it (for example cam1)") }
            guard Self.isValidName(name.text) else {
                throw fail(name.line, path + ".name", "expected a name of letters, digits, '-' or '_' (at most 32), got \(quoted(name.text))")
            }
            if let first = matchLines[match.text] {
                throw fail(match.line, path + ".match", "\"\(match.text)\" is already pinned on line \(first)")
            }
            if let first = nameLines[name.text] {
                throw fail(name.line, path + ".name", "the name \"\(name.text)\" is already given on line \(first)")
            }
            matchLines[match.text] = match.line
            nameLines[name.text] = name.line
            pins.append(CameraPin(match: match.text, name: CameraID(name.text), iso: iso, encoder: encoder,
                                  size: size, fps: fps, controls: controls))
        }
        return pins
    }

    // MARK: Typed values

    /// The entries of a mapping section (a null section is empty), each key checked against `known`.
    private func mapping(_ section: ConfigEntry, parent: String, known: [String]) throws(ConfigError) -> [ConfigEntry] {
        let path = joinKeyPath(parent, section.key)
        if section.value.isNull { return [] }
        guard case .mapping(let entries) = section.value.value else {
            throw fail(section.keyLine, path, "expected a mapping (with keys \(known.joined(separator: ", "))), got \(describe(section.value))")
        }
        for entry in entries where !known.contains(entry.key) {
            throw unknownKey(entry, parent: path, known: known)
        }
        return entries
    }

    /// The items of a sequence (a null value is empty).
    private func sequence(_ section: ConfigEntry, keyPath: String) throws(ConfigError) -> [ConfigNode] {
        if section.value.isNull { return [] }
        guard case .sequence(let items) = section.value.value else {
            throw fail(section.keyLine, keyPath, "expected a sequence (a list of `- ...` items), got \(describe(section.value))")
        }
        return items
    }

    /// A scalar's text; nil when the value is null (keep the default).
    private func scalar(_ entry: ConfigEntry, keyPath: String, expected: String, masked: Bool = false) throws(ConfigError) -> String? {
        if entry.value.isNull { return nil }
        guard case .scalar(let text, _) = entry.value.value else {
            throw fail(entry.keyLine, keyPath, "expected \(expected), got \(describe(entry.value, masked: masked))")
        }
        return text
    }

    /// true/false (also yes/no, on/off); nil when the value is null (keep the default).
    private func boolean(_ entry: ConfigEntry, keyPath: String) throws(ConfigError) -> Bool? {
        guard let text = try scalar(entry, keyPath: keyPath, expected: "true or false") else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail(entry.keyLine, keyPath, "expected true or false, got \(quoted(text))")
        }
    }

    private func pathValue(_ entry: ConfigEntry, keyPath: String) throws(ConfigError) -> String? {
        guard let text = try scalar(entry, keyPath: keyPath, expected: "a path") else { return nil }
        guard !text.isEmpty else { throw fail(entry.keyLine, keyPath, "expected a path, got an empty string") }
        return text
    }

    private func bitRate(_ entry: ConfigEntry, keyPath: String, range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let text = try scalar(entry, keyPath: keyPath, expected: "a bit rate") else { return nil }
        guard let rate = BitRate.parse(text) else {
            throw fail(entry.keyLine, keyPath, "expected a bit rate like 4500k, 4.5M or 4500000, got \(quoted(text))")
        }
        guard range.contains(rate) else {
            throw fail(entry.keyLine, keyPath, "\(BitRate.describe(rate)) bit/s is outside the range \(BitRate.describe(range.lowerBound)) to \(BitRate.describe(range.upperBound))")
        }
        return rate
    }

    private func validateOutputURL(_ url: String, line: Int, keyPath: String) throws(ConfigError) {
        let lower = url.lowercased()
        let scheme = ["rtmp://", "rtmps://"].first { lower.hasPrefix($0) }
        guard let scheme else {
            throw fail(line, keyPath, "expected an rtmp:// or rtmps:// URL, got \"\(SecretMasking.maskURL(url))\"")
        }
        let rest = url.dropFirst(scheme.count)
        let host = rest.prefix { $0 != "/" }
        guard !host.isEmpty, rest.count > host.count + 1, !url.contains(where: { $0.isWhitespace }) else {
            // Not echoed: in a malformed URL the key may sit where masking does not look.
            throw fail(line, keyPath, "expected \(scheme)host/app/stream-key (a host, then a path; no spaces)")
        }
    }

    // MARK: Helpers

    static func parseSize(_ text: String) -> (width: Int, height: Int)? {
        guard let format = ProgramFormat(parsing: text + "@30") else { return nil }
        return (format.width, format.height)
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 32
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// How a value is shown in a message. Anything that looks like a URL is masked, wherever it was
    /// written, so a stream key never reaches a log through a config error.
    private func describe(_ node: ConfigNode, masked: Bool = false) -> String {
        if case .scalar(let text, _) = node.value, !node.isNull, masked || text.contains("://") {
            return "\"\(SecretMasking.maskURL(text))\""
        }
        return node.kindDescription
    }

    /// A value quoted for a message, masked when it looks like a URL.
    private func quoted(_ text: String) -> String {
        let shown = text.contains("://") ? SecretMasking.maskURL(text) : text
        return "\"" + (shown.count > 60 ? String(shown.prefix(60)) + "..." : shown) + "\""
    }

    private func fail(_ line: Int?, _ keyPath: String?, _ message: String) -> ConfigError {
        ConfigError(source: source, line: line, keyPath: keyPath, message: message)
    }

    private func conflict(_ entry: ConfigEntry, _ keyPath: String, with other: String) -> ConfigError {
        fail(entry.keyLine, keyPath, "conflicts with \(other); give the size and rate once (size + fps, or format)")
    }

    private func unknownKey(_ entry: ConfigEntry, parent: String, known: [String]) -> ConfigError {
        var message = "unknown key"
        if let suggestion = known.min(by: { editDistance($0, entry.key) < editDistance($1, entry.key) }),
           editDistance(suggestion, entry.key) <= 2 {
            message += " (did you mean \(suggestion)?)"
        }
        message += "; known keys here: \(known.joined(separator: ", "))"
        return fail(entry.keyLine, joinKeyPath(parent, entry.key), message)
    }
}

/// Levenshtein distance, for "did you mean" on misspelt keys.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
