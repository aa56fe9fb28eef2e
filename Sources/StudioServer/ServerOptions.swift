import StudioCore

/// What `studio serve` runs with: the config file's values with the command line's flags on top.
public struct ServerOptions: Sendable {
    public enum AudioSource: String, Sendable { case tone, silence }

    public var program: ProgramFormat = .default
    public var testCameraCount = 0
    public var rtmpURLs: [String] = []
    public var recordDirectory: String?
    public var databasePath: String
    public var socketPath: String
    public var preset = "veryfast"
    public var videoBitRate = 4_500_000
    public var keyframeIntervalSeconds = 2.0
    public var audioBitRate = 128_000
    public var audio: AudioSource = .tone
    /// Stable names pinned in the config: camera identity -> name.
    public var pinnedNames: [String: CameraID] = [:]
    /// The config as JSON with stream keys masked, stored with the session.
    public var configSnapshot = "{}"
    /// How long a camera may go without a frame before it counts as lost (slate on program).
    public var cameraLossTimeoutSeconds = 0.5

    public init(databasePath: String, socketPath: String) {
        self.databasePath = databasePath
        self.socketPath = socketPath
    }
}
