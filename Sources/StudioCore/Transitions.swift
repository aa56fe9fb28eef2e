/// How the program goes from one source to the next.
public enum TransitionKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// At once, on the next frame.
    case cut
    /// A dissolve: B's weight rises linearly over the frames.
    case mix
    /// A to a colour (the first half), the colour to B (the second half).
    case dip
    /// B uncovered by an edge moving in the named direction (`wipe-right`: the edge runs from the left
    /// edge to the right one).
    case wipeLeft = "wipe-left", wipeRight = "wipe-right", wipeUp = "wipe-up", wipeDown = "wipe-down"
    /// B slides in, pushing A out, in the named direction (`push-left`: both move left, B enters on the right).
    case pushLeft = "push-left", pushRight = "push-right", pushUp = "push-up", pushDown = "push-down"
    /// A clip with alpha played over the change (`StingerClip`): A under it until its cut point, B from
    /// there; it lasts the clip's length.
    case stinger

    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// A transition with its length. A transition of N frames shows N frames on which B's share rises,
/// `(i + 1) / N` on the i-th: the last of them is all B, and the program is B from there on.
public struct TransitionSpec: Sendable, Hashable, Codable, CustomStringConvertible {
    public var kind: TransitionKind
    /// Frames it lasts (ignored for a cut).
    public var frames: Int
    /// The colour a `dip` goes through.
    public var color: RGBColor
    /// A `stinger`'s clip (a file path) and where in it the program cuts underneath from A to B, in ms
    /// from its start. Its `frames` are the clip's length in program frames, set once the clip is
    /// decoded (`StingerTiming.frames`).
    public var clip: String?
    public var cutAtMilliseconds: Int

    public init(kind: TransitionKind, frames: Int = 15, color: RGBColor = .black, clip: String? = nil, cutAtMilliseconds: Int = 0) {
        self.kind = kind
        self.frames = kind == .cut ? 1 : frames
        self.color = color
        self.clip = clip
        self.cutAtMilliseconds = cutAtMilliseconds
    }

    public static let cut = TransitionSpec(kind: .cut)
    /// The longest transition, in seconds of program time.
    public static let maxSeconds = 10.0

    /// Frames for `milliseconds` at `rate`, at least one.
    public static func frames(milliseconds: Int, rate: Rational) -> Int {
        max(1, Int((Double(milliseconds) * rate.doubleValue / 1000).rounded()))
    }

    /// Why this transition cannot run at `rate`, in the operator's words; nil when it can.
    public func problem(rate: Rational) -> String? {
        guard kind != .cut else { return nil }
        if kind == .stinger {
            guard let clip, !clip.isEmpty else { return "a stinger needs its clip (clip: FILE, a video with alpha)" }
            if cutAtMilliseconds < 0 { return "a stinger's cut_at_ms is from 0 to its clip's length, got \(cutAtMilliseconds)" }
        }
        let limit = Int(Self.maxSeconds * rate.doubleValue)
        if frames < 1 || frames > limit {
            return "a transition lasts 1 to \(limit) frames (\(Int(Self.maxSeconds)) s at \(rate) fps), got \(frames)"
        }
        return nil
    }

    public var description: String {
        switch kind {
        case .cut: "cut"
        case .stinger: "stinger \(clip ?? "(no clip)") \(frames) frames, cut at \(cutAtMilliseconds) ms"
        default: "\(kind.rawValue) \(frames) frames"
        }
    }
}
