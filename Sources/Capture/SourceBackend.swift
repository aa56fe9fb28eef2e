import StudioCore

/// A family of sources (V4L2 devices, the desktop's PipeWire cameras, test patterns; next: network
/// streams, files), declared once in its own folder: its name, what it is, how it is turned on, how it
/// finds its cameras and what `studio doctor` checks for it. The server runs the backends of one table
/// (`SourceBackends.standard` in StudioServer); adding a backend is its folder plus one line there.
///
/// A backend hands the server cameras through its discovery (`CameraDiscovery`: found, gone, back),
/// named by the server's namer from the identity it reports, so names (`camN`, pins), events and the
/// history work the same for every backend. A source that brings its own sound gives it as
/// `Camera.audio`, a `TimedAudioInput` (Capture/Audio) it pushes into as PipeWire's microphones push
/// theirs; the server mixes it as an input named like the camera.
public protocol SourceBackend: Sendable {
    /// In `studio cameras`, events and the history (`cameras.backends` for a selectable one).
    var name: BackendName { get }
    /// One line: what the backend finds (docs/architecture.md's "Source backends" table).
    var summary: String { get }
    /// Turned on and off by `cameras.backends` / `--backends` (its name is then one of
    /// `BackendName.selectable`, on by default); false: always asked, and its own settings decide
    /// (`makeDiscovery` gives nil when they ask for nothing, as the test pattern does without `--demo`
    /// or `--cameras N`).
    var isSelectable: Bool { get }
    /// The discovery that finds this backend's cameras for a server with `context`, not started (the
    /// server attaches it); nil when there is nothing to look for.
    func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)?
    /// What `studio doctor` says about this backend on this machine (none by default).
    func doctorChecks(_ context: BackendDoctorContext) -> [DoctorCheck]
    /// How this backend finds microphones of their own (not a camera's sound: that is `Camera.audio`),
    /// not started; nil (the default) for a backend without any. `log` takes a line for the server's log.
    func makeMicrophoneDiscovery(log: @escaping @Sendable (String) -> Void) -> (any MicrophoneDiscovery)?
}

extension SourceBackend {
    public func doctorChecks(_ context: BackendDoctorContext) -> [DoctorCheck] { [] }
    public func makeMicrophoneDiscovery(log: @escaping @Sendable (String) -> Void) -> (any MicrophoneDiscovery)? { nil }
}

/// What a backend is given to find and name its cameras.
public struct BackendContext: Sendable {
    /// The program's format: device cameras pick the mode nearest to it.
    public var program: ProgramFormat
    /// Gives each device its stable name (`camN` or its pin's), kept in the event store.
    public var namer: CameraNamer
    /// A line for the server's log.
    public var log: @Sendable (String) -> Void
    /// Applied to a device camera before it starts and whenever it returns (a pin's size, fps and
    /// controls from the config).
    public var prepare: @Sendable (any AdjustableCamera) -> Void
    /// The backends running in this server (PipeWire leaves /dev/video devices to V4L2 when both run).
    public var enabled: Set<BackendName>
    /// The test-pattern cameras asked for (`--demo`, `--cameras N`, `--camera-size`, `--camera-noise`).
    public var testCameras: TestCameraRequest
    /// The cameras to pull from URLs (`network.pull`), the RTMP server's and the SRT listener's.
    public var networkPulls: [NetworkPull]
    /// The SRT listener of network cameras (`network.srt`), if any.
    public var srtListener: SRTListenerSpec?
    /// Writes an event to the history (a refused caller, say).
    public var emit: @Sendable (StudioEvent) -> Void
    /// How network cameras decode their video (VAAPI where the machine has it, else libavcodec's threads).
    public var networkDecoding: NetworkDecoding
    /// The media players (`players:`).
    public var players: [PlayerSpec]
    /// The program clock's origin, once the server has decided it (players tick half a frame before it).
    public var programOrigin: ProgramOrigin

    public init(program: ProgramFormat, namer: @escaping CameraNamer, log: @escaping @Sendable (String) -> Void,
                prepare: @escaping @Sendable (any AdjustableCamera) -> Void = { _ in }, enabled: Set<BackendName>,
                testCameras: TestCameraRequest = TestCameraRequest(), networkPulls: [NetworkPull] = [], srtListener: SRTListenerSpec? = nil,
                emit: @escaping @Sendable (StudioEvent) -> Void = { _ in }, networkDecoding: NetworkDecoding = NetworkDecoding(),
                players: [PlayerSpec] = [], programOrigin: ProgramOrigin = ProgramOrigin()) {
        self.players = players
        self.programOrigin = programOrigin
        self.networkPulls = networkPulls
        self.networkDecoding = networkDecoding
        self.srtListener = srtListener
        self.emit = emit
        self.program = program
        self.namer = namer
        self.log = log
        self.prepare = prepare
        self.enabled = enabled
        self.testCameras = testCameras
    }
}

/// What a backend's doctor checks are given.
public struct BackendDoctorContext: Sendable {
    public var program: ProgramFormat
    /// The environment `studio doctor` runs in (PIPEWIRE_REMOTE, XDG_RUNTIME_DIR).
    public var environment: [String: String]
    /// The config's network cameras, SRT listener and RTMP server (`network:`).
    public var networkPulls: [NetworkPull]
    public var srtListener: SRTListenerSpec?
    public var rtmpServer: String?

    public init(program: ProgramFormat, environment: [String: String], networkPulls: [NetworkPull] = [], srtListener: SRTListenerSpec? = nil,
                rtmpServer: String? = nil) {
        self.program = program
        self.environment = environment
        self.networkPulls = networkPulls
        self.srtListener = srtListener
        self.rtmpServer = rtmpServer
    }
}
