import Synchronization
import FrameDrawing
import StudioCore
import StudioSystem

/// The program feed: its own clock thread (`studio.program`) ticks at the program frame rate and on tick
/// `n` (due at `origin + n / fps`) delivers one frame with pts `MediaTime(count: n, rate: fps)`.
///
/// Each tick takes the NEWEST frame of the selected camera (late frames are never queued; a slower
/// camera's frame is repeated), converts it to the program format with libswscale if its size or pixel
/// format differ (an I420 frame of the program size is passed on as it is, same storage, no copy), and
/// hands it to `deliver` (the encoder's non-blocking submit). A camera whose newest frame is older than
/// the loss timeout shows a "CAMERA LOST" slate; with no camera selected a "NO CAMERA" slate. The rate
/// never changes. If the thread wakes too late for one or more ticks, their frame numbers are skipped
/// (counted in `lateTicks`) so pts stay on the clock grid.
public final class ProgramSwitcher: Sendable {
    public let format: ProgramFormat
    public let configuration: Configuration
    private let core: Core

    /// - Parameters:
    ///   - clock: the program clock's time source (tests pass a `ManualClock`; cameras feeding it must
    ///     stamp their frames on the same clock, for the loss timeout).
    ///   - deliver: called on the program thread with each frame and its pts; must not block.
    public init(format: ProgramFormat, configuration: Configuration = Configuration(), clock: any Clock = .monotonic,
                events: any EventSink, deliver: @escaping @Sendable (VideoFrame, MediaTime) -> Void) {
        self.format = format
        self.configuration = configuration
        core = Core(format: format, configuration: configuration, clock: clock, events: events, deliver: deliver)
    }

    public convenience init(format: ProgramFormat, events: any EventSink, deliver: @escaping @Sendable (VideoFrame, MediaTime) -> Void) {
        self.init(format: format, configuration: Configuration(), events: events, deliver: deliver)
    }

    deinit { core.requestStop() }

    /// CLOCK_MONOTONIC nanoseconds of frame 0 (set by `start`). Audio uses the same origin.
    public var origin: UInt64 { core.shared.withLock { $0.origin } }

    /// Starts the program clock; frame 0 is due at `origin` (default: now). Calling it while running does nothing.
    public func start(origin: UInt64? = nil) { core.start(origin: origin ?? core.clock.now()) }

    /// Stops the clock and joins its thread. Cuts still pending fail with `.stopped`.
    public func stop() { core.stop() }

    /// Makes a camera available for cuts. The first source added becomes the program source if none is
    /// selected (with a switch event on the frame it first shows). Adding an existing id replaces its
    /// frame slot (a replugged camera).
    public func addSource(_ id: CameraID, frames: LatestValue<VideoFrame>) { core.addSource(id, frames: frames) }

    /// Removes a camera. If it is on program it stays selected and shows "CAMERA LOST" until it is added
    /// again or the operator cuts elsewhere.
    public func removeSource(_ id: CameraID) { core.removeSource(id) }

    /// Marks a camera whose device went away: it stays a source (the operator may still cut to it), and
    /// whenever it is on program it shows "CAMERA LOST" from the next frame on, without waiting for the
    /// loss timeout. `addSource` with the same id (the device came back) clears it.
    public func markSourceLost(_ id: CameraID) { core.markSourceLost(id) }

    /// Cuts to `camera` on the very next program frame after this call. `completion` runs on the program
    /// thread right after that frame was delivered, with its pts; a `.switchProgram` event with the same
    /// `programTime` is emitted (unless `camera` was already on program). An unknown camera fails at once,
    /// on the caller's thread, listing the cameras that exist. Cuts requested within one frame interval
    /// go to air one per frame, in order.
    public func switchProgram(to camera: CameraID, completion: @escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) {
        core.switchProgram(to: camera, completion: completion)
    }

    public var status: SwitcherStatus { core.shared.withLock { $0.status } }
}

extension ProgramSwitcher {
    struct PendingSwitch: Sendable {
        var target: CameraID
        var completion: (@Sendable (Result<SwitchOutcome, SwitchError>) -> Void)?
        var reason: String?
    }

    struct Shared: Sendable {
        var sources: [CameraID: LatestValue<VideoFrame>] = [:]
        /// Sources whose device is gone (`markSourceLost`): a slate, not their last frame.
        var lost: Set<CameraID> = []
        var selected: CameraID?
        var pending: [PendingSwitch] = []
        var status = SwitcherStatus()
        var origin: UInt64 = 0
        var sortedSources: [CameraID] { sources.keys.sorted() }
    }

    /// Everything the program thread shares with the public object; held by the thread, so dropping the
    /// switcher stops the clock (its deinit asks the thread to stop).
    final class Core: Sendable {
        let format: ProgramFormat
        let configuration: Configuration
        let clock: any Clock
        let events: any EventSink
        let deliver: @Sendable (VideoFrame, MediaTime) -> Void
        let shared = Mutex(Shared())
        private let worker = WorkerThread()

        init(format: ProgramFormat, configuration: Configuration, clock: any Clock, events: any EventSink,
             deliver: @escaping @Sendable (VideoFrame, MediaTime) -> Void) {
            self.format = format
            self.configuration = configuration
            self.clock = clock
            self.events = events
            self.deliver = deliver
        }

        func addSource(_ id: CameraID, frames: LatestValue<VideoFrame>) {
            shared.withLock { s in
                s.sources[id] = frames
                s.lost.remove(id)
                s.status.sources = s.sortedSources
                if s.selected == nil, s.pending.isEmpty {
                    s.pending.append(PendingSwitch(target: id, completion: nil, reason: "first source"))
                }
            }
        }

        func removeSource(_ id: CameraID) {
            shared.withLock { s in
                s.sources[id] = nil
                s.lost.remove(id)
                s.status.sources = s.sortedSources
            }
        }

        func markSourceLost(_ id: CameraID) {
            shared.withLock { s in
                guard s.sources[id] != nil else { return }
                s.lost.insert(id)
            }
        }

        func switchProgram(to camera: CameraID, completion: @escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) {
            let unknown = shared.withLock { s -> SwitchError? in
                guard s.sources[camera] != nil else { return .unknownCamera(camera, available: s.sortedSources) }
                s.pending.append(PendingSwitch(target: camera, completion: completion, reason: nil))
                return nil
            }
            if let unknown { completion(.failure(unknown)) }
        }

        func start(origin: UInt64) {
            worker.start(name: configuration.threadName, prepare: {
                shared.withLock { s in
                    s.origin = origin
                    let sources = s.status.sources, selected = s.selected
                    s.status = SwitcherStatus()
                    s.status.sources = sources
                    s.status.programSource = selected
                    s.status.isRunning = true
                }
            }) { [self] in run(origin: origin) }
        }

        func requestStop() { worker.requestStop() }

        func stop() {
            worker.stop()
            let abandoned = shared.withLock { s -> [PendingSwitch] in
                s.status.isRunning = false
                defer { s.pending.removeAll() }
                return s.pending
            }
            for pending in abandoned { pending.completion?(.failure(.stopped(pending.target))) }
        }

        private var stopping: Bool { worker.isStopRequested }

        // MARK: The program thread

        private func run(origin: UInt64) {
            let grid = FrameGrid(origin: origin, rate: format.frameRate)
            let pool = FramePool(capacity: VideoFrame.byteCount(format: .i420, width: format.width, height: format.height), limit: 12)
            let scaler = FrameScaler(width: format.width, height: format.height, pool: pool)
            let slates = SlateRenderer(width: format.width, height: format.height, pool: pool)
            let lossTimeout = configuration.lossTimeoutNanoseconds(for: format)
            var meter = RateMeter(window: 2_000_000_000)
            var lostOnProgram: CameraID?
            var reportedErrors = Set<String>()
            var tick: Int64 = 0

            while !stopping {
                guard clock.sleep(until: grid.time(ofFrame: tick), unless: { stopping }) else { break }
                var now = clock.now()
                // Woke up after the following tick was due: skip to the newest due tick, keep the grid.
                let due = grid.frame(at: now)
                let late = due > tick ? due - tick : 0
                tick += late

                // Apply at most one cut per frame, and find what to show.
                var rejected: PendingSwitch?
                var applied: (command: PendingSwitch, previous: CameraID?)?
                let (selected, source, gone) = shared.withLock { s -> (CameraID?, LatestValue<VideoFrame>?, Bool) in
                    if !s.pending.isEmpty {
                        let command = s.pending.removeFirst()
                        if s.sources[command.target] != nil {
                            applied = (command, s.selected)
                            s.selected = command.target
                        } else {
                            rejected = command
                        }
                    }
                    return (s.selected, s.selected.flatMap { s.sources[$0] }, s.selected.map { s.lost.contains($0) } ?? false)
                }
                if let rejected {
                    let available = shared.withLock { $0.sortedSources }
                    rejected.completion?(.failure(.unknownCamera(rejected.target, available: available)))
                }

                let pts = grid.pts(ofFrame: tick)
                now = clock.now()
                var output: VideoFrame?
                var slate: [String]?
                var passedThrough = false
                if let selected {
                    if gone {
                        slate = ["CAMERA LOST", selected.name]
                    } else if let frame = source?.latest().value, frame.captureTime + lossTimeout >= now {
                        if frame.format == .i420, frame.width == format.width, frame.height == format.height {
                            output = frame
                            passedThrough = true
                        } else {
                            do {
                                output = try scaler.convert(frame, sequence: UInt64(tick))
                            } catch {
                                slate = ["CAMERA ERROR", selected.name]
                                let key = "\(selected.name) \(frame.format.rawValue) \(frame.width)x\(frame.height)"
                                if reportedErrors.insert(key).inserted {
                                    events.emit(StudioEvent(kind: .error, camera: selected, programTime: pts,
                                                            details: ["stage": "switcher", "error": error.description]))
                                }
                            }
                        }
                    } else if let source, source.latest().version == 0 {
                        // Never delivered a frame yet (just started or plugged in): not a loss.
                        slate = ["WAITING FOR", selected.name]
                    } else {
                        slate = ["CAMERA LOST", selected.name]
                    }
                } else {
                    slate = ["NO CAMERA"]
                }
                if let slate {
                    output = slates.render(lines: slate.map { $0.uppercased() }, programTime: pts, captureTime: now,
                                           sequence: UInt64(tick))
                }
                guard let output else { tick += 1; continue }  // not reached: either a picture or a slate

                deliver(output, pts)

                let delivered = clock.now()
                meter.record(delivered)
                let slateText: String? = slate.map { lines in
                    lines.count == 2 ? "\(lines[0]) \(lines[1])" : lines.joined(separator: " ")
                }
                shared.withLock { s in
                    s.status.programSource = selected
                    s.status.slate = slateText
                    s.status.framesDelivered += 1
                    s.status.frameNumber = tick
                    s.status.lateTicks += late
                    s.status.deliveredFPS = meter.rate
                    if slate != nil { s.status.slateFrames += 1 } else if passedThrough { s.status.passThroughFrames += 1 } else {
                        s.status.scaledFrames += 1
                    }
                }

                if let applied {
                    let outcome = SwitchOutcome(camera: applied.command.target, previous: applied.previous, programTime: pts, frameNumber: tick)
                    if applied.previous != applied.command.target {
                        var details = ["from": applied.previous?.name ?? "none"]
                        if let reason = applied.command.reason { details["reason"] = reason }
                        events.emit(StudioEvent(kind: .switchProgram, camera: outcome.camera, programTime: pts, details: details))
                    }
                    applied.command.completion?(.success(outcome))
                }

                if configuration.emitsLossEvents {
                    let lostNow = slate?.first == "CAMERA LOST" ? selected : nil
                    if let lostNow, lostNow != lostOnProgram {
                        events.emit(StudioEvent(kind: .cameraLost, camera: lostNow, programTime: pts,
                                                details: ["scope": "program", "timeout_ms": String(lossTimeout / 1_000_000)]))
                    } else if lostNow == nil, let previouslyLost = lostOnProgram, previouslyLost == selected, slate == nil {
                        events.emit(StudioEvent(kind: .cameraReturned, camera: previouslyLost, programTime: pts, details: ["scope": "program"]))
                    }
                    lostOnProgram = lostNow
                }
                tick += 1
            }
            shared.withLock { $0.status.isRunning = false }
        }

    }
}

/// Events per second over a sliding window of monotonic timestamps.
struct RateMeter {
    let window: UInt64
    private var times: [UInt64] = []
    private var head = 0

    init(window: UInt64) { self.window = window }

    mutating func record(_ time: UInt64) {
        times.append(time)
        while head < times.count, times[head] + window < time { head += 1 }
        if head > 256 {
            times.removeFirst(head)
            head = 0
        }
    }

    var rate: Double {
        let count = times.count - head
        guard count >= 2, let last = times.last, last > times[head] else { return 0 }
        return Double(count - 1) * 1e9 / Double(last - times[head])
    }
}
