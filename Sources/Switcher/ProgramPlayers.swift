import StudioCore
import StudioSystem

// The program's side of the players (sources with a `PictureSchedule`): telling them when they go on
// air or off it, and cutting back when a clip with `end: cut-back` ends.
extension ProgramSwitcher.Core {
    /// Tells each source with a schedule (a player) that went on program or off it with this tick
    /// (`tick`: its due time) so, after the frame; one going on air keeps what was on program before
    /// (`programBefore`, at the tick's start) for its cut back.
    func announceOnAir(before: [String: Tally], mix: inout Mix, at tick: UInt64, programBefore: ProgramSource?) {
        func onProgram(_ tally: [String: Tally]) -> Set<String> { Set(tally.filter { $0.value == .program || $0.value == .both }.keys) }
        let (was, now) = (onProgram(before), onProgram(mix.tally))
        let changed = now.symmetricDifference(was)
        guard !changed.isEmpty else { return }
        let schedules = shared.withLock { s in changed.compactMap { name in s.schedules[CameraID(name)].map { (name, $0) } } }
        for (name, schedule) in schedules {
            let camera = CameraID(name), onAir = now.contains(name)
            mix.cutBacks[camera] = nil
            if onAir, let programBefore, programBefore != .camera(camera) { mix.cutBacks[camera] = (programBefore, tick) }
            schedule.onAir(onAir, at: tick)
        }
    }

    /// A player on program (itself, or a layer of the scene on program) that ends with a cut back
    /// (`end: cut-back`) and went on air over another source: once its end is known
    /// (`PictureSchedule.ending`), the program (the player, or its scene) goes back to that source on
    /// the tick that makes the transition's last frame showing the clip the
    /// one with its last picture (a transition of N frames starts N - 2 ticks before it, so its all-new
    /// frame is the tick after; a stinger starts so that its cut frame is the tick after; a cut is on the
    /// tick after). Started late (the end known late, or the
    /// clip shorter than the transition), it starts part-way, still ending there. Events as for any
    /// switch, the transition's start with `reason` `cut-back`.
    func cutBackIfDue(tick: Int64, on grid: FrameGrid, mix: inout Mix, after: inout Aftermath) {
        guard mix.transition == nil, !mix.cutBacks.isEmpty else { return }
        let (program, shown, schedules, fallback) = shared.withLock { s in
            (s.status.program, s.cameras(in: s.status.program), s.schedules, s.status.defaultTransition)
        }
        guard let program, let camera = shown.first(where: { mix.cutBacks[$0] != nil }), let cutBack = mix.cutBacks[camera],
              cutBack.target != program, let ending = schedules[camera]?.ending, ending.lastPicture >= cutBack.since else { return }
        // A stinger whose clip is gone (a reload dropped it) cuts instead.
        let (spec, stinger) = (try? resolve(ending.transition ?? fallback)) ?? (TransitionSpec.cut, nil)
        let last = grid.firstFrame(atOrAfter: ending.lastPicture &- 1_000_000)
        // The transition's first frame of B alone (its last, all B) or, for a stinger, with B under the
        // sting (its cut frame) is the tick after the last picture.
        let firstOfB = stinger.map { $0.timing.cutFrame(at: spec.cutAtMilliseconds, rate: grid.rate) } ?? spec.frames - 1
        let start = spec.kind == .cut ? last + 1 : last + 1 - Int64(firstOfB)
        guard tick >= start else { return }
        mix.cutBacks[camera] = nil
        let pts = grid.pts(ofFrame: tick)
        if spec.kind == .cut {
            shared.withLock { $0.status.program = cutBack.target }
            after.events.append(switchEvent(to: cutBack.target, from: program, at: pts, via: nil, reason: "cut-back"))
            return
        }
        mix.transition = ProgramSwitcher.ActiveTransition(spec: spec, from: program, to: cutBack.target, swapsPreview: false, stinger: stinger)
        mix.transitionStart = max(start, tick + 1 - Int64(spec.frames))
        if let stinger { after.stingers.append((stinger, grid.pts(ofFrame: mix.transitionStart))) }
        var details = spec.startDetails(from: program, to: cutBack.target)
        details["reason"] = "cut-back"
        after.events.append(StudioEvent(kind: .transitionStarted, camera: cutBack.target.camera, programTime: pts, details: details))
    }
}
