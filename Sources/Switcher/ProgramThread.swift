import FrameDrawing
import StudioCore
import StudioSystem

extension ProgramSwitcher.Core {
    /// How long a take waits at most for its camera's first full-size picture (`Shared.nextCommand`).
    static let maximumHold: UInt64 = 100_000_000

    /// What the program thread keeps between ticks (only it touches this).
    struct Mix {
        var transition: ProgramSwitcher.ActiveTransition?
        /// The tick of the transition's first frame.
        var transitionStart: Int64 = 0
        var tally: [String: Tally] = [:]
        var lostOnProgram: CameraID?
        var reportedErrors = Set<String>()
        var backup = BackupWatch()
        /// Players on program that end with a cut back (`end: cut-back`): what was on program before
        /// each went on air, and that tick's time.
        var cutBacks: [CameraID: (target: ProgramSource, since: UInt64)] = [:]
    }

    /// After a frame is out: its events, in order, then the replies to the commands it carried.
    struct Aftermath {
        var events: [StudioEvent] = []
        var replies: [() -> Void] = []
        /// Stingers started on this tick: each clip and the pts of its first frame (`watchStingers`).
        var stingers: [(clip: StingerClip, start: MediaTime)] = []
    }

    // MARK: The program thread

    func run(origin: UInt64) {
        let grid = FrameGrid(origin: origin, rate: format.frameRate)
        let pool = FramePool(capacity: VideoFrame.byteCount(format: .i420, width: format.width, height: format.height), limit: 16)
        let compositor = Compositor(width: format.width, height: format.height, pool: pool)
        let pictureStage = PictureStage()
        let lossTimeout = configuration.lossTimeoutNanoseconds(for: format)
        var meter = RateMeter(window: 2_000_000_000)
        var onAir = OnAirWait(limit: configuration.onAirWaitNanoseconds(for: format))
        var mix = Mix()
        /// Cameras shown this tick with a reduced picture (`VideoFrame.reduction` > 1): scaled up.
        var reducedShown = 0
        var tick: Int64 = 0

        while !stopping {
            guard clock.sleep(until: grid.time(ofFrame: tick), unless: { stopping }) else { break }
            // Woke up after the following tick was due: skip to the newest due tick, keep the grid.
            let due = grid.frame(at: clock.now())
            let late = due > tick ? due - tick : 0
            tick += late
            let pts = grid.pts(ofFrame: tick)

            // At most one command per frame.
            var after = Aftermath()
            let programBefore = shared.withLock { $0.status.program }
            let command = shared.withLock { s in s.nextCommand(now: clock.now(), hold: Self.maximumHold) }
            if let command { apply(command, at: pts, tick: tick, mix: &mix, after: &after) }
            // Picture settings asked for since the last tick apply from this frame on.
            let pictureTick = takePictureChanges(at: pts, tick: tick)
            after.events += pictureTick.events
            after.replies += pictureTick.replies

            // Overlay changes: all of them, on this frame.
            let overlayChanges = shared.withLock { s -> [ProgramSwitcher.OverlayChange] in
                defer { s.pendingOverlays.removeAll() }
                return s.pendingOverlays
            }
            for change in overlayChanges { apply(change, at: pts, tick: tick, after: &after) }
            cutBackIfDue(tick: tick, on: grid, mix: &mix, after: &after)

            // A picture of this tick still on its way from a camera shown is worth a moment (`OnAirWait`).
            waitForPictures(of: tick, on: grid, onAir: &onAir, transition: mix.transition)

            // What to show, with each camera's picture fetched once.
            let now = clock.now()
            let snapshot = shared.withLock { s in (s.sources, s.schedules, s.lost, s.scenes, s.status.program, s.known, s.backups, s.overlays.filter(\.on)) }
            let (sources, schedules, lost, scenes, selected, known, backups, overlays) = snapshot
            var program = selected
            var pictures: [CameraID: CameraPicture] = [:]
            /// When a capture node took each camera's picture fetched (`VideoFrame.remoteCaptureTime`).
            var remoteCaptureTimes: [CameraID: Int64] = [:]
            func picture(_ camera: CameraID) -> CameraPicture {
                if let cached = pictures[camera] { return cached }
                var found = CameraPicture.newest(camera, sources: sources, schedules: schedules, tick: grid.time(ofFrame: tick),
                                                 lost: lost, known: known, now: now, lossTimeout: lossTimeout)
                if case .frame(let frame) = found {
                    remoteCaptureTimes[camera] = frame.remoteCaptureTime
                    // Only the multiview should get a reduced picture; one here was decoded before the
                    // camera's demand turned full: it is shown scaled up, and counted.
                    if frame.reduction > 1 { reducedShown += 1 }
                    found = pictureStage.picture(frame, of: camera, settings: pictureTick.settings[camera])
                }
                pictures[camera] = found
                return found
            }
            // A camera lost on air gives way to its backup on this very frame (see `BackupWatch`).
            func liveness(_ source: ProgramSource) -> BackupWatch.Liveness {
                switch source {
                case .camera(let camera):
                    switch picture(camera) {
                    case .frame: return .live
                    case .slate(let lines) where lines.first == "CAMERA LOST":
                        return .lost(lost.contains(camera) || sources[camera] == nil ? "removed" : "silent")
                    case .slate: return .unavailable
                    }
                case .scene(let name):
                    guard let scene = scenes[name] else { return .unavailable }
                    return scene.cameras.first.map { liveness(.camera($0)) } ?? .live
                }
            }
            func resolve(_ name: String) -> ProgramSource? {
                if scenes[name] != nil { return .scene(name) }
                return known.contains(CameraID(name)) ? .camera(CameraID(name)) : nil
            }
            if let decision = mix.backup.decide(program: mix.transition == nil ? program : nil, rules: backups,
                                                liveness: liveness, resolve: resolve) {
                program = take(decision, at: pts, after: &after)
            }

            func render(_ source: ProgramSource?) -> RenderedPicture {
                switch source {
                case nil:
                    return compositor.slate(["NO CAMERA"], programTime: pts, captureTime: now, sequence: UInt64(tick))
                case .camera(let camera):
                    return compositor.render(camera: camera, picture(camera), programTime: pts, now: now, sequence: UInt64(tick))
                case .scene(let name):
                    guard let scene = scenes[name] else {
                        return compositor.slate(["NO SCENE", name], programTime: pts, captureTime: now, sequence: UInt64(tick))
                    }
                    return compositor.render(scene: scene, pictures: picture, now: now, sequence: UInt64(tick))
                }
            }

            var shown: RenderedPicture
            if let transition = mix.transition {
                let a = render(transition.from), b = render(transition.to)
                let output = VideoFrame.allocate(format: .i420, width: format.width, height: format.height, pool: pool,
                                                 captureTime: max(a.frame.captureTime, b.frame.captureTime), sequence: UInt64(tick))
                TransitionRenderer.render(transition.spec, index: Int(tick - mix.transitionStart), from: a.frame, to: b.frame, into: output,
                                          stinger: transition.stinger, rate: format.frameRate)
                shown = RenderedPicture(frame: output, kind: .composed)
            } else {
                shown = render(program)
            }
            // Overlays go on top of everything, transitions included.
            shown = compositor.overlay(shown, with: overlays, pictures: picture)
            for (camera, error) in pictureStage.takeErrors() + compositor.takeErrors() where mix.reportedErrors.insert("\(camera.name) \(error)").inserted {
                after.events.append(StudioEvent(kind: .error, camera: camera, programTime: pts,
                                                details: ["stage": "switcher", "error": error]))
            }

            var delivered = shown.frame
            delivered.times = FrameTimes(capture: delivered.captureTime, due: grid.time(ofFrame: tick), taken: now, composed: clock.now())
            deliver(delivered, pts)
            // A cut to a node's camera says when its first picture on program was taken (on this server's
            // clock): the frame the operator saw, which the node's own ISO file has at that time.
            for index in after.events.indices where after.events[index].kind == .switchProgram && after.events[index].details["scene"] == nil {
                guard let camera = after.events[index].camera else { continue }
                _ = picture(camera)
                if let taken = remoteCaptureTimes[camera] { after.events[index].details["captured_at_us"] = String(taken) }
            }

            meter.record(clock.now())
            let transitionIndex = mix.transition.map { _ in Int(tick - mix.transitionStart) }
            if let transition = mix.transition, let index = transitionIndex, index >= transition.spec.frames - 1 {
                finish(transition, shown: transition.spec.frames, takenOver: false, at: pts, mix: &mix, after: &after)
            }
            let slateText = shown.slate.map { lines in lines.joined(separator: " ") }
            let tallyBefore = mix.tally
            let tallyEvent = updateTally(&mix, at: pts)
            if tallyEvent != nil { announceOnAir(before: tallyBefore, mix: &mix, at: grid.time(ofFrame: tick), programBefore: programBefore) }
            shared.withLock { s in
                s.status.slate = slateText
                s.status.framesDelivered += 1
                s.status.frameNumber = tick
                s.status.lateTicks += late
                s.status.reducedFrames += Int64(reducedShown)
                s.status.deliveredFPS = meter.rate
                s.status.tally = mix.tally
                s.status.backup = mix.backup.active
                s.status.transition = mix.transition.map { t in
                    TransitionStatus(kind: t.spec.kind, frames: t.spec.frames, shown: (transitionIndex ?? -1) + 1, from: t.from?.name, to: t.to.name)
                }
                switch shown.kind {
                case .slate: s.status.slateFrames += 1
                case .passThrough: s.status.passThroughFrames += 1
                case .scaled: s.status.scaledFrames += 1
                case .composed: if transitionIndex != nil { s.status.transitionFrames += 1 } else { s.status.composedFrames += 1 }
                }
                s.publishDemands()
            }
            for event in after.events { events.emit(event) }
            if let tallyEvent { events.emit(tallyEvent) }
            for reply in after.replies { reply() }
            if !after.stingers.isEmpty, let watch = shared.withLock({ $0.stingerWatch }) {
                for started in after.stingers { watch(started.clip, started.start) }
            }

            if configuration.emitsLossEvents {
                let onProgram = mix.transition == nil ? program?.camera : nil
                let lostNow = shown.slate?.first == "CAMERA LOST" ? onProgram : nil
                if let lostNow, lostNow != mix.lostOnProgram {
                    events.emit(StudioEvent(kind: .cameraLost, camera: lostNow, programTime: pts,
                                            details: ["scope": "program", "timeout_ms": String(lossTimeout / 1_000_000)]))
                } else if lostNow == nil, let previouslyLost = mix.lostOnProgram, previouslyLost == onProgram, shown.slate == nil {
                    events.emit(StudioEvent(kind: .cameraReturned, camera: previouslyLost, programTime: pts, details: ["scope": "program"]))
                }
                mix.lostOnProgram = lostNow
            }
            reducedShown = 0
            tick += 1
        }
        shared.withLock { $0.status.isRunning = false }
    }

    /// Waits, up to `onAir.limit` past tick `tick`'s due time, for the pictures that belong to it from
    /// the cameras it shows and are still to come (`OnAirWait`).
    private func waitForPictures(of tick: Int64, on grid: FrameGrid, onAir: inout OnAirWait, transition: ProgramSwitcher.ActiveTransition?) {
        guard onAir.limit > 0 else { return }
        let known = onAir.count
        let (slots, remaining) = shared.withLock { s in
            // A camera that publishes its pictures ahead (`schedules`) is not waited for.
            let cameras = s.camerasOnAir(program: s.status.program, transition: transition).subtracting(s.lost).subtracting(s.schedules.keys)
            // Cadences of cameras gone from the switcher are forgotten once they outnumber its cameras
            // (not rebuilt every tick).
            return (cameras.compactMap { camera in s.sources[camera].map { (camera, $0) } }, known > s.sources.count ? Array(s.sources.keys) : nil)
        }
        if let remaining { onAir.keep(only: remaining) }
        let due = grid.time(ofFrame: tick), period = grid.rate.periodNanoseconds
        let previous = tick > 0 ? grid.time(ofFrame: tick - 1) : due &- period
        var awaited: [(slot: LatestValue<VideoFrame>, version: UInt64)] = []
        for (camera, slot) in slots {
            let latest = slot.latest()
            guard let frame = latest.value else { continue }
            onAir.observe(camera, version: latest.version, capture: frame.captureTime, arrival: frame.arrivedAt)
            if onAir.expectsPicture(of: camera, capture: frame.captureTime, due: due, previous: previous) {
                awaited.append((slot, latest.version))
            }
        }
        guard !awaited.isEmpty else { return }
        clock.sleep(until: due + onAir.limit, unless: {
            stopping || awaited.allSatisfy { $0.slot.latest().version > $0.version }
        }, checkingEvery: 500_000)
    }

    // MARK: Commands

    private func apply(_ command: ProgramSwitcher.Command, at pts: MediaTime, tick: Int64, mix: inout Mix, after: inout Aftermath) {
        let (program, preview, problem) = shared.withLock { s -> (ProgramSource?, ProgramSource?, SwitchError?) in
            var problem: SwitchError?
            switch command {
            case .take(let take): if let target = take.target, !s.exists(target) { problem = s.unknown(target) }
            case .preview(let source, _): if !s.exists(source) { problem = s.unknown(source) }
            }
            return (s.status.program, s.status.preview, problem)
        }
        if let problem { return command.fail(problem) }

        switch command {
        case let .preview(source, completion):
            shared.withLock { $0.status.preview = source }
            if source != preview {
                after.events.append(StudioEvent(kind: .preview, camera: source.camera, programTime: pts,
                                                details: ["preview": source.name, "from": preview?.name ?? "none"]))
            }
            let outcome = SwitchOutcome(source: source, previous: preview, programTime: pts, frameNumber: tick)
            after.replies.append { completion(.success(outcome)) }

        case .take(let take):
            mix.backup.operatorTook()
            // A cut or switch during a transition completes it first, at once.
            var program = program
            if let running = mix.transition {
                guard take.transition.kind == .cut else {
                    if let reply = take.completion { after.replies.append { reply(.failure(.transitionRunning(running.spec.description))) } }
                    return
                }
                finish(running, shown: Int(tick - mix.transitionStart), takenOver: true, at: pts, mix: &mix, after: &after)
                program = running.to
                if take.target == nil {
                    let outcome = SwitchOutcome(source: running.to, previous: running.from, programTime: pts, frameNumber: tick)
                    if let reply = take.completion { after.replies.append { reply(.success(outcome)) } }
                    return
                }
            }
            guard let target = take.target ?? preview else {
                if let reply = take.completion { after.replies.append { reply(.failure(.nothingOnPreview)) } }
                return
            }
            let swapsPreview = take.target == nil
            var outcome = SwitchOutcome(source: target, previous: program, programTime: pts, frameNumber: tick)
            if take.transition.kind == .cut {
                shared.withLock { s in
                    s.status.program = target
                    if swapsPreview { s.status.preview = program }
                }
                if program != target { after.events.append(switchEvent(to: target, from: program, at: pts, via: nil, reason: take.reason)) }
            } else {
                mix.transition = ProgramSwitcher.ActiveTransition(spec: take.transition, from: program, to: target,
                                                                  swapsPreview: swapsPreview, stinger: take.stinger)
                mix.transitionStart = tick
                if let stinger = take.stinger { after.stingers.append((stinger, pts)) }
                outcome.transition = take.transition
                after.events.append(StudioEvent(kind: .transitionStarted, camera: target.camera, programTime: pts,
                                                details: take.transition.startDetails(from: program, to: target)))
            }
            let final = outcome
            if let reply = take.completion { after.replies.append { reply(.success(final)) } }
        }
    }

    /// Puts a backup (or, cutting back, the source it replaced) on program from this frame; returns it.
    private func take(_ decision: BackupWatch.Decision, at pts: MediaTime, after: inout Aftermath) -> ProgramSource {
        switch decision {
        case let .take(backup, lost, origin, reason, skipped, back):
            shared.withLock { $0.status.program = backup }
            var details = ["lost": lost.name, "backup": backup.name, "reason": reason, "back": back.rawValue]
            if !skipped.isEmpty { details["skipped"] = skipped.joined(separator: ",") }
            details["cut_back"] = BackupStatus(lost: origin, onAir: backup.name, back: back).cutBack
            after.events.append(StudioEvent(kind: .backupTaken, camera: lost.camera, programTime: pts, details: details))
            after.events.append(switchEvent(to: backup, from: lost, at: pts, via: nil, reason: "backup"))
            return backup
        case let .cutBack(source, from):
            shared.withLock { $0.status.program = source }
            after.events.append(switchEvent(to: source, from: from, at: pts, via: nil, reason: "camera returned"))
            return source
        }
    }

    /// Switches an overlay on or off on this frame: an event when it changed, the reply after the frame.
    private func apply(_ change: ProgramSwitcher.OverlayChange, at pts: MediaTime, tick: Int64, after: inout Aftermath) {
        let result = shared.withLock { s -> (on: Bool, changed: Bool)? in
            guard let index = s.overlays.firstIndex(where: { $0.name == change.name }) else { return nil }
            let was = s.overlays[index].on, now = change.on ?? !was
            s.overlays[index].on = now
            s.status.overlays = s.overlays.map { OverlayStatus(name: $0.name, on: $0.on) }
            return (now, now != was)
        }
        guard let result else {
            // The overlays were replaced since the change was asked for.
            let names = shared.withLock { $0.overlays.map(\.name) }
            return after.replies.append { change.completion(.failure(.unknownOverlay(change.name, overlays: names))) }
        }
        if result.changed {
            after.events.append(StudioEvent(kind: result.on ? .overlayOn : .overlayOff, programTime: pts, details: ["overlay": change.name]))
        }
        let outcome = OverlayOutcome(name: change.name, on: result.on, changed: result.changed, programTime: pts, frameNumber: tick)
        after.replies.append { change.completion(.success(outcome)) }
    }

    /// Ends a transition: its target is on program from now on (and what it left is on preview, after an auto).
    private func finish(_ transition: ProgramSwitcher.ActiveTransition, shown: Int, takenOver: Bool, at pts: MediaTime,
                        mix: inout Mix, after: inout Aftermath) {
        mix.transition = nil
        shared.withLock { s in
            s.status.program = transition.to
            if transition.swapsPreview { s.status.preview = transition.from }
        }
        after.events.append(StudioEvent(kind: .transitionEnded, camera: transition.to.camera, programTime: pts, details: [
            "kind": transition.spec.kind.rawValue, "frames": String(transition.spec.frames), "shown": String(shown),
            "from": transition.from?.name ?? "none", "to": transition.to.name, "taken_over": takenOver ? "true" : "false",
        ]))
        if transition.from != transition.to {
            after.events.append(switchEvent(to: transition.to, from: transition.from, at: pts, via: transition.spec.kind, reason: nil))
        }
    }

    func switchEvent(to target: ProgramSource, from previous: ProgramSource?, at pts: MediaTime, via: TransitionKind?,
                             reason: String?) -> StudioEvent {
        var details = ["from": previous?.name ?? "none"]
        if case .scene(let name) = target { details["scene"] = name }
        if let via { details["via"] = via.rawValue }
        if let reason { details["reason"] = reason }
        return StudioEvent(kind: .switchProgram, camera: target.camera, programTime: pts, details: details)
    }

    // MARK: Tally

    /// Recomputes who is seen where; a `tally` event when it changed.
    private func updateTally(_ mix: inout Mix, at pts: MediaTime) -> StudioEvent? {
        // A scene is on air under its own name and its cameras'; cameras in an overlay on air are on
        // program whatever is under it.
        let transition = mix.transition
        let (onProgram, onPreview) = shared.withLock { s in
            func names(_ source: ProgramSource?) -> [String] { (source.map { [$0.name] } ?? []) + s.cameras(in: source).map(\.name) }
            return (Set(names(s.status.program) + names(transition?.from) + names(transition?.to) + s.camerasInOverlays().map(\.name)),
                    Set(names(s.status.preview)))
        }
        var tally: [String: Tally] = [:]
        for name in onProgram { tally[name] = onPreview.contains(name) ? .both : .program }
        for name in onPreview where tally[name] == nil { tally[name] = .preview }
        guard tally != mix.tally else { return nil }
        mix.tally = tally
        func list(_ state: Tally) -> String { tally.filter { $0.value == state || $0.value == .both }.keys.sorted().joined(separator: ",") }
        return StudioEvent(kind: .tally, programTime: pts, details: ["program": list(.program), "preview": list(.preview)])
    }
}
