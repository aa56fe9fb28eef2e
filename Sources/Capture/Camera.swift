import StudioCore
import StudioSystem

/// What a camera actually delivers.
public struct CameraFormat: Sendable, Codable, Hashable, CustomStringConvertible {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int
    public var frameRate: Rational

    public init(pixelFormat: PixelFormat, width: Int, height: Int, frameRate: Rational) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    public var description: String { "\(pixelFormat.rawValue) \(width)x\(height)@\(frameRate)" }
}

/// Counters of one camera since it was started. A snapshot, cheap to take from any thread.
public struct CaptureStatistics: Sendable, Codable, Hashable {
    /// Frames published to `Camera.frames`.
    public var framesCaptured: UInt64
    /// Frames the camera should have delivered but did not (capture thread too late, device skipped).
    public var framesDropped: UInt64
    /// Frames the device delivered damaged (short or flagged buffers); not published.
    public var framesCorrupt: UInt64
    /// CLOCK_MONOTONIC nanoseconds of the newest published frame, nil before the first.
    public var lastFrameTime: UInt64?
    /// A compressed camera's decodes (see `CameraDemand`): frames decoded at full size, at a reduced size
    /// (for the tiles only), and not decoded at all (nobody needed them). Zero for raw cameras. A player
    /// counts the pictures it decoded (ahead of showing them, or on the way to a cued time) as full.
    public var framesDecodedFull: UInt64 = 0
    public var framesDecodedReduced: UInt64 = 0
    public var framesNotDecoded: UInt64 = 0

    public init(framesCaptured: UInt64 = 0, framesDropped: UInt64 = 0, framesCorrupt: UInt64 = 0, lastFrameTime: UInt64? = nil) {
        self.framesCaptured = framesCaptured
        self.framesDropped = framesDropped
        self.framesCorrupt = framesCorrupt
        self.lastFrameTime = lastFrameTime
    }
}

/// One video source. Each camera captures on its own named thread and publishes only its newest frame
/// to `frames`; the program clock takes whatever is newest on its tick, so a slow or stuck camera never
/// holds up the program.
public protocol Camera: AnyObject, Sendable {
    /// Operator-facing name (`cam1`...).
    var id: CameraID { get }
    /// The name of the backend it comes from (`SourceBackend.name`).
    var backend: BackendName { get }
    /// Stable identity of the device that survives replugging and restarts (for example a USB serial or
    /// bus path), used to give a returning camera its old `id`.
    var identity: String { get }
    /// Human-readable description (device product name).
    var displayName: String { get }
    /// The newest frame only.
    var frames: LatestValue<VideoFrame> { get }
    var state: CameraState { get }
    /// Pixel format, size and rate actually delivered; nil until known.
    var currentFormat: CameraFormat? { get }
    var statistics: CaptureStatistics { get }
    /// Starts the capture thread. Calling it while running does nothing.
    func start()
    /// Stops capturing and joins the capture thread. The last frame stays in `frames`.
    func stop()
    /// What the device offers (formats, sizes, rates), for `studio cameras --json`. Empty when the
    /// backend cannot tell (the default).
    var offeredModes: [CameraMode] { get }
    /// Who needs the picture at full size, for a camera that can decode less when nobody does (an MJPEG
    /// one, a network one); nil for a camera that always delivers full frames (the default).
    var demand: CameraDemand? { get }
    /// Its pictures ahead, each with the time it is shown from (a player's), for the program to take the
    /// one of its tick; nil (the default): the program takes the newest of `frames`.
    var schedule: PictureSchedule? { get }
    /// The source's own sound, pushed with its capture times into a `TimedAudioInput` (a network
    /// stream's audio, a clip's, a test backend's tone): the program audio mixes it as an input named
    /// like the camera. Nil (the default) for a camera that brings none; a webcam's microphone is a
    /// PipeWire source of its own.
    var audio: (any ClockedAudioInput)? { get }
    /// A network source's connection, buffer and clock (`studio cameras`); nil (the default) for a
    /// camera on this PC.
    var network: NetworkSourceStatus? { get }
    /// A player's item, position and state (`studio cameras`); nil (the default) for any other camera.
    var player: PlayerStatus? { get }
    /// Whether it may wait for its source as long as it takes before its first picture (a network camera
    /// waiting for a phone's publisher or an SRT caller): until then it is starting, not lost, and no loss is written
    /// to the history; from its first picture on, silence is a loss as for any camera. False (the
    /// default): a camera on this PC that gives no picture is lost after the loss timeout.
    var waitsForItsSource: Bool { get }
    /// The thread that publishes its frames into `frames` (as `top -H` shows it; the server's topology
    /// names the camera's node so): `cap.camN` (the default, every backend on this PC), or a backend's own.
    var threadName: String { get }
}

extension Camera {
    public var offeredModes: [CameraMode] { [] }
    public var demand: CameraDemand? { nil }
    public var schedule: PictureSchedule? { nil }
    public var audio: (any ClockedAudioInput)? { nil }
    public var network: NetworkSourceStatus? { nil }
    public var player: PlayerStatus? { nil }
    public var waitsForItsSource: Bool { false }
    public var threadName: String { "cap.\(id.name)" }
}

/// One pixel format and size a device offers, with the frame rates it offers at that size.
public struct CameraMode: Sendable, Codable, Hashable, CustomStringConvertible {
    /// The device's own name of the format: a fourcc such as `YUYV`, `MJPG`, `NV12`, or a backend's name.
    public var format: String
    public var width: Int
    public var height: Int
    /// Offered rates, fastest first; empty when the device gives none (or a continuous range: see `rateRange`).
    public var frameRates: [Rational]
    /// Slowest and fastest rate, for devices that offer a continuous range instead of a list.
    public var rateRange: ClosedRange<Double>?

    public init(format: String, width: Int, height: Int, frameRates: [Rational] = [], rateRange: ClosedRange<Double>? = nil) {
        self.format = format
        self.width = width
        self.height = height
        self.frameRates = frameRates
        self.rateRange = rateRange
    }

    public var description: String {
        let rates = frameRates.isEmpty ? rateRange.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "?" : frameRates.map(\.description).joined(separator: ",")
        return "\(format) \(width)x\(height)@\(rates)"
    }
}

/// What a discovery knows of a device when it asks for its operator name.
public struct CameraIdentity: Sendable, Hashable {
    public var backend: BackendName
    /// Stable across replugging and restarts (see `Camera.identity`).
    public var identity: String
    public var displayName: String

    public init(backend: BackendName, identity: String, displayName: String) {
        self.backend = backend
        self.identity = identity
        self.displayName = displayName
    }
}

/// Gives a device its stable `camN` name. The server's namer keeps names in the event store (and
/// honours names pinned in the config), so a camera keeps its name across restarts and replugging.
/// Called on the discovery's thread; it may block briefly (a database round trip), never on the media path.
public typealias CameraNamer = @Sendable (CameraIdentity) throws -> CameraID

/// A source of the program's audio (the test tone, a microphone). It delivers interleaved float
/// chunks at the program's audio format on its own thread, timed from the program's origin: a chunk's
/// pts is `MediaTime(count: firstSample, rate: 48000)`, sample 0 being due at `origin`. The timeline
/// never has holes: a source that loses its device delivers silence on the clock until it returns.
public protocol AudioInput: AnyObject, Sendable {
    /// Starts delivering, sample 0 due at `origin` (monotonic nanoseconds).
    func start(origin: UInt64?)
    /// Stops and joins the source's thread.
    func stop()
}

/// Finds cameras and reports them coming and going (hot-plug).
///
/// A discovery hands out cameras not yet started: whoever receives `onAdded` decides whether to start
/// them. Backends that find devices by identity take the naming (identity -> `CameraID`, kept in the
/// event store) in their initialiser, so every camera they report already has its stable `id`.
public protocol CameraDiscovery: AnyObject, Sendable {
    /// Reports the cameras present now (before returning, on the caller's thread) and later arrivals and
    /// departures (on the discovery's own thread). `onRemoved` gets a camera already stopped.
    func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void)
    /// Stops watching. Cameras already reported are left as they are.
    func stop()
}

/// A camera or discovery that cannot be set up as asked.
public struct CaptureError: Error, Equatable, CustomStringConvertible {
    public var camera: CameraID?
    public var message: String
    public init(camera: CameraID?, message: String) {
        self.camera = camera
        self.message = message
    }
    public var description: String { camera.map { "\($0): \(message)" } ?? message }
}
