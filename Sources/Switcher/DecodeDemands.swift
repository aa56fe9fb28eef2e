import StudioCore

/// Which cameras the switcher needs at full size, told to each camera's `CameraDemand` (its `.seen`
/// reason): a camera on program or preview, inside the scene on either, in a running transition, in an
/// overlay on air or about to go on, or the target of a command waiting for the next frame (so a camera put on preview or
/// program is decoded at full size before the tick that shows it). Everyone else is only needed by the
/// multiview, at reduced size.
///
/// Recomputed under the switcher's lock whenever what is seen can change: a command queued (on the
/// caller's thread, at once), a source or scenes or overlays set, and at the end of every program tick
/// (after the tick's command, transition and backup decisions). Setting a demand is one atomic
/// operation on the camera's side (no lock a camera holds), so the program thread never waits for a
/// camera. Only changes are told.
extension ProgramSwitcher.Shared {
    /// The cameras seen now or about to be (see the extension's doc).
    var seenCameras: Set<CameraID> {
        var seen = Set<CameraID>()
        func add(_ name: String?) {
            guard let name else { return }
            if let scene = scenes[name] { seen.formUnion(scene.cameras) } else { seen.insert(CameraID(name)) }
        }
        func add(_ source: ProgramSource?) { add(source?.name) }
        add(status.program)
        add(status.preview)
        add(status.transition?.from)
        add(status.transition?.to)
        // Overlays on air, and those about to go on (a toggle may too).
        let switchingOn = Set(pendingOverlays.filter { $0.on != false }.map(\.name))
        for overlay in overlays where overlay.on || switchingOn.contains(overlay.name) {
            seen.formUnion(overlay.description.cameraNames.map { CameraID($0) })
        }
        for command in pending {
            switch command {
            case .take(let take): add(take.target)
            case .preview(let source, _): add(source)
            }
        }
        return seen
    }

    /// Tells every camera with a demand whether it is seen, if that changed since the last time.
    mutating func publishDemands() {
        let seen = seenCameras
        guard seen != demandsSeen || demandsStale else { return }
        for (camera, demand) in demands { demand.set(.seen, seen.contains(camera)) }
        demandsSeen = seen
        demandsStale = false
    }
}
