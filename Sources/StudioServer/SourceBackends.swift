import StudioCore
import StudioConfig
import Capture

/// The source backends a server knows, one line each: adding a backend is its folder (its
/// `SourceBackend`) plus its line here. `studio doctor` runs the backends' checks in this order;
/// discoveries start in `enabled`'s order. A selectable backend's
/// name must also be in `BackendName.selectable`, which the config validates against (a test keeps the
/// two equal); docs/architecture.md's "Source backends" table lists these (a test checks it too).
public enum SourceBackends {
    public static let standard: [any SourceBackend] = [
        TestPatternBackend(),
        V4L2Backend(),
        PipeWireBackend(),
        NetworkBackend(),
        PlayerBackend(),
    ]

    /// The microphone discoveries the program's audio takes for `source` (`audio.source`), not started:
    /// PipeWire's for `pipewire`, `pipewire:NODE` and `pipewire:all`; every backend's that finds
    /// microphones for `microphones`; none for `tone` and `silence`.
    public static func microphoneDiscoveries(_ table: [any SourceBackend], for source: AudioSource,
                                             log: @escaping @Sendable (String) -> Void) -> [any MicrophoneDiscovery] {
        let backends: [any SourceBackend]
        switch source {
        case .tone, .silence: backends = []
        case .pipewire, .pipewireAll: backends = table.filter { $0.name == .pipewire }
        case .microphones: backends = table
        }
        return backends.compactMap { $0.makeMicrophoneDiscovery(log: log) }
    }

    /// The backends of `table` that run with `configured` (`cameras.backends`, or `--backends`), in the
    /// order their discoveries start: every backend that is not selectable (its own settings decide),
    /// in table order, then the selectable ones `configured` names, by name. A first start names the
    /// cameras found at once in that order (`camN`), so it is the order the server had before the table:
    /// test patterns, then PipeWire, then V4L2.
    public static func enabled(_ table: [any SourceBackend], configured: Set<BackendName>) -> [any SourceBackend] {
        table.filter { !$0.isSelectable }
            + table.filter { $0.isSelectable && configured.contains($0.name) }.sorted { $0.name < $1.name }
    }
}
