import StudioCore

/// The test-pattern cameras a server is asked for (`--demo`: `cameras.demo` of them; `--cameras N`),
/// their size (`--camera-size`) and sensor noise (`--camera-noise`).
public struct TestCameraRequest: Sendable {
    public var count: Int
    /// Nil: `TestPatternCamera.defaultFormat`'s 1280x720.
    public var size: (width: Int, height: Int)?
    public var noise: Int

    public init(count: Int = 0, size: (width: Int, height: Int)? = nil, noise: Int = 0) {
        self.count = count
        self.size = size
        self.noise = noise
    }
}

/// Moving, labelled synthetic cameras (the demo's and the tests'): not selectable, on when the flags
/// ask for some; named like devices (identity `test-pattern:N`), so pins apply.
public struct TestPatternBackend: SourceBackend {
    public init() {}
    public var name: BackendName { .testPattern }
    public var summary: String { "synthetic cameras: colour bars, a moving box, the name and a timecode (`--demo`, `--cameras N`)" }
    public var isSelectable: Bool { false }

    public func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        let request = context.testCameras
        guard request.count > 0 else { return nil }
        var format = TestPatternCamera.defaultFormat
        if let size = request.size { (format.width, format.height) = size }
        return try TestPatternDiscovery(count: request.count, format: format, noise: request.noise, namer: context.namer)
    }
}
