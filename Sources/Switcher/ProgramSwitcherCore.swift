import Synchronization
import FrameDrawing
import Graphics
import StudioCore
import StudioSystem

// The switcher's shared core (what the program thread and the public `ProgramSwitcher` both hold),
// apart from the public API (ProgramSwitcher.swift) and the program thread's work (ProgramThread.swift).
extension ProgramSwitcher {
    /// Everything the program thread shares with the public object; held by the thread, so dropping the
    /// switcher stops the clock (its deinit asks the thread to stop).
    final class Core: Sendable {
        let format: ProgramFormat
        let configuration: Configuration
        let clock: any Clock
        let events: any EventSink
        let deliver: @Sendable (VideoFrame, MediaTime) -> Void
        let shared = Mutex(Shared())
        let worker = WorkerThread()
        /// Told the scenes (and their generation) each time they are set, on the caller's thread, after
        /// the switcher took them (`SceneThumbnails` prepares its small copies there).
        let sceneObservers = Mutex<[@Sendable ([String: PreparedScene], UInt64) -> Void]>([])
        /// Renders text layers (and caches them) when scenes and overlays are set.
        let texts = TextRenderer()

        init(format: ProgramFormat, configuration: Configuration, clock: any Clock, events: any EventSink,
             deliver: @escaping @Sendable (VideoFrame, MediaTime) -> Void) {
            self.format = format
            self.configuration = configuration
            self.clock = clock
            self.events = events
            self.deliver = deliver
        }

        func addSource(_ id: CameraID, frames: LatestValue<VideoFrame>, schedule: PictureSchedule?, demand: CameraDemand?) {
            shared.withLock { s in
                s.sources[id] = frames
                s.schedules[id] = schedule
                s.demands[id] = demand
                s.demandsStale = true
                s.known.insert(id)
                s.lost.remove(id)
                s.status.sources = s.sortedSources
                if s.status.program == nil, s.pending.isEmpty {
                    s.pending.append(.take(Take(target: .camera(id), transition: .cut, completion: nil, reason: "first source")))
                }
                s.publishDemands()
            }
        }

        func removeSource(_ id: CameraID) {
            shared.withLock { s in
                s.sources[id] = nil
                s.schedules[id] = nil
                s.demands[id] = nil
                s.demandsStale = true
                s.lost.remove(id)
                s.status.sources = s.sortedSources
                s.publishDemands()
            }
        }

        func markSourceLost(_ id: CameraID) {
            shared.withLock { s in
                guard s.sources[id] != nil else { return }
                s.lost.insert(id)
            }
        }

        func setScenes(_ scenes: [SceneDescription]) throws(SwitchError) {
            var seen = Set<String>()
            for scene in scenes {
                if let problem = scene.problem { throw .invalidScene("scene '\(scene.name)': \(problem)") }
                if !seen.insert(scene.name).inserted { throw .invalidScene("two scenes are called '\(scene.name)'") }
                if let outside = outside(scene.layers) { throw .invalidScene("scene '\(scene.name)': \(outside)") }
            }
            var prepared: [PreparedScene] = []
            for scene in scenes { prepared.append(try PreparedScene(scene, width: format.width, height: format.height, texts: texts)) }
            let (table, generation) = shared.withLock { s in
                s.scenes = Dictionary(uniqueKeysWithValues: prepared.map { ($0.name, $0) })
                s.scenesGeneration &+= 1
                s.status.scenes = scenes.map(\.name)
                s.publishDemands()
                return (s.scenes, s.scenesGeneration)
            }
            for observer in sceneObservers.withLock({ $0 }) { observer(table, generation) }
        }

        /// Why one of `layers` reaches outside the program; nil when they all fit.
        private func outside(_ layers: [LayerDescription]) -> String? {
            layers.lazy.compactMap { [format] in $0.rect.outside(width: format.width, height: format.height) }.first
        }

        func setOverlays(_ overlays: [OverlayDescription]) throws(SwitchError) {
            var seen = Set<String>(), prepared: [PreparedOverlay] = []
            for overlay in overlays {
                if let problem = overlay.problem { throw .invalidOverlay("overlay '\(overlay.name)': \(problem)") }
                if !seen.insert(overlay.name).inserted { throw .invalidOverlay("two overlays are called '\(overlay.name)'") }
                if let outside = outside(overlay.layers) { throw .invalidOverlay("overlay '\(overlay.name)': \(outside)") }
                do { prepared.append(try PreparedOverlay(overlay, width: format.width, height: format.height, texts: texts)) } catch {
                    throw .invalidOverlay(error.description)
                }
            }
            shared.withLock { s in
                let current = Dictionary(s.overlays.map { ($0.name, $0.on) }, uniquingKeysWith: { first, _ in first })
                for index in prepared.indices { prepared[index].on = current[prepared[index].name] ?? prepared[index].on }
                s.overlays = prepared
                s.status.overlays = prepared.map { OverlayStatus(name: $0.name, on: $0.on) }
                s.publishDemands()
            }
        }

        func submitOverlay(_ change: OverlayChange) {
            let refused = shared.withLock { s -> SwitchError? in
                guard s.overlays.contains(where: { $0.name == change.name }) else {
                    return .unknownOverlay(change.name, overlays: s.overlays.map(\.name))
                }
                s.pendingOverlays.append(change)
                s.publishDemands()
                return nil
            }
            if let refused { change.completion(.failure(refused)) }
        }

        func source(named name: String) throws(SwitchError) -> ProgramSource {
            try shared.withLock { s throws(SwitchError) -> ProgramSource in
                if s.scenes[name] != nil { return .scene(name) }
                let camera = CameraID(name)
                guard s.sources[camera] != nil else { throw s.unknown(.camera(camera)) }
                return .camera(camera)
            }
        }

        /// Queues a command for the next frame; an unknown source or a `cut` with nothing on preview fails
        /// at once, on the caller's thread.
        func submit(_ command: Command) {
            let refused = shared.withLock { s -> SwitchError? in
                switch command {
                case .take(let take):
                    if let target = take.target, !s.exists(target) { return s.unknown(target) }
                    if take.target == nil, s.status.preview == nil, s.status.transition == nil,
                       !s.pending.contains(where: { if case .preview = $0 { true } else { false } }) {
                        return .nothingOnPreview
                    }
                    if take.target == nil, take.transition.kind != .cut, let running = s.status.transition {
                        return .transitionRunning("\(running.kind.rawValue) to \(running.to), \(running.shown) of \(running.frames) frames")
                    }
                case .preview(let source, _):
                    if !s.exists(source) { return s.unknown(source) }
                }
                s.pending.append(command)
                // The target is decoded at full size from now, before the tick that shows it.
                s.publishDemands()
                return nil
            }
            if let refused { command.fail(refused) }
        }

        func start(origin: UInt64) {
            worker.start(name: configuration.threadName, prepare: {
                shared.withLock { s in
                    s.origin = origin
                    var fresh = SwitcherStatus()
                    fresh.sources = s.status.sources
                    fresh.scenes = s.status.scenes
                    fresh.program = s.status.program
                    fresh.preview = s.status.preview
                    fresh.defaultTransition = s.status.defaultTransition
                    fresh.pictures = s.status.pictures
                    fresh.overlays = s.status.overlays
                    fresh.isRunning = true
                    s.status = fresh
                }
            }) { [self] in run(origin: origin) }
        }

        func requestStop() { worker.requestStop() }

        func stop() {
            worker.stop()
            let (abandoned, overlays) = shared.withLock { s -> ([Command], [OverlayChange]) in
                s.status.isRunning = false
                defer {
                    s.pending.removeAll()
                    s.pendingOverlays.removeAll()
                }
                return (s.pending, s.pendingOverlays)
            }
            for command in abandoned { command.fail(command.stopped) }
            abandonPictureChanges()
            for change in overlays { change.completion(.failure(.stoppedBefore("overlay '\(change.name)'"))) }
        }

        var stopping: Bool { worker.isStopRequested }
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
