import CV4L2
import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Where capture stages write log lines. Must not block (the server's log queues the line).
public typealias CaptureLog = @Sendable (String) -> Void

/// Writes a line to stderr: the default log for tools and tests.
public let standardErrorCaptureLog: CaptureLog = { line in
    let text = "studio: " + line + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// A V4L2 camera (a USB webcam, a capture card, vivid). Captures with mmap streaming on its own thread
/// (`cap.<id>`), waiting in poll with a timeout of a few frame periods, and publishes only the newest
/// frame: raw formats as they are (copied out of the driver's buffer), MJPEG decoded to I420.
///
/// A camera that starts in an MJPEG mode (what USB webcams send at 720p and 1080p) works as an MJPEG
/// PipeWire camera does (`CompressedCapture`): the capture thread only hands each JPEG on, as it came,
/// to a passthrough ISO's tap (`compressedFrames`) and to its decoding thread (`dec.<id>`), which decodes
/// by `demand`: every frame at full size while the camera is seen or recorded by an encoded ISO, a
/// reduced picture for the tiles or a backup rule, nothing while nobody needs it; the newest JPEG is
/// kept and decoded at once when the demand rises. Its frames count, and it is live, as JPEGs arrive.
/// A mode change mid-show (`setMode`) keeps it in JPEG where the device offers the new size and rate
/// so (`V4L2ModeChoice.forChange`); switched to a mode offered raw only, it publishes raw frames and
/// offers no more JPEGs (`isSendingCompressed` false: a passthrough ISO encodes its raw frames into its
/// next file until JPEGs come again, and the change's reply says so);
/// a camera that starts raw decodes any MJPEG mode it is switched to inline, every frame.
///
/// The session ends by itself when the device goes away: any DQBUF error is taken as a possible loss
/// and confirmed with QUERYCAP; then the state is `.lost` and the `onLost` handler runs (on the
/// capture thread, after the device is closed).
public final class V4L2Camera: AdjustableCamera {
    public let id: CameraID
    public var backend: BackendName { .v4l2 }
    public let identity: String
    public let displayName: String
    /// The device node (`/dev/video0`).
    public let path: String
    public let frames = LatestValue<VideoFrame>()
    /// Every mode the device offers that studio can capture.
    public let modes: [V4L2Mode]
    public var offeredModes: [CameraMode] { modes.map(\.cameraMode) }
    /// MJPEG when the camera starts in an MJPEG mode: every JPEG is offered, as it came, to
    /// `compressedFrames` (see `CompressedFrameSource`).
    public let compressedCodec: CompressedCodec?
    public let compressedFrames = CompressedFrameTap()
    /// False once a camera that started in MJPEG is switched to a mode the device offers raw only.
    public var isSendingCompressed: Bool { compressedCodec != nil && core.snapshot.choice.fourcc.isCompressed }
    /// Who needs the picture at full size (a camera that starts in an MJPEG mode decodes less while nobody does).
    public let demand: CameraDemand?
    private let core: Core

    /// Opens `path` to check it is a video capture node and to read its modes, then closes it; the
    /// mode nearest `program` is chosen (see `V4L2ModeChoice`). Capture starts with `start()`. `clock`
    /// stamps the frames' capture time and times the reduced MJPEG decodes (tests pass a `ManualClock`).
    /// - Throws: `CaptureError` when the node cannot be opened, is not a capture node, or offers
    ///   nothing studio can take.
    public init(id: CameraID, path: String, identity: String? = nil, displayName: String? = nil,
                program: ProgramFormat = .default, clock: any Clock = .monotonic,
                log: @escaping CaptureLog = standardErrorCaptureLog) throws(CaptureError) {
        let capabilities: V4L2Capabilities
        let modes: [V4L2Mode]
        do {
            let device = try V4L2Device(path: path)
            capabilities = try device.capabilities()
            guard capabilities.isVideoCapture else {
                throw CaptureError(camera: id, message: "\(path) (\(capabilities.card)) is not a video capture node")
            }
            modes = try device.offeredModes(near: program)
        } catch let error as CaptureError {
            throw error
        } catch {
            throw CaptureError(camera: id, message: "\(path): \(error)")
        }
        guard let choice = V4L2ModeChoice.best(modes, for: program) else {
            throw CaptureError(camera: id, message: "\(path) (\(capabilities.card)) offers no format studio can capture")
        }
        self.id = id
        self.path = path
        self.identity = identity ?? V4L2Discovery.identity(path: path, capabilities: capabilities)
        self.displayName = displayName ?? capabilities.card
        self.modes = modes
        let compressed = choice.fourcc.isCompressed ? CompressedCapture(tap: compressedFrames, clock: clock) : nil
        compressedCodec = compressed?.codec
        demand = compressed?.demand
        core = Core(id: id, path: path, modes: modes, program: program, choice: choice, frames: frames, compressed: compressed,
                    clock: clock, log: log)
    }

    deinit { core.requestStop() }

    public var state: CameraState { core.snapshot.state }
    public var currentFormat: CameraFormat? { core.snapshot.currentFormat }
    public var statistics: CaptureStatistics { core.snapshot.statistics }
    /// What the running session negotiated (device format, size, bytes per line, rate).
    public var streamFormat: V4L2StreamFormat? { core.snapshot.stream }
    /// The mode that will be asked for at the next start.
    public var wantedMode: V4L2ModeChoice.Choice { core.snapshot.choice }
    /// Why the session ended, when it ended by itself.
    public var lossReason: String? { core.snapshot.lossReason }

    public func start() { core.start() }
    public func stop() { core.stop() }

    /// Runs on the capture thread when the device is lost (the session has ended and the device is
    /// closed). It must not call `stop()` synchronously (that joins the calling thread): signal instead.
    public func setLossHandler(_ handler: @escaping @Sendable (V4L2Camera) -> Void) {
        core.setLossHandler { [weak self] in if let self { handler(self) } }
    }

    /// Test hook: the next `count` VIDIOC_STREAMON calls fail with `errno` (as a full USB bus gives ENOSPC).
    public func injectStreamOnFailures(errno: Int32, count: Int) { core.injectStreamOnFailures(errno: errno, count: count) }

    // MARK: AdjustableCamera

    public func controls() throws(CaptureError) -> [CameraControl] {
        do {
            let device = try V4L2Device(path: path)
            return try device.controls()
        } catch {
            throw CaptureError(camera: id, message: "cannot read controls: \(error)")
        }
    }

    @discardableResult
    public func setControl(_ name: String, to value: String) throws(CaptureError) -> CameraControl {
        let device: V4L2Device
        do { device = try V4L2Device(path: path) } catch { throw CaptureError(camera: id, message: "\(error)") }
        do { return try device.setControl(name, to: value) } catch { throw CaptureError(camera: id, message: error.message) }
    }

    @discardableResult
    public func setMode(_ request: CameraModeRequest) throws(CaptureError) -> CameraFormat {
        try core.changeMode(request)
    }

    public func focus(at point: FocusPoint) throws(CaptureError) -> FocusOutcome {
        let device: V4L2Device
        do { device = try V4L2Device(path: path) } catch { throw CaptureError(camera: id, message: "\(error)") }
        do { return try device.focus(at: point) } catch { throw CaptureError(camera: id, message: error.message) }
    }
}

extension V4L2Camera {
    struct Snapshot: Sendable {
        var state = CameraState.stopped
        var currentFormat: CameraFormat?
        var statistics = CaptureStatistics()
        var stream: V4L2StreamFormat?
        var choice: V4L2ModeChoice.Choice
        var lossReason: String?
        var pendingChange: ModeChange?
        var streamOnFaults: (errno: Int32, count: Int) = (0, 0)
    }

    /// A mode change handed to the capture thread; the caller waits for its result.
    ///
    /// `@unchecked Sendable`: `result` is guarded by `lock`; `request` is immutable.
    final class ModeChange: @unchecked Sendable {
        let choice: V4L2ModeChoice.Choice
        private let lock = ConditionLock()
        private var result: Result<CameraFormat, CaptureError>?
        init(choice: V4L2ModeChoice.Choice) { self.choice = choice }

        func finish(_ outcome: Result<CameraFormat, CaptureError>) {
            lock.withLock { if result == nil { result = outcome } }
            lock.broadcast()
        }

        func wait(timeoutSeconds: Double) -> Result<CameraFormat, CaptureError>? {
            // Real time: the deadline of a condition wait (CLOCK_MONOTONIC) on the capture thread's answer.
            let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
            return lock.withLock {
                while result == nil { if !lock.wait(untilMonotonic: deadline) { break } }
                return result
            }
        }
    }
}

extension V4L2Camera: CompressedFrameSource {}
