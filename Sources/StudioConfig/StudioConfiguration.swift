import Foundation
import StudioCore

/// Everything `studio.yaml` can say. Every field has a default, so an absent or empty file gives a
/// working 1280x720@30 setup with test-pattern cameras and no outputs.
///
/// Each key is declared once, in the `CodingKeys` of its section: the decoder refuses keys that are
/// not there (with a "did you mean"), `init(from:)` reads each with its `ValueSyntax` (a missing or
/// null key keeps the default), and `encode(to:)` writes the same keys for the session's snapshot.
public struct StudioConfiguration: Sendable, Equatable, Codable {
    /// Program size and frame rate (`program.size` / `program.fps`, or `program.format`).
    public var program: ProgramFormat = .default
    public var video = VideoSettings()
    public var audio = AudioSettings()
    /// Where the program goes, each an RTMP(S) URL with its stream key. None by default.
    public var outputs: [OutputTarget] = []
    /// The most RTMP destinations one server pushes to (`outputs:` and `--rtmp` together).
    public static let maxOutputs = 16
    /// Directory for local recordings (`record:`); nil records nothing.
    public var recordDirectory: String?
    /// SQLite event store path (`database:`); nil lets the server choose its default.
    public var databasePath: String?
    /// Control socket path (`socket:`); nil lets `ControlSocketPath.resolve` choose.
    public var socketPath: String?
    /// A group whose members may use the control socket too (`socket_group:`); nil: owner only.
    public var socketGroup: String?
    public var cameras = CameraSettings()
    /// Composed scenes (`scenes:`), in the order declared.
    public var scenes: [SceneDescription] = []
    /// Overlays drawn over every scene (`overlays:`), bottom first.
    public var overlays: [OverlayDescription] = []
    /// What `studio auto` runs when it names no transition (`transition:`).
    public var transition = Self.defaultTransition
    public static let defaultTransition = TransitionSpec(kind: .mix, frames: 15)
    /// Every transition the file configures: `transition:` and the players' `end_transition:` (the
    /// stingers among them have their clips decoded at start and on reload).
    public var transitions: [TransitionSpec] { [transition] + players.compactMap(\.endTransition) }
    /// The operator's HTTP API (`http:`).
    public var http = HTTPSettings()
    /// Cameras that are not plugged into this PC (`network:`).
    public var network = NetworkSettings()
    /// Tally out to lights, displays and control surfaces (`tally:`).
    public var tally = TallySettings()
    /// OSC in and out (`osc:`).
    public var osc = OSCSettings()
    /// Media players (`players:`), each a camera named by its entry.
    public var players: [PlayerSpec] = []
    /// This server as a capture node sending its cameras to a switcher (`node:`); nil: not a node.
    public var node: NodeSettings?

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case program, video, audio, outputs
        case recordDirectory = "record", databasePath = "database", socketPath = "socket", socketGroup = "socket_group"
        case cameras, scenes, overlays, transition, http, network, tally, osc, players, node
    }

    public init(from decoder: any Decoder) throws {
        let known = CodingKeys.allCases.map(\.stringValue).joined(separator: ", ")
        let keys = try decoder.rewording({ "the top level must be a mapping of keys (\(known)), got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        if let section = try keys.decodeIfPresent(ProgramSection.self, forKey: .program) { program = section.format }
        try keys.update(&video, .video)
        try keys.update(&audio, .audio)
        if let list = try keys.decodeIfPresent(OutputList.self, forKey: .outputs) { outputs = list.targets }
        recordDirectory = try keys.parse(.recordDirectory, .path)
        databasePath = try keys.parse(.databasePath, .path)
        socketPath = try keys.parse(.socketPath, .socketPath)
        socketGroup = try keys.parse(.socketGroup, .groupName)
        try keys.update(&cameras, .cameras)
        try keys.update(&http, .http)
        try keys.update(&network, .network)
        node = try keys.decodeIfPresent(NodeSection.self, forKey: .node)?.settings
        if let section = try keys.decodeIfPresent(TallySection.self, forKey: .tally) { tally = section.settings }
        if let section = try keys.decodeIfPresent(OSCSection.self, forKey: .osc) { osc = section.settings }
        if let list = try keys.decodeIfPresent(PlayerList.self, forKey: .players) {
            players = list.players
            for (index, ms) in list.endTransitionMilliseconds.enumerated() {
                if let ms { players[index].endTransition?.frames = TransitionSpec.frames(milliseconds: ms, rate: program.frameRate) }
                if let problem = players[index].endTransition?.problem(rate: program.frameRate) {
                    let place: [any CodingKey] = [CodingKeys.players, NodeKey(intValue: index), PlayerSpec.CodingKeys.endTransition]
                    throw NodeDecodingError(decoder.codingPath + place, problem)
                }
            }
        }
        if let list = try keys.decodeIfPresent(SceneList.self, forKey: .scenes) { scenes = list.scenes }
        if let list = try keys.decodeIfPresent(OverlayList.self, forKey: .overlays) { overlays = list.overlays }
        if let section = try keys.decodeIfPresent(TransitionSection.self, forKey: .transition) {
            transition = section.spec
            if let ms = section.milliseconds { transition.frames = TransitionSpec.frames(milliseconds: ms, rate: program.frameRate) }
            if let problem = transition.problem(rate: program.frameRate) { throw decoder.failure(problem, at: CodingKeys.transition) }
        }
        try checkPulls(decoder)
        try checkPlayers(decoder)
        try checkScenes(decoder)
        try checkBackups(decoder)
    }

    /// Every backup by the name of the camera (pin) or scene it stands in for.
    public var backups: [String: BackupRule] {
        var rules: [String: BackupRule] = [:]
        for pin in cameras.pins { rules[pin.name.name] = pin.backup }
        for scene in scenes { rules[scene.name] = scene.backup }
        return rules
    }

    /// Backups do not lead back to where they started: a cycle is refused at the first of its entries.
    private func checkBackups(_ decoder: any Decoder) throws {
        var places: [(name: String, path: [any CodingKey])] = []
        for (index, pin) in cameras.pins.enumerated() where pin.backup != nil {
            places.append((pin.name.name, [CodingKeys.cameras, CameraSettings.CodingKeys.pins, NodeKey(intValue: index), CameraPin.CodingKeys.backup]))
        }
        for (index, scene) in scenes.enumerated() where scene.backup != nil {
            places.append((scene.name, [CodingKeys.scenes, NodeKey(intValue: index), SceneEntry.CodingKeys.backup]))
        }
        let rules = backups
        for place in places {
            var chain = [place.name]
            while let next = rules[chain[chain.count - 1]]?.backup {
                if next == place.name {
                    throw NodeDecodingError(decoder.codingPath + place.path,
                                            "backup cycle: \((chain + [next]).joined(separator: " -> ")); a backup must not lead back to the camera or scene it stands in for")
                }
                if chain.contains(next) { break }  // a cycle further on: reported at its own first entry
                chain.append(next)
            }
        }
    }

    /// Scenes against the rest: their names are not camera names (SceneNames.swift), none shows itself,
    /// and pixel layers fit the program.
    /// A pulled camera's name is its own: not `camN` (the names of cameras without a pin) nor a pin's.
    private func checkPulls(_ decoder: any Decoder) throws {
        for (index, pull) in network.cameras.enumerated() {
            let name = pull.name.name
            let place: [any CodingKey] = index < network.pulls.count
                ? [CodingKeys.network, NetworkSettings.CodingKeys.pulls, NodeKey(intValue: index), NetworkPull.CodingKeys.name]
                : index < network.pulls.count + (network.rtmp?.keys.count ?? 0)
                ? [CodingKeys.network, NetworkSettings.CodingKeys.rtmp, RTMPIngestSettings.CodingKeys.keys, NodeKey(pull.name.name)]
                : [CodingKeys.network, NetworkSettings.CodingKeys.srt, SRTSection.CodingKeys.callers]
            if Self.isAutomaticCameraName(name) {
                throw NodeDecodingError(decoder.codingPath + place, "\"\(name)\" is a name the server gives cameras without a pin (cam1, cam2...); a network camera needs its own")
            }
            if cameras.pins.contains(where: { $0.name.name == name }) {
                throw NodeDecodingError(decoder.codingPath + place, "\"\(name)\" is a pinned camera's name (cameras.pins); a network camera needs its own")
            }
        }
    }

    /// A player's name is its own: not `camN`, a pin's or a network camera's.
    private func checkPlayers(_ decoder: any Decoder) throws {
        for (index, player) in players.enumerated() {
            let name = player.name.name
            let place: [any CodingKey] = [CodingKeys.players, NodeKey(intValue: index), PlayerSpec.CodingKeys.name]
            if Self.isAutomaticCameraName(name) {
                throw NodeDecodingError(decoder.codingPath + place, "\"\(name)\" is a name the server gives cameras without a pin (cam1, cam2...); a player needs its own")
            }
            if cameras.pins.contains(where: { $0.name.name == name }) || network.cameras.contains(where: { $0.name.name == name }) {
                throw NodeDecodingError(decoder.codingPath + place, "\"\(name)\" is already a camera's name (cameras.pins or network); a player needs its own")
            }
        }
    }

    private func checkScenes(_ decoder: any Decoder) throws {
        for (index, scene) in scenes.enumerated() {
            let place: [any CodingKey] = [CodingKeys.scenes, NodeKey(intValue: index)]
            if let clash = cameraNameClash(scene.name) {
                throw NodeDecodingError(decoder.codingPath + place + [SceneEntry.CodingKeys.name], clash)
            }
            if let outside = outside(scene.layers) { throw NodeDecodingError(decoder.codingPath + place, outside) }
        }
        if let cycle = sceneCycle() {
            throw NodeDecodingError(decoder.codingPath + [CodingKeys.scenes, NodeKey(intValue: cycle.index)],
                                    "scene \(cycle.path): a scene cannot show itself, directly or through other scenes")
        }
        for (index, overlay) in overlays.enumerated() {
            if let outside = outside(overlay.layers) {
                throw NodeDecodingError(decoder.codingPath + [CodingKeys.overlays, NodeKey(intValue: index)], outside)
            }
        }
    }

    /// Why one of `layers` reaches outside the program; nil when they all fit.
    private func outside(_ layers: [LayerDescription]) -> String? {
        layers.lazy.compactMap { [program] in $0.rect.outside(width: program.width, height: program.height) }.first
    }

    /// The session's snapshot: optional paths are written as null, so every key but `socket_group`
    /// is always present; output URLs have their stream keys masked.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(ProgramSection(format: program), forKey: .program)
        try keys.encode(video, forKey: .video)
        try keys.encode(audio, forKey: .audio)
        try keys.encode(outputs, forKey: .outputs)
        try keys.encode(recordDirectory, forKey: .recordDirectory)
        try keys.encode(databasePath, forKey: .databasePath)
        try keys.encode(socketPath, forKey: .socketPath)
        try keys.encodeIfPresent(socketGroup, forKey: .socketGroup)
        try keys.encode(cameras, forKey: .cameras)
        try keys.encode(scenes.map(SceneEntry.init), forKey: .scenes)
        try keys.encode(overlays.map(OverlayEntry.init), forKey: .overlays)
        try keys.encode(TransitionSection(spec: transition), forKey: .transition)
        try keys.encode(http, forKey: .http)
        // Only when it says something: the snapshots of sessions without network cameras stay as they were.
        if network != NetworkSettings() { try keys.encode(network, forKey: .network) }
        try keys.encodeIfPresent(node, forKey: .node)
        if !tally.isEmpty { try keys.encode(tally, forKey: .tally) }
        if !osc.isEmpty { try keys.encode(osc, forKey: .osc) }
        if !players.isEmpty { try keys.encode(players, forKey: .players) }
    }

    /// The configuration as compact JSON with sorted keys, for the session's config snapshot in the
    /// event store. Keys follow the YAML file; output URLs have their stream keys masked.
    public func jsonSnapshot() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self), let text = String(data: data, encoding: .utf8) else {
            // Encoding plain strings and numbers cannot fail; keep a valid JSON value regardless.
            return "{}"
        }
        return text
    }
}

/// Bit rates as people write them: `4500000`, `4500k`, `4.5M` (k = 1000, M = 1,000,000).
/// `ValueSyntax.videoBitRate` and `.audioBitRate` add the allowed ranges.
public enum BitRate {
    /// The program's video bit rate, in the config (`video.bitrate`) and on the command line (`--bitrate`).
    public static let videoRange = 100_000...100_000_000
    /// The program's AAC bit rate (`audio.bitrate`).
    public static let audioRange = 16_000...512_000

    /// Bits per second, or nil for anything else (negative, zero, exponents, unknown suffixes).
    public static func parse(_ text: String) -> Int? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        var multiplier = 1.0
        switch number.last {
        case "k", "K": multiplier = 1_000; number = number.dropLast()
        case "m", "M": multiplier = 1_000_000; number = number.dropLast()
        default: break
        }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard !number.isEmpty, parts.count <= 2,
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let value = Double(number) else { return nil }
        let bits = (value * multiplier).rounded()
        guard bits >= 1, bits <= 10_000_000_000 else { return nil }
        return Int(bits)
    }

    /// `4500000` as `4500k`, `6000000` as `6M`, otherwise the plain number.
    public static func describe(_ bitsPerSecond: Int) -> String {
        if bitsPerSecond % 1_000_000 == 0 { return "\(bitsPerSecond / 1_000_000)M" }
        if bitsPerSecond % 1_000 == 0 { return "\(bitsPerSecond / 1_000)k" }
        return "\(bitsPerSecond)"
    }
}

// MARK: Loading

extension StudioConfiguration {
    /// Config files larger than this are refused (a config is a few hundred bytes).
    public static let maxFileBytes = 1 << 20

    /// Reads and decodes the file at `path`. A missing or unreadable file is an error naming it.
    /// Relative paths in it (images, fonts) are taken from the file's directory.
    public static func load(path: String) throws(ConfigError) -> StudioConfiguration {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return try parse(yaml: readFile(path), source: path, directory: (absolute as NSString).deletingLastPathComponent)
    }

    /// Like `load(path:)`, but a file that does not exist gives the defaults (for a default path that
    /// the operator may not have created). Other problems still throw.
    public static func loadIfPresent(path: String) throws(ConfigError) -> StudioConfiguration {
        // lstat, not fileExists: a dangling link or a loop of links is there, and reading it says what is wrong.
        var status = stat()
        guard lstat(path, &status) == 0 || errno != ENOENT else { return StudioConfiguration() }
        return try load(path: path)
    }

    /// Decodes YAML text. `source` names it in error messages (usually the file path); an error
    /// names the line and key path its coding path leads to.
    /// Relative paths in it (images, fonts) are resolved against `directory` (nil: the working directory).
    public static func parse(yaml: String, source: String, directory: String? = nil) throws(ConfigError) -> StudioConfiguration {
        guard let root = try ConfigNode.parse(yaml: yaml, source: source) else { return StudioConfiguration() }
        let lines = NodeLines(root: root, directory: directory)
        do {
            return try StudioConfiguration(from: NodeDecoder(node: root, codingPath: [], lines: lines))
        } catch let error as NodeDecodingError {
            throw ConfigError(source: source, line: lines.line(at: error.codingPath), keyPath: NodeLines.keyPath(error.codingPath),
                              message: error.message)
        } catch {
            throw ConfigError(source: source, message: "\(error)")
        }
    }

    /// The file's bytes through open(2)/read(2), so a failure is errno's (a loop of symbolic links, a
    /// directory, a permission) said in words, not a Foundation error code.
    private static func readFile(_ path: String) throws(ConfigError) -> String {
        func failure(_ code: Int32) -> ConfigError {
            let reason = switch code {
            case ENOENT, ENOTDIR: "no such file"
            case EACCES, EPERM: "permission denied"
            case EISDIR: "it is a directory"
            case ELOOP: "a loop of symbolic links (a link that leads back to itself)"
            default: String(cString: strerror(code)).lowercased()
            }
            return ConfigError(source: path, message: "cannot read the config file: \(reason)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(errno) }
        if status.st_mode & S_IFMT == S_IFDIR { throw failure(EISDIR) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while data.count <= maxFileBytes {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw failure(errno) }
            if count == 0 { break }
            data.append(contentsOf: chunk[..<count])
        }
        guard data.count <= maxFileBytes else {
            throw ConfigError(source: path, message: "the config file is larger than \(maxFileBytes) bytes")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(source: path, message: "the config file is not valid UTF-8 text")
        }
        return text
    }
}
