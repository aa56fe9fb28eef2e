import Synchronization
import StudioCore
import StudioSystem

/// One source's frame clock (an ISO feed's): on its own thread it ticks on a `FrameGrid` (tick n due
/// at `origin + n / rate`, the program's origin, so every angle lines up with the program on one
/// timeline), takes the source's newest frame, converts it to I420 at the source's own size when the
/// source delivers another format, and submits it with the tick's timestamp. It never waits for what
/// it submits to (`submit` must not block: an encoding stage's bounded queue drops and counts); a
/// stale frame (the source stopped delivering) is not submitted, and ticks that pass while the
/// thread is late are skipped and counted.
public final class SourceFrameClock: Sendable {
    public struct Statistics: Sendable, Equatable {
        /// Frames handed to `submit`.
        public var framesSubmitted = 0
        /// Ticks that passed while the thread was late (a slow conversion, a starved machine).
        public var ticksMissed = 0
        /// Ticks without a fresh frame (none yet, older than `staleAfterSeconds`, or one `accepts` refused).
        public var ticksWithoutFrame = 0
        /// Frames that could not be converted to I420 (a pixel format libswscale cannot convert).
        public var framesUnusable = 0
        public init() {}
    }

    private let name: String
    /// The size every frame is scaled to (a capture node's sender); nil: each frame's own.
    private let size: (width: Int, height: Int)?
    private let staleNanoseconds: UInt64
    private let clock: any Clock
    private let frames: @Sendable () -> LatestValue<VideoFrame>
    private let accepts: (@Sendable (VideoFrame) -> Bool)?
    private let submit: @Sendable (VideoFrame, MediaTime) -> Void
    private let worker = WorkerThread()
    private let counters = Mutex(Statistics())

    /// - Parameters:
    ///   - name: the thread's name (`iso.camN`).
    ///   - frames: where the newest frame is, read on every tick (so the source can be replaced).
    ///   - accepts: whether a fresh frame may be taken (nil: any), asked before it is converted.
    ///   - submit: takes each frame and its timestamp, on the clock's thread. Must not block.
    ///   - size: scales every frame to this size (nil: each at its own).
    public init(name: String, staleAfterSeconds: Double, clock: any Clock = .monotonic, size: (width: Int, height: Int)? = nil,
                frames: @escaping @Sendable () -> LatestValue<VideoFrame>,
                accepts: (@Sendable (VideoFrame) -> Bool)? = nil,
                submit: @escaping @Sendable (VideoFrame, MediaTime) -> Void) {
        self.name = name
        self.size = size
        staleNanoseconds = UInt64(max(0, staleAfterSeconds) * 1e9)
        self.clock = clock
        self.frames = frames
        self.accepts = accepts
        self.submit = submit
    }

    public var statistics: Statistics { counters.withLock { $0 } }

    /// Starts ticking on `grid`; false (and nothing done) while it already runs.
    @discardableResult
    public func start(grid: FrameGrid) -> Bool {
        worker.start(name: name) { [self] in run(grid: grid) }
    }

    /// Stops ticking and joins the thread.
    public func stop() { worker.stop() }

    private func run(grid: FrameGrid) {
        var tick: Int64 = 0
        var scaler: FrameScaler?
        while !worker.isStopRequested {
            guard clock.sleep(until: grid.time(ofFrame: tick), unless: { worker.isStopRequested }) else { break }
            let now = clock.now()
            let latest = grid.frame(at: now)
            if latest > tick {
                counters.withLock { $0.ticksMissed += Int(latest - tick) }
                tick = latest
            }
            defer { tick += 1 }
            guard let frame = frames().latest().value,
                  now <= frame.arrivedAt || now - frame.arrivedAt <= staleNanoseconds, accepts?(frame) ?? true else {
                counters.withLock { $0.ticksWithoutFrame += 1 }
                continue
            }
            guard var picture = Self.i420(frame, size: size, sequence: UInt64(tick), scaler: &scaler) else {
                counters.withLock { $0.framesUnusable += 1 }
                continue
            }
            // Its way so far (the encoder and the output add theirs): the ISO's latency budget.
            picture.times = FrameTimes(capture: frame.captureTime, due: grid.time(ofFrame: tick), taken: now, composed: clock.now())
            counters.withLock { $0.framesSubmitted += 1 }
            submit(picture, grid.pts(ofFrame: tick))
        }
    }

    /// The frame as I420 at `size` (nil: its own): I420 of that size passes through, any other is
    /// converted (libswscale, the scaler kept while the size stays); nil when it cannot be.
    static func i420(_ frame: VideoFrame, size: (width: Int, height: Int)? = nil, sequence: UInt64, scaler: inout FrameScaler?) -> VideoFrame? {
        let (width, height) = size ?? (frame.width, frame.height)
        if frame.format == .i420, frame.width == width, frame.height == height { return frame }
        if scaler?.width != width || scaler?.height != height {
            scaler = FrameScaler(width: width, height: height, pool: FramePool(
                capacity: VideoFrame.byteCount(format: .i420, width: width, height: height), limit: 4))
        }
        return try? scaler?.convert(frame, sequence: sequence)
    }
}
