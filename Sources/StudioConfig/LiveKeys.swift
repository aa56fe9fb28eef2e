/// The config's keys as `studio reload` (and SIGHUP) sees them, each declared once: its name, whether
/// a running server takes a new value (`live`) or only a restart does, and how two configurations are
/// compared on it. Every top-level key of `StudioConfiguration` is covered (a test checks it). Making
/// one more key live is one entry here and one line in the server's `applyLive`.
public struct ConfigKey: Sendable {
    /// As the file spells it: `program.format`, `cameras.pins[].backup`.
    public let name: String
    public let isLive: Bool
    private let same: @Sendable (StudioConfiguration, StudioConfiguration) -> Bool

    static func live<T: Equatable & Sendable>(_ name: String, _ value: @escaping @Sendable (StudioConfiguration) -> T) -> ConfigKey {
        ConfigKey(name: name, isLive: true) { value($0) == value($1) }
    }

    static func fixed<T: Equatable & Sendable>(_ name: String, _ value: @escaping @Sendable (StudioConfiguration) -> T) -> ConfigKey {
        ConfigKey(name: name, isLive: false) { value($0) == value($1) }
    }

    /// Whether `a` and `b` differ on this key.
    public func differs(_ a: StudioConfiguration, _ b: StudioConfiguration) -> Bool { !same(a, b) }
}

extension StudioConfiguration {
    public static let reloadKeys: [ConfigKey] = [
        .fixed("program.format") { $0.program },
        .fixed("video") { $0.video },
        .fixed("audio.source") { $0.audio.source },
        .fixed("audio.bitrate") { $0.audio.bitRate },
        .fixed("audio.inputs") { $0.audio.inputs.map { [$0.match ?? "", $0.name] } },
        .live("audio.inputs[].settings") { $0.audio.inputs.map(\.settings) },
        .live("audio.master") { $0.audio.master },
        .fixed("outputs") { $0.outputs },
        .fixed("record") { $0.recordDirectory },
        .fixed("database") { $0.databasePath },
        .fixed("socket") { $0.socketPath },
        .fixed("socket_group") { $0.socketGroup },
        .fixed("cameras.backends") { $0.cameras.backends },
        .fixed("cameras.demo") { $0.cameras.demoCount },
        .fixed("cameras.iso") { $0.cameras.iso },
        .fixed("cameras.iso_preset") { $0.cameras.isoPreset },
        .fixed("cameras.iso_encoder") { $0.cameras.isoEncoder },
        .fixed("cameras.pins") { $0.cameras.pins.map(\.withoutLiveSettings) },
        .live("cameras.pins[].backup") { $0.cameras.pins.map(\.backup) },
        .live("cameras.pins[].picture") { $0.cameras.pins.map(\.picture) },
        .live("scenes") { $0.scenes },
        .live("overlays") { $0.overlays },
        .live("transition") { $0.transition },
        .fixed("http.enabled") { $0.http.enabled },
        .fixed("http.listen") { $0.http.listen },
        .fixed("http.token") { $0.http.token },
        .fixed("http.tls_cert") { $0.http.tls?.certificate },
        .fixed("http.tls_key") { $0.http.tls?.key },
        .fixed("network.pull") { $0.network.pulls },
        .fixed("network.rtmp") { $0.network.rtmp },
        .fixed("network.srt") { $0.network.srt },
        .fixed("tally") { $0.tally },
        .fixed("osc") { $0.osc },
        .fixed("players") { $0.players },
        .fixed("node") { $0.node },
    ]

    /// What differs from `self` in `new`: the live keys (a reload applies them) and the others (a
    /// reload refuses them), each in `reloadKeys` order.
    public func changes(to new: StudioConfiguration) -> (live: [String], fixed: [String]) {
        let changed = Self.reloadKeys.filter { $0.differs(self, new) }
        return (changed.filter(\.isLive).map(\.name), changed.filter { !$0.isLive }.map(\.name))
    }
}
