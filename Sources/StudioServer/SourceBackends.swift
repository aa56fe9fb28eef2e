import StudioCore
import Capture

/// The source backends a server knows, one line each: adding a backend is its folder (its
/// `SourceBackend`) plus its line here. Discoveries start in this order (the test pattern's cameras
/// are named first); `studio doctor` runs the backends' checks in this order. A selectable backend's
/// name must also be in `BackendName.selectable`, which the config validates against (a test keeps the
/// two equal); docs/architecture.md's "Source backends" table lists these (a test checks it too).
public enum SourceBackends {
    public static let standard: [any SourceBackend] = [
        TestPatternBackend(),
        V4L2Backend(),
        PipeWireBackend(),
    ]

    /// The backends of `table` that run with `configured` (`cameras.backends`, or `--backends`): the
    /// selectable ones it names, and every other one (whose own settings decide).
    public static func enabled(_ table: [any SourceBackend], configured: Set<BackendName>) -> [any SourceBackend] {
        table.filter { !$0.isSelectable || configured.contains($0.name) }
    }

}
