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

    /// A player on program (itself, not in a scene) that ends with a cut back (`end: cut-back`) and went
    /// on air over another source: once its end is known (`PictureSchedule.ending`), the program goes
    /// back to that source on the tick that makes the transition's last frame showing the clip the
    /// one with its last picture (a transition of N frames starts N - 2 ticks before it, so its all-new
    /// frame is the tick after; a cut is on the tick after). Started late (the end known late, or the
    /// clip shorter than the transition), it starts part-way, still ending there. Events as for any
    /// switch, the transition's start with `reason` `cut-back`.
    func cutBackIfDue(tick: Int64, on grid: FrameGrid, mix: inout Mix, after: inout Aftermath) {
        guard mix.transition == nil, !mix.cutBacks.isEmpty else { return }
        let (program, schedules, fallback) = shared.withLock { s in (s.status.program, s.schedules, s.status.defaultTransition) }
        guard case .camera(let camera)? = program, let cutBack = mix.cutBacks[camera],
              let ending = schedules[camera]?.ending, ending.lastPicture >= cutBack.since else { return }
        let spec = ending.transition ?? fallback
        let last = grid.firstFrame(atOrAfter: ending.lastPicture &- 1_000_000)
        let start = spec.kind == .cut ? last + 1 : last + 2 - Int64(spec.frames)
        guard tick >= start else { return }
        mix.cutBacks[camera] = nil
        let pts = grid.pts(ofFrame: tick)
        if spec.kind == .cut {
            shared.withLock { $0.status.program = cutBack.target }
            after.events.append(switchEvent(to: cutBack.target, from: program, at: pts, via: nil, reason: "cut-back"))
            return
        }
        mix.transition = ProgramSwitcher.ActiveTransition(spec: spec, from: program, to: cutBack.target, swapsPreview: false)
        mix.transitionStart = max(start, tick + 1 - Int64(spec.frames))
        after.events.append(StudioEvent(kind: .transitionStarted, camera: cutBack.target.camera, programTime: pts, details: [
            "kind": spec.kind.rawValue, "frames": String(spec.frames), "from": camera.name, "to": cutBack.target.name, "reason": "cut-back",
        ]))
    }
}
