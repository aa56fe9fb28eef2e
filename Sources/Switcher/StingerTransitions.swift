import StudioCore

// Stinger transitions: a clip decoded ahead (`StingerClip`, given by `setStingers`) played over the
// change, A under it until its cut point and B from there (`StingerTiming`).
extension ProgramSwitcher.Core {
    /// `spec` ready to run: a stinger with its clip (which must be loaded) and its frames the clip's
    /// length at the program's rate; any other transition as it is.
    func resolve(_ spec: TransitionSpec) throws(SwitchError) -> (spec: TransitionSpec, stinger: StingerClip?) {
        guard spec.kind == .stinger else { return (spec, nil) }
        let path = spec.clip ?? ""
        guard let clip = shared.withLock({ $0.stingers[path] }) else {
            throw .invalidTransition("the stinger clip \(path) is not loaded: a stinger's clip is decoded at start and on "
                                     + "`studio reload` when the config names it (transition: or a player's end_transition:)")
        }
        if let problem = clip.problem(cutAtMilliseconds: spec.cutAtMilliseconds) { throw .invalidTransition(problem) }
        var resolved = spec
        resolved.frames = clip.timing.frames(rate: format.frameRate)
        return (resolved, clip)
    }
}

extension TransitionRenderer {
    /// Frame `index` of a stinger: A (before the cut frame) or B (from it) under the clip's picture for
    /// that frame, blended with its alpha (a clip without alpha covers all).
    static func renderStinger(_ spec: TransitionSpec, _ clip: StingerClip, index: Int, rate: Rational,
                              from a: VideoFrame, to b: VideoFrame, into output: VideoFrame) {
        let under = index < clip.timing.cutFrame(at: spec.cutAtMilliseconds, rate: rate) ? a : b
        PlaneOps.copy(under, into: output)
        let picture = clip.pictures[clip.timing.picture(atFrame: index, rate: rate)]
        guard picture.frame.width == output.width, picture.frame.height == output.height else { return }
        if let alpha = picture.alpha {
            alpha.withUnsafeBufferPointer { PlaneOps.blend(picture.frame, alpha: $0, opacity: 256, over: output) }
        } else {
            PlaneOps.copy(picture.frame, into: output)
        }
    }
}

extension TransitionSpec {
    /// A `transition_started` event's details: its kind and frames, from and to, and a stinger's clip
    /// and cut point.
    func startDetails(from: ProgramSource?, to: ProgramSource) -> [String: String] {
        var details = ["kind": kind.rawValue, "frames": String(frames), "from": from?.name ?? "none", "to": to.name]
        if kind == .stinger {
            details["clip"] = clip ?? ""
            details["cut_at_ms"] = String(cutAtMilliseconds)
        }
        return details
    }
}
