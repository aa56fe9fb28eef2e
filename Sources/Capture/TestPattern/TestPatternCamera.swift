import Synchronization
import FrameDrawing
import StudioCore
import StudioSystem

/// A synthetic camera: colour bars, an ident block in the camera's own colour, a moving box, the
/// camera's name and a running timecode (see `identRegion` and the other regions for the layout).
///
/// Runs on its own thread (`cap.<id>`), paced by absolute deadlines on its own `FrameGrid`; frames
/// come from a `FramePool`, so steady state allocates nothing. `pause()`/`resume()` simulate a camera
/// that stops delivering and comes back.
public final class TestPatternCamera: Camera {
    /// 1280x720@30 I420: the program's default format, so the program passes it through unscaled.
    public static let defaultFormat = CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30))

    public let id: CameraID
    public var backend: BackendName { .testPattern }
    public let identity: String
    public let displayName: String
    public let frames = LatestValue<VideoFrame>()
    /// The format this camera renders (also reported by `currentFormat` once it runs).
    public let format: CameraFormat
    private let core: Core

    /// - Parameters:
    ///   - clock: paces the frames and stamps their capture time (tests pass a `ManualClock`).
    ///   - stampsCaptureTime: draw each frame's capture time into it as a `CaptureStamp` bar code (for
    ///     measuring latency at a receiver).
    ///   - wallTime: a capture time (of `clock`) on the wall clock in µs, for the sync strip
    ///     (`syncRegion`); nil: the real wall clock (`WallClock.system`). Tests with a `ManualClock` give theirs.
    ///   - noise: camera-like sensor noise of this amplitude on every frame (`SensorNoise`, 0: none), the
    ///     same sequence for the same camera name every run (`renderFrames` makes the same pictures).
    /// - Throws: `CaptureError` unless the format is I420 or NV12 with an even size of at least 16x16 and
    ///   a frame rate between 1 and 240.
    public init(id: CameraID, format: CameraFormat = TestPatternCamera.defaultFormat, identity: String? = nil,
                displayName: String? = nil, clock: any Clock = .monotonic, stampsCaptureTime: Bool = false,
                noise: Int = 0, wallTime: (@Sendable (UInt64) -> Int64)? = nil) throws(CaptureError) {
        guard format.pixelFormat == .i420 || format.pixelFormat == .nv12 else {
            throw CaptureError(camera: id, message: "test pattern renders i420 or nv12, not \(format.pixelFormat.rawValue)")
        }
        guard format.width >= 16, format.height >= 16, format.width % 2 == 0, format.height % 2 == 0,
              format.width <= 7680, format.height <= 4320 else {
            throw CaptureError(camera: id, message: "test pattern size \(format.width)x\(format.height) must be even, 16x16...7680x4320")
        }
        guard format.frameRate.numerator > 0, format.frameRate.denominator > 0,
              (1.0...240.0).contains(format.frameRate.doubleValue) else {
            throw CaptureError(camera: id, message: "test pattern frame rate \(format.frameRate) must be 1...240")
        }
        self.id = id
        self.format = format
        self.identity = identity ?? "test-pattern:\(id.name)"
        self.displayName = displayName ?? "Test pattern \(id.name)"
        core = Core(id: id, format: format, frames: frames, clock: clock, stampsCaptureTime: stampsCaptureTime, noise: noise, wallTime: wallTime)
    }

    deinit { core.requestStop() }

    public var state: CameraState { core.snapshot.state }
    public var currentFormat: CameraFormat? { core.snapshot.currentFormat }
    public var statistics: CaptureStatistics { core.snapshot.statistics }

    public func start() { core.start() }
    public func stop() { core.stop() }

    /// Test hook: stop publishing frames (the thread keeps its clock) until `resume()`. State becomes `.lost`.
    public func pause() { core.setPaused(true) }
    /// Test hook: publish frames again from the next tick on.
    public func resume() { core.setPaused(false) }
    public var isPaused: Bool { core.snapshot.paused }
}

extension TestPatternCamera {
    struct Snapshot: Sendable {
        var state = CameraState.stopped
        var currentFormat: CameraFormat?
        var statistics = CaptureStatistics()
        var paused = false
    }

    /// The state the capture thread shares with the camera object. Held by the thread, so the camera
    /// object can go away (its deinit asks the thread to stop).
    final class Core: Sendable {
        let id: CameraID
        let format: CameraFormat
        let frames: LatestValue<VideoFrame>
        let clock: any Clock
        let stampsCaptureTime: Bool
        let noise: Int
        let wallTime: (@Sendable (UInt64) -> Int64)?
        private let shared = Mutex(Snapshot())
        private let worker = WorkerThread()

        init(id: CameraID, format: CameraFormat, frames: LatestValue<VideoFrame>, clock: any Clock, stampsCaptureTime: Bool, noise: Int,
             wallTime: (@Sendable (UInt64) -> Int64)?) {
            self.wallTime = wallTime
            self.id = id
            self.noise = noise
            self.stampsCaptureTime = stampsCaptureTime
            self.format = format
            self.frames = frames
            self.clock = clock
        }

        var snapshot: Snapshot { shared.withLock { $0 } }

        func setPaused(_ paused: Bool) {
            shared.withLock {
                $0.paused = paused
                if paused, $0.state == .live || $0.state == .starting { $0.state = .lost }
            }
        }

        func start() {
            worker.start(name: "cap.\(id.name)", prepare: {
                shared.withLock { $0.state = $0.paused ? .lost : .starting }
            }) { [self] in run() }
        }

        func requestStop() { worker.requestStop() }

        func stop() {
            worker.stop()
            shared.withLock { $0.state = .stopped }
        }

        private var stopping: Bool { worker.isStopRequested }

        private func run() {
            let picture = wallTime.map { TestPatternPicture(camera: id, format: format, stampsCaptureTime: stampsCaptureTime, wallTime: $0) }
                ?? TestPatternPicture(camera: id, format: format, stampsCaptureTime: stampsCaptureTime)
            var noisy = TestPatternCamera.NoisyFrames(camera: id, format: format, amplitude: noise)
            let grid = FrameGrid(origin: clock.now(), rate: format.frameRate)
            var tick: Int64 = 0
            while !stopping {
                guard clock.sleep(until: grid.time(ofFrame: tick), unless: { stopping }) else { break }
                let now = clock.now()
                // Too late for one or more ticks: skip them (counted as dropped), keep the grid.
                let due = grid.frame(at: now)
                let missed = due > tick ? due - tick : 0
                tick += missed
                if shared.withLock({ $0.paused }) {
                    tick += 1
                    continue
                }
                let frame = noisy.apply(to: picture.render(tick: tick, captureTime: now))
                // Statistics first, so whoever sees the frame also sees it counted.
                shared.withLock {
                    $0.statistics.framesCaptured += 1
                    $0.statistics.framesDropped += UInt64(missed)
                    $0.statistics.lastFrameTime = now
                    $0.currentFormat = format
                    if !$0.paused { $0.state = .live }
                }
                frames.publish(frame)
                tick += 1
            }
        }
    }
}

/// A "discovery" that yields `count` test-pattern cameras named `cam1`...`camN` at once, plus hooks to
/// simulate unplugging and replugging one.
public final class TestPatternDiscovery: CameraDiscovery {
    public let cameras: [TestPatternCamera]
    private let callbacks = Mutex<(added: @Sendable (any Camera) -> Void, removed: @Sendable (any Camera) -> Void)?>(nil)

    /// - Throws: `CaptureError` for a format `TestPatternCamera` cannot render.
    public init(count: Int, format: CameraFormat = TestPatternCamera.defaultFormat) throws(CaptureError) {
        var cameras: [TestPatternCamera] = []
        for index in 0..<max(0, count) {
            cameras.append(try TestPatternCamera(id: CameraID("cam\(index + 1)"), format: format))
        }
        self.cameras = cameras
    }

    /// `count` cameras with identities `test-pattern:1`...`test-pattern:N`, named by `namer` (so a demo
    /// camera keeps its name across restarts like a real one, and pins apply).
    public init(count: Int, format: CameraFormat = TestPatternCamera.defaultFormat, noise: Int = 0, namer: CameraNamer) throws {
        var cameras: [TestPatternCamera] = []
        for index in stride(from: 1, through: count, by: 1) {
            let identity = CameraIdentity(backend: .testPattern, identity: "test-pattern:\(index)", displayName: "Test pattern \(index)")
            cameras.append(try TestPatternCamera(id: try namer(identity), format: format, identity: identity.identity,
                                                 displayName: identity.displayName, noise: noise))
        }
        self.cameras = cameras
    }

    public func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
        callbacks.withLock { $0 = (onAdded, onRemoved) }
        for camera in cameras { onAdded(camera) }
    }

    public func stop() { callbacks.withLock { $0 = nil } }

    /// Test hook: stops the camera and reports it removed (on the caller's thread).
    public func simulateUnplug(_ id: CameraID) {
        guard let camera = cameras.first(where: { $0.id == id }), let removed = callbacks.withLock({ $0?.removed }) else { return }
        camera.stop()
        removed(camera)
    }

    /// Test hook: reports the camera added again (not started, like any discovered camera).
    public func simulatePlug(_ id: CameraID) {
        guard let camera = cameras.first(where: { $0.id == id }), let added = callbacks.withLock({ $0?.added }) else { return }
        added(camera)
    }
}

extension TestPatternCamera {
    /// Renders frames `0..<count` of camera `id`'s pattern without pacing, for tools that need the very
    /// same pictures offline (the benchmark feeds them to the ffmpeg CLI so both sides encode equal content).
    public static func renderFrames(of id: CameraID, format: CameraFormat = TestPatternCamera.defaultFormat, count: Int, noise: Int = 0,
                                    _ body: (VideoFrame) throws -> Void) rethrows {
        let picture = TestPatternPicture(camera: id, format: format)
        var noisy = NoisyFrames(camera: id, format: format, amplitude: noise)
        for tick in 0..<Int64(count) { try body(noisy.apply(to: picture.render(tick: tick, captureTime: 0))) }
    }

    /// A camera's sensor noise (`SensorNoise`), seeded by its name (FNV-1a), with its own frame pool:
    /// the noisy copies never land in the pattern's pool, whose frames are redrawn only where they move.
    struct NoisyFrames {
        var noise: SensorNoise?
        let pool: FramePool?

        init(camera: CameraID, format: CameraFormat, amplitude: Int) {
            guard amplitude > 0 else {
                noise = nil
                pool = nil
                return
            }
            var seed: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in camera.name.utf8 { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3 }
            noise = SensorNoise(amplitude: amplitude, seed: seed)
            pool = FramePool(capacity: VideoFrame.byteCount(format: format.pixelFormat, width: format.width, height: format.height), limit: 4)
        }

        mutating func apply(to frame: VideoFrame) -> VideoFrame {
            guard noise != nil else { return frame }
            return noise!.noisy(frame, pool: pool)
        }
    }
}
