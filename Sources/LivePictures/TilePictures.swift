import Synchronization
import StudioCore
import StudioSystem
import MediaSupport
#if canImport(Glibc)
import Glibc
#endif

/// The operator console's live tiles: a small JPEG (`width` pixels wide, the source's aspect) of every
/// camera's newest frame, of every scene (composed at tile size from its cameras' newest frames, by
/// `TileScenes.compose`), of the program and of preview (its camera or scene), made on its own thread
/// (`studio.tiles`) at up to 10 pictures a second per tile, off the media path.
///
/// - Only tiles someone watches are made: a subscription (`subscribe`, for a live stream), or a request
///   (`latest`, `waitForNewer`) in the last `idleAfter` seconds. With none, the thread sleeps and costs
///   nothing, and the program's frames are not even kept.
/// - Each tile reads its source's newest frame (the camera's `LatestValue`, the slot the switcher reads;
///   the program's newest frame as handed to the encoder; preview: its camera's frame or its scene) and
///   makes a picture only when the frame is new; a scene only when one of its cameras' frames (or slates,
///   or its layout) changed (`unchanged` counts the rest). Nothing is queued: a frame that arrives while the thread is busy
///   is replaced by the next, rounds that fall due during a long round are skipped, and the whole round is
///   skipped when the program falls behind or the CPU budget is spent (`TilePacer`; all counted).
/// - Readers never block the thread: each tile's newest picture sits in a `LatestValue`, which readers
///   copy out (`latest`) or wait on (`waitForNewer` for one tile, `waitForAny` for several: from an HTTP
///   thread, never the cooperative pool).
public final class TilePictures: Sendable {
    public static let program = "program"
    public static let preview = "preview"

    /// How long after a request (`latest`, `waitForNewer`) a tile is still made without a subscription.
    public let idleAfter: Double
    /// The pictures' width (pixels; a narrower source keeps its own).
    public let width: Int
    private let quality: Int
    private let clock: any Clock
    private let pacerSettings: TilePacer
    /// Nanoseconds between two rounds of pictures (what a camera's reduced decode need not beat).
    public var period: UInt64 { pacerSettings.period }

    private let programFrames = LatestValue<VideoFrame>()
    /// Whether anyone watches the program tile: `offerProgram` keeps the frame only then.
    private let programWatched = Atomic<Bool>(false)
    private let watchers = Mutex<[String: Watch]>([:])
    private let pictures = Mutex<[String: LatestValue<TilePicture>]>([:])
    private let sources = Mutex<TileSources?>(nil)
    private let countersValue = Mutex(TileCounters())
    /// Wakes the idle thread when a tile becomes watched, or to stop.
    private let wake = ConditionLock()
    /// Broadcast after each picture is published (`waitForAny` waits on it).
    private let published = ConditionLock()
    private let worker = WorkerThread()

    private struct Watch {
        var subscribers = 0
        var requestedAt: UInt64 = 0
    }

    public init(width: Int = 320, quality: Int = 5, pacer: TilePacer = TilePacer(), idleAfterSeconds: Double = 2,
                clock: any Clock = .monotonic) {
        self.width = width
        self.quality = quality
        self.pacerSettings = pacer
        self.idleAfter = idleAfterSeconds
        self.clock = clock
    }

    // MARK: The program's frames (the program thread)

    /// The program's frame as it goes to the encoder: kept (a reference, no copy) while the program tile
    /// is watched, else ignored. Never blocks beyond a short lock.
    public func offerProgram(_ frame: VideoFrame) {
        guard programWatched.load(ordering: .relaxed) else { return }
        programFrames.publish(frame)
    }

    // MARK: Readers (any thread but the cooperative pool)

    /// Every tile name: `program`, `preview`, the cameras, then the scenes.
    public var tileNames: [String] {
        let sources = sources.withLock { $0 }
        return [Self.program, Self.preview] + (sources?.cameraNames() ?? []) + (sources?.scenes.names() ?? [])
    }

    /// Whether `tile` names a tile (program, preview, a camera or a scene).
    public func isTile(_ tile: String) -> Bool {
        guard tile != Self.program, tile != Self.preview else { return true }
        guard let sources = sources.withLock({ $0 }) else { return false }
        return sources.camera(tile) != nil || sources.scenes.names().contains(tile)
    }

    /// Starts (or keeps) making `tile` for a live stream until `unsubscribe`; false for an unknown tile.
    @discardableResult
    public func subscribe(_ tile: String) -> Bool {
        guard isTile(tile) else { return false }
        watchers.withLock { $0[tile, default: Watch()].subscribers += 1 }
        becameWatched(tile)
        return true
    }

    /// Ends one `subscribe` of `tile`.
    public func unsubscribe(_ tile: String) {
        watchers.withLock { table in
            guard var watch = table[tile] else { return }
            watch.subscribers = max(0, watch.subscribers - 1)
            table[tile] = watch
        }
    }

    /// Subscriptions open now, over every tile (live streams, and `waitForNewer`s waiting).
    public var subscriptionCount: Int { watchers.withLock { $0.values.reduce(0) { $0 + $1.subscribers } } }

    /// The newest picture of `tile`, nil before its first (or for an unknown tile). Counts as a request:
    /// the tile is made for `idleAfter` seconds from now.
    public func latest(_ tile: String) -> TilePicture? {
        guard let slot = requested(tile) else { return nil }
        return slot.latest().value
    }

    /// Waits up to `timeoutSeconds` for a picture of `tile` newer than `sequence` (0: any); nil when none
    /// came in time or the tile is unknown. Blocks the calling thread: call it from an HTTP thread.
    public func waitForNewer(_ tile: String, than sequence: UInt64, timeoutSeconds: Double) -> TilePicture? {
        guard subscribe(tile), let slot = requested(tile) else { return nil }
        defer { unsubscribe(tile) }
        let (picture, version) = slot.waitForNewer(than: sequence, timeoutSeconds: timeoutSeconds)
        return version > sequence ? picture : nil
    }

    /// Waits up to `timeoutSeconds` until one of `tiles` has a picture newer than the one `sent` says
    /// (by sequence; a tile not in it: any picture), and returns each such tile's newest picture, in the
    /// order of `tiles` (empty when none came in time). Only the newest: a reader that fell behind skips
    /// what it missed. It does not make the tiles watched: subscribe to them first. Blocks the calling
    /// thread: call it from an HTTP thread.
    public func waitForAny(_ tiles: [String], newerThan sent: [String: UInt64], timeoutSeconds: Double) -> [(tile: String, picture: TilePicture)] {
        let deadline = MonotonicClock.now() + UInt64(max(0, timeoutSeconds) * 1e9)
        let slots = tiles.map { ($0, slot($0)) }
        return published.withLock {
            while true {
                let newer = slots.compactMap { tile, slot -> (tile: String, picture: TilePicture)? in
                    guard let picture = slot.latest().value, picture.sequence > sent[tile] ?? 0 else { return nil }
                    return (tile, picture)
                }
                if !newer.isEmpty || !published.wait(untilMonotonic: deadline) { return newer }
            }
        }
    }

    public var counters: TileCounters { countersValue.withLock { $0 } }

    // MARK: Running

    /// Starts the tile thread, reading frames from `sources`.
    public func start(sources tileSources: TileSources) {
        sources.withLock { $0 = tileSources }
        worker.start(name: "studio.tiles") { [self] in run(tileSources) }
    }

    /// Stops the tile thread (at most one picture's time).
    public func stop() {
        worker.requestStop()
        wake.withLock {}
        wake.broadcast()
        worker.stop()
    }

    private func requested(_ tile: String) -> LatestValue<TilePicture>? {
        guard isTile(tile) else { return nil }
        watchers.withLock { $0[tile, default: Watch()].requestedAt = clock.now() }
        becameWatched(tile)
        return slot(tile)
    }

    private func slot(_ tile: String) -> LatestValue<TilePicture> {
        pictures.withLock { table in
            if let slot = table[tile] { return slot }
            let slot = LatestValue<TilePicture>()
            table[tile] = slot
            return slot
        }
    }

    private func becameWatched(_ tile: String) {
        if tile == Self.program { programWatched.store(true, ordering: .relaxed) }
        // Taking the lock first: the idle thread is either before its check (and sees the watch) or waiting.
        wake.withLock {}
        wake.broadcast()
    }

    /// The tiles watched at `now`; forgets the ones no longer watched.
    private func watchedTiles(at now: UInt64) -> [String] {
        let idle = UInt64(idleAfter * 1e9)
        let watched = watchers.withLock { table -> [String] in
            table = table.filter { $0.value.subscribers > 0 || now &- $0.value.requestedAt < idle }
            return table.keys.sorted()
        }
        programWatched.store(watched.contains(Self.program), ordering: .relaxed)
        if !watched.contains(Self.program) { programFrames.clear() }
        return watched
    }

    private func run(_ sources: TileSources) {
        var pacer = pacerSettings
        var making: [String: TileMaker] = [:]
        var camerasWatched = false
        while !worker.isStopRequested {
            // A tile's encoder and scaler stay made when no one watches it (a few hundred kilobytes; the
            // tiles are the cameras, scenes, program and preview only), so a returning viewer costs no new ones.
            let watched = watchedTiles(at: clock.now())
            // Program and preview show what is seen anyway; a camera or scene tile needs the cameras' pictures.
            let wantsCameras = watched.contains { $0 != Self.program && $0 != Self.preview }
            if wantsCameras != camerasWatched {
                camerasWatched = wantsCameras
                sources.camerasWatched(wantsCameras)
            }
            if watched.isEmpty {
                pacer.idle()
                wake.withLock {
                    if watchedTiles(at: clock.now()).isEmpty && !worker.isStopRequested {
                        _ = wake.wait(untilMonotonic: MonotonicClock.now() + 1_000_000_000)
                    }
                }
                continue
            }
            if let due = pacer.dueTime, !clock.sleep(until: due, unless: { worker.isStopRequested }) { break }
            let start = clock.now()
            let decision = pacer.decide(now: start, cpu: Self.threadCPU(), lateTicks: sources.lateTicks())
            if decision == .run {
                for tile in watched {
                    guard !worker.isStopRequested else { break }
                    let maker = making[tile] ?? TileMaker(thumbnailer: JPEGThumbnailer(width: width, quality: quality))
                    making[tile] = maker
                    makePicture(tile, with: maker, sources: sources)
                }
            }
            let (_, overrun) = pacer.finishRound(startedAt: start, now: clock.now())
            let cpu = Self.threadCPU()
            countersValue.withLock { counters in
                counters.cpuNanoseconds = cpu
                counters.skippedOverrun += Int64(overrun)
                if decision == .programBehind { counters.skippedProgramBehind += 1 }
                if decision == .overBudget { counters.skippedOverBudget += 1 }
            }
        }
    }

    /// What a tile shows now.
    private enum Shown {
        case frames(LatestValue<VideoFrame>)
        case scene(String)
        case nothing
    }

    private func shown(_ tile: String, sources: TileSources) -> Shown {
        switch tile {
        case Self.program: return .frames(programFrames)
        case Self.preview:
            if let camera = sources.previewCamera(), let frames = sources.camera(camera) { return .frames(frames) }
            return sources.scenes.onPreview().map(Shown.scene) ?? .nothing
        default:
            return sources.camera(tile).map(Shown.frames) ?? .scene(tile)
        }
    }

    /// Makes `tile`'s picture from its source's newest frame, if that frame is new (a scene: composed,
    /// if one of its inputs changed).
    private func makePicture(_ tile: String, with maker: TileMaker, sources: TileSources) {
        let slot = slot(tile)
        func showNothing() {
            // Preview empty, or a camera or scene gone from the list: no picture rather than a stale one.
            slot.clear()
            maker.lastSource = nil
        }
        let frame: VideoFrame, key: TileMaker.SourceKey
        switch shown(tile, sources: sources) {
        case .nothing:
            return showNothing()
        case .frames(let source):
            let (newest, version) = source.latest()
            guard let newest else { return }
            key = .frame(ObjectIdentifier(source), version)
            guard maker.lastSource != key else {
                countersValue.withLock { $0.unchanged += 1 }
                return
            }
            frame = newest
        case .scene(let name):
            let previous: [UInt64]? = if case .scene(name, let inputs) = maker.lastSource { inputs } else { nil }
            guard let made = sources.scenes.compose(name, previous) else { return showNothing() }
            guard let composed = made.frame else {
                countersValue.withLock { $0.unchanged += 1 }
                return
            }
            countersValue.withLock { $0.sceneCompositions += 1 }
            key = .scene(name, made.inputs)
            frame = composed
        }
        maker.lastSource = key
        do {
            let made = try maker.thumbnailer.encode(frame)
            countersValue.withLock { $0.pictures += 1 }
            // Only this thread publishes to the slot: its version is the picture's sequence.
            slot.publish(TilePicture(jpeg: made.jpeg, width: made.width, height: made.height, sequence: slot.latest().version + 1,
                                     captureTime: frame.captureTime))
            // Taking the lock first: a `waitForAny` is either before its check (and sees the picture) or waiting.
            published.withLock {}
            published.broadcast()
        } catch {
            countersValue.withLock { $0.failures += 1 }
        }
    }

    /// CPU time of the calling thread, nanoseconds.
    static func threadCPU() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// One tile's encoder and what it last showed; lives on the tile thread only.
private final class TileMaker {
    /// What a picture was made from: a frame slot's version, or a scene's inputs.
    enum SourceKey: Equatable {
        case frame(ObjectIdentifier, UInt64)
        case scene(String, [UInt64])
    }

    let thumbnailer: JPEGThumbnailer
    var lastSource: SourceKey?

    init(thumbnailer: JPEGThumbnailer) { self.thumbnailer = thumbnailer }
}
