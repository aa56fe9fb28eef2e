import StudioCore

/// Which cameras the switcher needs at full size, told to each camera's `CameraDemand` (its `.seen`
/// reason): a camera on program or preview, inside the scene on either, in a running transition, in an
/// overlay on air or about to go on, or the target of a command waiting for the next frame (so a camera
/// put on preview or program is decoded at full size before the tick that shows it). A camera a backup
/// rule names (the backup, or the source a program cuts back to) stands by (its `.standby` reason): the
/// switcher reads its liveness from its pictures, so a reduced one keeps coming. Everyone else is only
/// needed by the multiview's tiles when someone watches them (the server says so), else not at all.
///
/// Recomputed under the switcher's lock whenever what is seen can change: a command queued (on the
/// caller's thread, at once), a source, the scenes, overlays or backups set, and at the end of every
/// program tick (after the tick's command, transition and backup decisions). Setting a demand is one
/// atomic operation on the camera's side (no lock a camera holds), so the program thread never waits for a
/// camera. Only changes are told.
extension ProgramSwitcher.Shared {
    /// The cameras seen now or about to be (see the extension's doc).
    var seenCameras: Set<CameraID> {
        var seen = Set<CameraID>()
        func add(_ source: ProgramSource?) { seen.formUnion(cameras(in: source)) }
        func add(_ name: String?) { add(name.map { scenes[$0] != nil ? .scene($0) : .camera(CameraID($0)) }) }
        add(status.program)
        add(status.preview)
        add(status.transition?.from)
        add(status.transition?.to)
        // Overlays on air, and those about to go on (a toggle may too).
        seen.formUnion(camerasInOverlays(switchingOn: Set(pendingOverlays.filter { $0.on != false }.map(\.name))))
        for command in pending {
            switch command {
            case .take(let take): add(take.target)
            case .preview(let source, _): add(source)
            }
        }
        return seen
    }

    /// The next command for this tick, if any. A take whose cameras' full-size pictures are not decoded
    /// yet (a camera nobody needed a moment ago: its demand just rose, `CameraDemand.hasFullPicture`)
    /// waits for them, at most `hold` nanoseconds from when it first waited, so the cut shows the new
    /// camera's full picture on the frame its event gives rather than an old or small one. Commands keep
    /// their order; a lost camera is not waited for.
    mutating func nextCommand(now: UInt64, hold: UInt64) -> ProgramSwitcher.Command? {
        guard let first = pending.first else { return nil }
        if case .take(let take) = first, let target = take.target ?? status.preview {
            let cameras = scenes[target.name]?.cameras ?? [CameraID(target.name)]
            let waiting = cameras.contains { camera in
                !lost.contains(camera) && demands[camera].map { !$0.hasFullPicture } == true
            }
            if waiting {
                let since = takeHeldSince ?? now
                takeHeldSince = since
                if now &- since < hold {
                    status.heldTicks += 1
                    return nil
                }
            }
        }
        takeHeldSince = nil
        return pending.removeFirst()
    }

    /// The cameras a backup rule names, on either side (scenes by their cameras).
    var standbyCameras: Set<CameraID> {
        var standby = Set<CameraID>()
        for name in backups.keys + backups.values.map(\.backup) {
            if let scene = scenes[name] { standby.formUnion(scene.cameras) } else { standby.insert(CameraID(name)) }
        }
        return standby
    }

    /// Tells every camera with a demand whether it is seen and whether it stands by, if that changed
    /// since the last time.
    mutating func publishDemands() {
        let seen = seenCameras, standby = standbyCameras
        guard seen != demandsSeen || standby != demandsStandby || demandsStale else { return }
        for (camera, demand) in demands {
            demand.set(.seen, seen.contains(camera))
            demand.set(.standby, standby.contains(camera))
        }
        demandsSeen = seen
        demandsStandby = standby
        demandsStale = false
    }
}
