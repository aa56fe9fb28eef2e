import StudioCore
import StudioConfig
import Capture
import StudioSystem

/// What `studio serve` runs with: the config file's values with the command line's flags applied on
/// top (`configuration` is that effective result, and is what the session's snapshot records).
public struct ServerOptions: Sendable {
    public var configuration: StudioConfiguration
    /// Test-pattern cameras to run (`--demo`, `--cameras N`).
    public var testCameraCount = 0
    public var databasePath: String
    public var socketPath: String
    /// How long a camera may go without a frame before it counts as lost (slate on program, event).
    public var cameraLossTimeoutSeconds = 0.5
    /// Testing aid (`--inject-encoder-fault N`): the program encoder fails after N frames, to exercise
    /// the mid-show fallback to x264 on machines without a GPU.
    public var injectEncoderFaultAfterFrames: Int?
    /// Testing aid (`--inject-clock-offset MS`): a capture node's wall clock runs MS ms ahead (negative:
    /// behind) of the machine's, for its clock measurement and capture times; the machine's is untouched.
    public var injectClockOffsetMilliseconds = 0
    /// This server's wall clock (the machine's, shifted by `injectClockOffsetMilliseconds`).
    public var wallClock: WallClock { WallClock(shiftMilliseconds: injectClockOffsetMilliseconds) }
    /// Size of the test-pattern cameras (`--camera-size`); nil gives their default 1280x720.
    public var testCameraSize: (width: Int, height: Int)?
    /// Sensor noise amplitude on the test-pattern cameras (`--camera-noise`, 0: none).
    public var testCameraNoise = 0
    /// The config file it was started with (`--config`); nil: none, and `reload` says so.
    public var configPath: String?
    /// Reads the config file again and applies the same flags on top, as at start (`studio reload`, SIGHUP).
    public var rereadConfiguration: (@Sendable () throws -> StudioConfiguration)?

    public init(configuration: StudioConfiguration, databasePath: String, socketPath: String) {
        self.configuration = configuration
        self.databasePath = databasePath
        self.socketPath = socketPath
    }

    /// The source backends this server knows (`SourceBackends.standard`; a test adds its own).
    public var backends: [any SourceBackend] = SourceBackends.standard

    public var program: ProgramFormat { configuration.program }
}
