import Synchronization
import FrameDrawing
import Graphics
import StudioCore
import StudioSystem

/// The program feed, a vision mixer: its own clock thread (`studio.program`) ticks at the program frame
/// rate and on tick `n` (due at `origin + n / fps`) delivers one frame with pts `MediaTime(count: n, rate: fps)`.
///
/// The program shows a camera or a composed scene (`setScenes`); a preview holds the next one. Commands
/// take effect on the very next frame, one per frame, in order: `switchProgram(to:)` cuts straight to
/// program, `setPreview`, `cut` (preview and program swap), `auto` (a transition of exactly N frames
/// from program to preview, then they swap). A cut or switch during a transition completes it at once.
///
/// Each tick takes the NEWEST frame of each camera it shows (late frames are never queued; a slower
/// camera's frame is repeated). A picture captured before the tick but still on its way is waited for,
/// a quarter frame interval at most (`OnAirWait`). A camera full frame is passed on untouched when it
/// is program-size I420 (same storage, no copy), else scaled with libswscale; a scene is composed by `Compositor`. Before
/// that, a camera's picture settings (`setPicture`) are applied to its frame (`PictureStage`). A camera
/// whose newest frame is older than the loss timeout shows a "CAMERA LOST" slate (in its layer only,
/// inside a scene); with nothing selected a "NO CAMERA" slate. A camera or scene with a backup
/// (`setBackups`) that is lost on program gives way to it on that same frame instead (`BackupWatch`). The rate never changes. If the thread
/// wakes too late for one or more ticks, their frame numbers are skipped (counted in `lateTicks`) so pts
/// stay on the clock grid.
public final class ProgramSwitcher: Sendable {
    public let format: ProgramFormat
    public let configuration: Configuration
    let core: Core

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

    /// Stops the clock and joins its thread. Commands still pending fail with `.stopped`.
    public func stop() { core.stop() }

    /// Makes a camera available for cuts. The first source added becomes the program source if none is
    /// selected (with a switch event on the frame it first shows). Adding an existing id replaces its
    /// frame slot (a replugged camera).
    ///
    /// A camera with a `demand` is told whether the switcher needs it at full size (`DecodeDemands`).
    /// One with a `schedule` (a player) publishes its pictures ahead with the time each is shown from:
    /// each tick shows its picture for that tick's time (the newest frame while none is due yet).
    public func addSource(_ id: CameraID, frames: LatestValue<VideoFrame>, schedule: PictureSchedule? = nil, demand: CameraDemand? = nil) {
        core.addSource(id, frames: frames, schedule: schedule, demand: demand)
    }

    /// Removes a camera for good (`CameraHub.remove`). If it is on program (or in the scene on air) that
    /// frame goes as for a lost camera: its backup when a rule names one, else it stays selected and
    /// shows "CAMERA LOST" until it is added again or the operator cuts elsewhere. A cut, preview or
    /// picture change to it fails with `removedCamera` until it is added again.
    public func removeSource(_ id: CameraID) { core.removeSource(id) }

    /// Marks a camera whose device went away: it stays a source (the operator may still cut to it), and
    /// whenever it is shown it shows "CAMERA LOST" from the next frame on, without waiting for the
    /// loss timeout. `addSource` with the same id (the device came back) clears it.
    public func markSourceLost(_ id: CameraID) { core.markSourceLost(id) }

    /// Replaces the scenes (validated first: a problem changes nothing and names the scene). A scene's
    /// cameras need not exist yet: their layers show a slate until they do. A scene on program or
    /// preview that is gone afterwards shows a "NO SCENE" slate until the operator cuts elsewhere.
    /// Image layers are decoded and text layers rendered here, on the caller's thread (never on the
    /// program thread): a file that cannot be read or a font that cannot be loaded is an `.invalidScene`
    /// naming the scene, the layer and the file.
    public func setScenes(_ scenes: [SceneDescription]) throws(SwitchError) { try core.setScenes(scenes) }

    /// Sets the backups by camera or scene name (see `BackupWatch` for when one is taken). A backup that
    /// names no camera or scene is skipped for its own backup when it would be needed. The config
    /// refuses cycles; here a cycle only ends the search.
    public func setBackups(_ rules: [String: BackupRule]) {
        core.shared.withLock {
            $0.backups = rules
            $0.publishDemands()
        }
    }
    /// Replaces the overlays (validated and their pictures made first, on the caller's thread: a problem
    /// changes nothing and names the overlay). An overlay that existed before keeps its on/off state;
    /// a new one starts as its description says.
    public func setOverlays(_ overlays: [OverlayDescription]) throws(SwitchError) { try core.setOverlays(overlays) }

    /// Switches the overlay `name` on or off (toggles it when `on` is nil) from the next program frame:
    /// an `overlay_on` / `overlay_off` event carries the pts of the first frame with (or without) it, and
    /// `completion` runs on the program thread after that frame. All overlay changes asked for within
    /// one frame interval take effect on the same frame, without delaying cuts. An unknown name fails at
    /// once, listing the overlays.
    public func setOverlay(_ name: String, on: Bool?, completion: @escaping @Sendable (Result<OverlayOutcome, SwitchError>) -> Void) {
        core.submitOverlay(OverlayChange(name: name, on: on, completion: completion))
    }

    /// The camera or scene called `name` (a scene when both are).
    public func source(named name: String) throws(SwitchError) -> ProgramSource { try core.source(named: name) }

    /// Cuts to `source` on the very next program frame after this call. `completion` runs on the program
    /// thread right after that frame was delivered, with its pts; a `.switchProgram` event with the same
    /// `programTime` is emitted (unless `source` was already on program). An unknown camera fails at once,
    /// on the caller's thread, listing the cameras (and scenes) that exist. Cuts requested within one frame
    /// interval go to air one per frame, in order. A transition running then is completed first.
    public func switchProgram(to source: ProgramSource, completion: @escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) {
        core.submit(.take(Take(target: source, transition: .cut, completion: completion)))
    }

    public func switchProgram(to camera: CameraID, completion: @escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) {
        switchProgram(to: .camera(camera), completion: completion)
    }

    /// Puts `source` on preview on the next frame (a `preview` event); `completion` after that frame.
    public func setPreview(_ source: ProgramSource, completion: @escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) {
        core.submit(.preview(source, completion))
    }

    /// Swaps preview and program on the next frame; during a transition, completes it at once instead.
    public func cut(completion: @escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) {
        core.submit(.take(Take(target: nil, transition: .cut, completion: completion)))
    }

    /// Runs `transition` (the default transition when nil) from program to preview, starting on the next
    /// frame; `completion` runs once its first frame is out. At its end program and preview swap.
    public func auto(_ transition: TransitionSpec? = nil, completion: @escaping @Sendable (Result<SwitchOutcome, SwitchError>) -> Void) {
        let spec = transition ?? core.shared.withLock { $0.status.defaultTransition }
        if let problem = spec.problem(rate: format.frameRate) { return completion(.failure(.invalidTransition(problem))) }
        let resolved: (spec: TransitionSpec, stinger: StingerClip?)
        do { resolved = try core.resolve(spec) } catch { return completion(.failure(error)) }
        core.submit(.take(Take(target: nil, transition: resolved.spec, completion: completion, stinger: resolved.stinger)))
    }

    /// Sets the transition `auto` runs when it names none. A stinger's clip must be loaded
    /// (`setStingers`); its frames are the clip's.
    public func setDefaultTransition(_ spec: TransitionSpec) throws(SwitchError) {
        if let problem = spec.problem(rate: format.frameRate) { throw .invalidTransition(problem) }
        let resolved = try core.resolve(spec).spec
        core.shared.withLock { $0.status.defaultTransition = resolved }
    }

    /// Replaces the stingers' clips, decoded ahead (the server's `StingerLoader`, at start and on
    /// reload), by their paths: a `stinger` transition plays the one its `clip` names. A stinger running
    /// keeps the clip it started with.
    public func setStingers(_ clips: [StingerClip]) {
        core.shared.withLock { $0.stingers = Dictionary(clips.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last }) }
    }

    /// The stingers' clips loaded now (`setStingers`), by path.
    public var stingers: [StingerClip] { core.shared.withLock { shared in shared.stingers.keys.sorted().compactMap { shared.stingers[$0] } } }

    /// `watch` is called on the program thread as each stinger starts (once its first frame is out,
    /// or the frame it joins part-way), with its clip and the pts of its first frame (where its sound
    /// starts); it must not block.
    public func watchStingers(_ watch: @escaping @Sendable (StingerClip, MediaTime) -> Void) {
        core.shared.withLock { $0.stingerWatch = watch }
    }

    /// Applies `settings` to `camera`'s frames (crop, mirror/flip, rotation, colour, beauty: see
    /// `PictureSettings`) from the next program frame on, wherever the camera is shown; a
    /// `picture_changed` event carries that frame's pts and what changed. `completion` runs on the
    /// program thread once that frame is out. Settings with a `problem`, or an unknown camera, are
    /// refused at once, on the caller's thread, and change nothing.
    public func setPicture(_ settings: PictureSettings, for camera: CameraID,
                           completion: (@Sendable (Result<PictureOutcome, SwitchError>) -> Void)? = nil) throws(SwitchError) {
        try core.setPicture(settings, for: camera, completion: completion)
    }

    /// `camera`'s picture settings: the last ones asked for (in force from the next frame at the latest).
    public func picture(of camera: CameraID) -> PictureSettings { core.picture(of: camera) }

    public var status: SwitcherStatus { core.shared.withLock { $0.status } }
}

extension ProgramSwitcher {
    /// A cut, switch or auto: to `target`, or to what is on preview when nil (then program and preview swap).
    struct Take: Sendable {
        var target: ProgramSource?
        var transition: TransitionSpec
        var completion: (@Sendable (Result<SwitchOutcome, SwitchError>) -> Void)?
        var reason: String?
        /// A stinger's clip (`transition.kind == .stinger`).
        var stinger: StingerClip? = nil

        var what: String { target.map { "the cut to '\($0.name)'" } ?? (transition.kind == .cut ? "the cut" : "the \(transition.kind.rawValue)") }
    }

    enum Command: Sendable {
        case take(Take)
        case preview(ProgramSource, @Sendable (Result<SwitchOutcome, SwitchError>) -> Void)

        func fail(_ error: SwitchError) {
            switch self {
            case .take(let take): take.completion?(.failure(error))
            case .preview(_, let completion): completion(.failure(error))
            }
        }

        /// Why the program stopped before it: cameras keep their own error (tests and clients know it).
        var stopped: SwitchError {
            switch self {
            case .take(let take):
                if let camera = take.target?.camera { return .stopped(camera) }
                return .stoppedBefore(take.what)
            case .preview(let source, _): return .stoppedBefore("the preview of '\(source.name)'")
            }
        }
    }

    /// An overlay switched on, off, or toggled (`on` nil).
    struct OverlayChange: Sendable {
        var name: String
        var on: Bool?
        var completion: @Sendable (Result<OverlayOutcome, SwitchError>) -> Void
    }

    /// A transition on air.
    struct ActiveTransition {
        var spec: TransitionSpec
        var from: ProgramSource?
        var to: ProgramSource
        /// Program and preview swap at its end (an `auto` from preview).
        var swapsPreview: Bool
        /// A stinger's clip, held for the whole transition (a reload does not change it mid-way).
        var stinger: StingerClip? = nil
    }

    struct Shared: Sendable {
        var sources: [CameraID: LatestValue<VideoFrame>] = [:]
        /// The pictures ahead of the sources that publish them (`PictureSchedule`): a tick takes its own.
        var schedules: [CameraID: PictureSchedule] = [:]
        /// Sources whose device is gone (`markSourceLost`): a slate, not their last frame.
        var lost: Set<CameraID> = []
        /// Every camera ever added (a scene's layer of one that never was says "NO CAMERA", not "LOST").
        var known: Set<CameraID> = []
        var scenes: [String: PreparedScene] = [:]
        /// One more each time the scenes are set (`SceneThumbnails` re-prepares its small copies then).
        var scenesGeneration: UInt64 = 0
        var backups: [String: BackupRule] = [:]
        /// The stingers' clips by path (`setStingers`).
        var stingers: [String: StingerClip] = [:]
        /// Told of each stinger's start (`watchStingers`).
        var stingerWatch: (@Sendable (StingerClip, MediaTime) -> Void)?
        var pending: [Command] = []
        /// Picture settings in force (identity ones left out), and changes waiting for the next frame.
        var pictures: [CameraID: PictureSettings] = [:]
        var pendingPictures: [PictureRequest] = []
        /// In drawing order (as declared), each with its on/off state.
        var overlays: [PreparedOverlay] = []
        /// Overlay changes for the next frame, all applied on it.
        var pendingOverlays: [OverlayChange] = []
        var status = SwitcherStatus()
        var origin: UInt64 = 0
        /// The sources' decode demands (`DecodeDemands`), what they were last told, and whether a source
        /// changed since (then all are told again).
        var demands: [CameraID: CameraDemand] = [:]
        var demandsSeen = Set<CameraID>()
        var demandsStandby = Set<CameraID>()
        /// When the first pending take started waiting for its cameras' full pictures (`nextCommand`).
        var takeHeldSince: UInt64?
        var demandsStale = false
        var sortedSources: [CameraID] { sources.keys.sorted() }

        func exists(_ source: ProgramSource) -> Bool {
            switch source {
            case .camera(let camera): return sources[camera] != nil
            case .scene(let name): return scenes[name] != nil
            }
        }

        /// The cameras `source` shows: the camera itself, or its scene's cameras.
        func cameras(in source: ProgramSource?) -> [CameraID] {
            switch source {
            case nil: return []
            case .camera(let camera): return [camera]
            case .scene(let name): return scenes[name]?.cameras ?? []
            }
        }

        /// The cameras in the overlays on air (on program whatever is under them), and in those named in
        /// `switchingOn`.
        func camerasInOverlays(switchingOn: Set<String> = []) -> [CameraID] {
            overlays.filter { $0.on || switchingOn.contains($0.name) }.flatMap { $0.description.cameraNames.map { CameraID($0) } }
        }

        func unknown(_ source: ProgramSource) -> SwitchError {
            switch source {
            case .camera(let camera) where known.contains(camera): return .removedCamera(camera, available: sortedSources)
            case .camera(let camera) where status.scenes.isEmpty: return .unknownCamera(camera, available: sortedSources)
            case .scene(let name): return .unknownScene(name, scenes: status.scenes)
            case .camera(let camera): return .unknownSource(camera.name, cameras: sortedSources, scenes: status.scenes)
            }
        }
    }
}
