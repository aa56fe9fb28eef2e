import Foundation
import Synchronization
import StudioCore
import IsoRecording
import Encoding
import StudioSystem
import Capture
import Switcher

/// The server's cameras, present and lost, fed by any number of `CameraDiscovery`s (test patterns,
/// V4L2, PipeWire) and kept in step with the switcher and the ISO recorders.
///
/// - A camera seen for the first time in the session is started, becomes a switcher source (with the
///   picture settings of its pin, if any), gets its ISO recorder (when recording), and a `camera_added`
///   event.
/// - A camera whose device goes away (`onRemoved`) is marked lost at once: `camera_lost` with
///   `reason=removed`, and the switcher shows the slate from its next frame if the camera is on program.
///   Its name stays listed (state `lost`) and the operator can still cut to it.
/// - When the device comes back (a discovery reports the same `id` again), the new camera object
///   replaces the old in the switcher and in the ISO recorder (same file, same timeline), and
///   `camera_returned` (`reason=reappeared`) is logged. No operator action is needed.
/// - A present camera that stops delivering frames for the loss timeout is `camera_lost` with
///   `reason=silent`; `camera_returned` (`reason=frames resumed`) when frames come again (a camera that
///   waits for its source, a phone's or an SRT caller's camera before its first picture, is starting,
///   not silent). The watch runs
///   on its own thread (`studio.cameras`) and only reads when each camera's newest frame arrived (a
///   compressed camera's whether decoded or not: nobody may need its pictures).
/// - A camera removed from the show for good (`remove`: a network pull gone from the config, a clip
///   closed, a capture node that left) stops; the switcher treats that frame as a loss (backup, else the
///   slate) and drops it as a source; its ISO file is finished; its own sound leaves the mixer; a
///   `camera_removed` event says who asked and why. It is no longer listed. A late report from a
///   discovery about the removed camera object changes nothing; the same identity reported again as a
///   new object is a fresh add (its name comes from the namer: the same one).
/// - A compressed camera's decode demand gets the server's part (`DecodePolicy`): whether an encoded
///   ISO records it, and whether anyone watches the console's camera tiles (`setTilesWatched`).
///
/// Discovery callbacks arrive on the discoveries' threads; they take a lock, call the switcher's
/// non-blocking source methods and start or stop capture threads. Nothing here touches the program
/// thread's work.
final class CameraHub: Sendable {
    /// One camera name's slot for the whole session.
    struct Entry {
        var camera: any Camera
        var isPresent: Bool
        /// Why it is lost (`removed`, `silent`), nil while it delivers.
        var lostReason: String?
        /// When it was (re)added: silence is measured from here until its first frame.
        var since: UInt64
        var iso: IsoRecorder?
        /// A capture node's stream of the camera to its switcher (`NodeSettings`), built like an ISO feed.
        var sender: IsoRecorder?

        /// Its ISO feed and its sender: what takes the program audio, starts and stops with it.
        var feeds: [IsoRecorder] { [iso, sender].compactMap { $0 } }
    }

    /// Where a camera's own sound goes (`Camera.audio`): the program audio, once it is made.
    struct AudioRoute: Sendable {
        var attach: @Sendable (any ClockedAudioInput, String) -> Void
        var detach: @Sendable (String) -> Void
        /// The source left the show: its input goes; answers whether it had one.
        var remove: @Sendable (String) -> Bool
    }

    /// A camera object that was removed: a late report about it changes nothing. Weak: once the
    /// camera is gone nothing can report it again, and a removed camera's last frame is not kept.
    private struct Removed {
        weak var camera: (any Camera)?
    }

    typealias IsoFactory = @Sendable (any Camera) -> IsoRecorder?
    /// A camera's picture settings from the config (its pin's `picture:`).
    typealias PictureLookup = @Sendable (any Camera) -> PictureSettings

    private let switcher: ProgramSwitcher
    private let events: any EventSink
    private let log: ServerLog
    private let lossTimeout: UInt64
    private let makeIso: IsoFactory?
    private let makeSender: IsoFactory?
    private let pinnedPicture: PictureLookup?
    private let decoding: DecodePolicy
    private let entries = Mutex<[CameraID: Entry]>([:])
    private let discoveries = Mutex<[any CameraDiscovery]>([])
    /// The program's origin once the program clock runs: ISO recorders made before it wait for it.
    private let origin = Mutex<UInt64?>(nil)
    private let worker = WorkerThread()
    /// When the watch last found the server itself stalled: no camera is silent from before it.
    private let silenceFrom = Mutex<UInt64>(0)
    /// Whether the console's camera or scene tiles are watched; its lock also orders the cameras'
    /// `.tiles` reasons, so a camera added while it changes gets the newest value.
    private let tilesWatched = Mutex(false)
    /// Taken only inside `entries`' lock, so each camera's sound is routed exactly once: by
    /// `routeAudio` when the camera came before the route, else by its arrival.
    private let audioRoute = Mutex<AudioRoute?>(nil)
    /// The removed camera objects by name (one per name: the newest), and whether the hub has stopped.
    private let removed = Mutex<(cameras: [CameraID: Removed], stopped: Bool)>(([:], false))
    /// The threads finishing removed cameras' ISO files (`stop` waits for them).
    private let finishing = Mutex<[NamedThread]>([])

    init(switcher: ProgramSwitcher, events: any EventSink, log: ServerLog, lossTimeoutSeconds: Double, makeIso: IsoFactory?,
         makeSender: IsoFactory? = nil, pinnedPicture: PictureLookup? = nil, decoding: DecodePolicy = DecodePolicy()) {
        self.makeSender = makeSender
        self.decoding = decoding
        self.switcher = switcher
        self.events = events
        self.log = log
        self.lossTimeout = UInt64(lossTimeoutSeconds * 1e9)
        self.makeIso = makeIso
        self.pinnedPicture = pinnedPicture
    }

    // MARK: Reading

    /// Every camera of the session, present and lost, by name.
    var all: [any Camera] { entries.withLock { $0.values.map(\.camera).sorted { $0.id < $1.id } } }
    var present: [any Camera] { entries.withLock { $0.values.filter(\.isPresent).map(\.camera).sorted { $0.id < $1.id } } }

    /// Gives the cameras found so far up to `seconds` (together) to deliver their first frame; a camera
    /// slower than that starts on the slate. A camera nobody needs yet (not on program, no tile watched)
    /// decodes nothing and is not waited for. Called once at start, before the program's clock runs.
    func waitForFirstFrames(seconds: Double) {
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        for camera in present where camera.demand?.demand != .idle {
            let now = MonotonicClock.now()
            guard now < deadline else { break }
            _ = camera.frames.waitForNewer(than: 0, timeoutSeconds: Double(deadline - now) / 1e9)
        }
    }
    var isoRecorders: [IsoRecorder] { isoFeeds.sorted { $0.cameraID < $1.cameraID } }
    /// The ISO recorders in no order (the audio stage's per-packet fan-out).
    var isoFeeds: [IsoRecorder] { entries.withLock { $0.values.compactMap(\.iso) } }
    /// A capture node's senders (`NodeSettings`), by camera name.
    var senders: [IsoRecorder] { entries.withLock { $0.values.compactMap(\.sender) }.sorted { $0.cameraID < $1.cameraID } }
    /// Every camera's ISO feed and sender in no order (the audio stage's per-packet fan-out, the stop).
    var cameraFeeds: [IsoRecorder] { entries.withLock { $0.values.flatMap(\.feeds) } }
    func camera(named id: CameraID) -> (any Camera)? { entries.withLock { $0[id]?.camera } }
    func isLost(_ id: CameraID) -> Bool { entries.withLock { $0[id]?.lostReason != nil } }
    func lostReason(_ id: CameraID) -> String? { entries.withLock { $0[id]?.lostReason } }
    func isPresent(_ id: CameraID) -> Bool { entries.withLock { $0[id]?.isPresent ?? false } }
    /// Camera `id` was removed from the show (`remove`) and not added again.
    func isRemoved(_ id: CameraID) -> Bool { removed.withLock { $0.cameras[id] != nil } }

    /// Sends the sound of every camera that brings one to `route`: those here already now, later ones as
    /// they come (and come back); a camera that goes away is detached.
    func routeAudio(_ route: AudioRoute) {
        let present = entries.withLock { entries -> [any Camera] in
            audioRoute.withLock { $0 = route }
            return entries.values.filter(\.isPresent).map(\.camera)
        }
        for camera in present.sorted(by: { $0.id < $1.id }) {
            if let input = camera.audio { route.attach(input, camera.id.name) }
        }
    }

    // MARK: Discovery

    /// Starts a discovery; the cameras it finds now are added before this returns.
    func attach(_ discovery: any CameraDiscovery) {
        discoveries.withLock { $0.append(discovery) }
        discovery.start(onAdded: { [weak self] camera in self?.cameraAppeared(camera) },
                        onRemoved: { [weak self] camera in self?.cameraDisappeared(camera) })
    }

    func cameraAppeared(_ camera: any Camera) {
        let now = MonotonicClock.now()
        enum Change { case added, returned(previous: any Camera, wasLost: Bool) }
        var route: AudioRoute?
        let stale = removed.withLock { removed in
            guard let gone = removed.cameras[camera.id] else { return false }
            if gone.camera === camera { return true }
            // A new object under a removed name: a fresh add.
            removed.cameras[camera.id] = nil
            return false
        }
        guard !stale else {
            log.info("\(camera.id.name) was removed; a late report of it is ignored")
            return
        }
        let change = entries.withLock { entries -> Change in
            route = audioRoute.withLock { $0 }
            if var entry = entries[camera.id] {
                let previous = entry.camera
                let wasLost = entry.lostReason != nil
                entry.camera = camera
                entry.isPresent = true
                entry.lostReason = nil
                entry.since = now
                entries[camera.id] = entry
                return .returned(previous: previous, wasLost: wasLost)
            }
            entries[camera.id] = Entry(camera: camera, isPresent: true, lostReason: nil, since: now, iso: nil, sender: nil)
            return .added
        }
        switch change {
        case .added:
            let iso = makeIso?(camera), sender = makeSender?(camera)
            tilesWatched.withLock {
                decoding.prepare(camera, recorded: iso?.needsDecodedFrames == true || sender != nil, tilesWatched: $0)
            }
            camera.start()
            switcher.addSource(camera.id, frames: camera.frames, schedule: camera.schedule, demand: camera.demand)
            applyPinnedPicture(camera)
            events.emit(StudioEvent(kind: .cameraAdded, camera: camera.id, details: [
                "backend": camera.backend.rawValue, "identity": camera.identity, "display_name": camera.displayName,
            ]))
            entries.withLock {
                $0[camera.id]?.iso = iso
                $0[camera.id]?.sender = sender
            }
            if let origin = origin.withLock({ $0 }) {
                for feed in [iso, sender].compactMap({ $0 }) { feed.start(origin: origin) }
            }
        case .returned(let previous, let wasLost):
            if previous !== camera { previous.stop() }
            let (iso, sender) = entries.withLock { ($0[camera.id]?.iso, $0[camera.id]?.sender) }
            tilesWatched.withLock {
                decoding.prepare(camera, recorded: iso?.needsDecodedFrames == true || sender != nil, tilesWatched: $0)
            }
            camera.start()
            switcher.addSource(camera.id, frames: camera.frames, schedule: camera.schedule, demand: camera.demand)
            iso?.rebind(to: camera)
            sender?.rebind(to: camera)
            if wasLost {
                events.emit(StudioEvent(kind: .cameraReturned, camera: camera.id, details: [
                    "reason": "reappeared", "backend": camera.backend.rawValue, "identity": camera.identity,
                ]))
                log.info("\(camera.id.name) is back (\(camera.displayName))")
            }
        }
        if let route, let input = camera.audio { route.attach(input, camera.id.name) }
    }

    /// The pin's picture settings, from the camera's first program frame on (a `picture_changed` event).
    private func applyPinnedPicture(_ camera: any Camera) {
        guard let settings = pinnedPicture?(camera), !settings.isIdentity else { return }
        do {
            try switcher.setPicture(settings, for: camera.id)
            let changes = settings.changes(from: PictureSettings()).map { "\($0.key) \(settings.text($0.key))" }
            log.info("\(camera.id.name): picture from its pin: \(changes.joined(separator: ", "))")
        } catch {
            log.info("\(camera.id.name): the picture settings of its pin are not applied: \(error)")
        }
    }

    func cameraDisappeared(_ camera: any Camera) {
        let alreadyLost = entries.withLock { entries -> Bool? in
            // A stale report about a camera object that was already replaced changes nothing.
            guard var entry = entries[camera.id], entry.camera === camera else { return nil }
            let already = entry.lostReason != nil
            entry.isPresent = false
            entry.lostReason = "removed"
            entries[camera.id] = entry
            return already
        }
        guard let alreadyLost else { return }
        camera.stop()
        if camera.audio != nil, let route = audioRoute.withLock({ $0 }) { route.detach(camera.id.name) }
        switcher.markSourceLost(camera.id)
        if !alreadyLost {
            events.emit(StudioEvent(kind: .cameraLost, camera: camera.id, details: [
                "reason": "removed", "backend": camera.backend.rawValue, "identity": camera.identity,
            ]))
        }
        log.info("\(camera.id.name) went away (\(camera.displayName)); it keeps its name and comes back by itself")
    }

    // MARK: Removal

    /// Takes camera `id` out of the show for good, `by` whom (`reload`, `socket`, `http`, a backend's
    /// name) and why (`reason`, in words): see the type's comment. The camera and its sound stop at once;
    /// its ISO file is finished on a thread of its own (`stop.iso-NAME`: the encoder drains within the
    /// stop budget, the file gets its trailer), which `stop` waits for. Answers false for a name that is
    /// no camera of the show (never added, or removed already) and once the hub has stopped.
    @discardableResult
    func remove(_ id: CameraID, by requester: String, reason: String) -> Bool {
        let entry = removed.withLock { removed -> Entry? in
            guard !removed.stopped, let entry = entries.withLock({ $0.removeValue(forKey: id) }) else { return nil }
            removed.cameras[id] = Removed(camera: entry.camera)
            return entry
        }
        guard let entry else { return false }
        let camera = entry.camera
        camera.stop()
        // From the next program frame: a backup, or the slate, as for a lost camera; then no source.
        switcher.removeSource(id)
        let route = entries.withLock { _ in audioRoute.withLock { $0 } }
        let hadAudio = route?.remove(id.name) ?? false
        for feed in entry.feeds {
            let thread = NamedThread.start(name: "stop.\(feed.output.destination.name)") {
                feed.stopEncoding()
                // The program audio ends in this file (or stream) too: with the video's end, it is complete.
                feed.deliverAudio(.endOfStream)
                feed.output.stop(timeoutSeconds: ProgramOutputs.stopBudgetSeconds)
            }
            // The list holds the files still being finished: no growth over many removals.
            finishing.withLock { threads in
                threads.removeAll(where: \.isFinished)
                threads.append(thread)
            }
        }
        var details = ["by": requester, "reason": reason, "backend": camera.backend.rawValue, "identity": camera.identity]
        if hadAudio { details["audio_input"] = id.name }
        events.emit(StudioEvent(kind: .cameraRemoved, camera: id, details: details))
        log.info("\(id.name) was removed from the show by \(requester) (\(reason)): \(camera.displayName) is no longer a source"
                 + (entry.iso == nil ? "" : "; its ISO file is being finished"))
        return true
    }

    // MARK: Running

    /// Starts the ISO recorders made so far (they tick from `origin`, the program's origin) and the
    /// silence watch. Cameras that arrive later start their ISO recorder at once.
    func start(origin programOrigin: UInt64) {
        origin.withLock { $0 = programOrigin }
        // A camera arriving meanwhile may start its recorder too: `IsoRecorder.start` runs once only.
        for feed in cameraFeeds { feed.start(origin: programOrigin) }
        worker.start(name: "studio.cameras") { [self] in
            var watch = StallWatch(threshold: lossTimeout)
            while !worker.isStopRequested {
                MonotonicClock.sleep(seconds: 0.05)
                let now = MonotonicClock.now()
                if let stalled = watch.wake(at: now) {
                    // This thread, and so the whole process, stood still: the cameras' frames are old
                    // because nothing ran, not because a camera failed. Their silence counts from now.
                    silenceFrom.withLock { $0 = now }
                    events.emit(StudioEvent(kind: .serverStalled, details: ["stalled_ms": String(stalled / 1_000_000)]))
                    log.info("warning: the whole server stood still for \(stalled / 1_000_000) ms (stopped, paused or starved of CPU); cameras are not blamed for it")
                }
                checkSilence(now: now)
            }
        }
    }

    private func checkSilence(now: UInt64) {
        var lostNow: [(CameraID, UInt64)] = []
        var returned: [CameraID] = []
        entries.withLock { entries in
            for (id, entry) in entries where entry.isPresent {
                // Silence counts from the newest frame, or from when the camera (or the server, after a
                // stall) was last known to be running, whichever is later. A camera that waits for its
                // source (a network camera's publisher) is starting, not silent, until its first frame.
                let firstFrame = entry.camera.statistics.lastFrameTime
                if firstFrame == nil && entry.camera.waitsForItsSource { continue }
                let frameTime = firstFrame ?? entry.since
                let last = max(frameTime, silenceFrom.withLock { $0 })
                let silent = now > last && now - last > lossTimeout
                if silent && entry.lostReason == nil {
                    entries[id]?.lostReason = "silent"
                    lostNow.append((id, now - last))
                } else if !silent && entry.lostReason == "silent" {
                    entries[id]?.lostReason = nil
                    returned.append(id)
                }
            }
        }
        for (id, silence) in lostNow {
            events.emit(StudioEvent(kind: .cameraLost, camera: id, details: ["reason": "silent", "silent_ms": String(silence / 1_000_000)]))
        }
        for id in returned {
            events.emit(StudioEvent(kind: .cameraReturned, camera: id, details: ["reason": "frames resumed"]))
        }
    }

    /// Whether anyone watches the console's camera or scene tiles (the tile thread says so when it
    /// changes): every compressed camera nobody else needs is then decoded small, else not at all.
    func setTilesWatched(_ watched: Bool) {
        tilesWatched.withLock { current in
            current = watched
            for camera in all { camera.demand?.set(.tiles, watched) }
        }
    }

    /// Stops the discoveries, the watch and every camera. ISO recorders are stopped by the server (in
    /// data-flow order with the encoders).
    func stop() {
        removed.withLock { $0.stopped = true }
        for discovery in discoveries.withLock({ $0 }) { discovery.stop() }
        worker.stop()
        for camera in all { camera.stop() }
        // Removed cameras' ISO files: each within the encoders' and an output's stop budgets.
        let budget = StopBudget.encodersSeconds + StopBudget.graceSeconds + ProgramOutputs.stopBudgetSeconds + 1
        for thread in finishing.withLock({ $0 }) { _ = thread.join(timeoutSeconds: budget) }
    }
}

/// Tells a stall of the whole process from a silent camera: the watch thread sleeps 50 ms at a time, so a
/// wake-up later than `threshold` after the previous one means nothing ran for that long. Pure logic:
/// time comes in as arguments.
struct StallWatch: Sendable {
    let threshold: UInt64
    private var lastWake: UInt64?

    init(threshold: UInt64) { self.threshold = threshold }

    /// Notes a wake-up at `now`; returns how long the process stood still when that was longer than the
    /// threshold.
    mutating func wake(at now: UInt64) -> UInt64? {
        defer { lastWake = now }
        guard let lastWake, now > lastWake, now - lastWake > threshold else { return nil }
        return now - lastWake
    }
}
