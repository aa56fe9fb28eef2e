/// What a captured input's jitter buffer adds to its target after underruns, and how it comes off again.
///
/// Each underrun (the buffer ran dry: a stall, a machine too busy for the smallest buffer) adds a
/// quantum. A stretch of `calm` program audio without an underrun, in which the buffer never held less
/// than the step plus `margin` after a block was read (the jitter it saw would not have emptied a
/// smaller one), then takes a step off (`relaxStep`, or what is left) (at most 20 ms: the drift loop drains it through the rate,
/// well under the last resort's 30 ms). Each underrun within `calm` of such a relaxation, a buffer that
/// had to grow again at once, doubles `calm` (up to `longestCalm`). So the underruns of a start-up or of
/// a passing load do not keep the input's latency up for the rest of the show, and a machine busy all
/// along keeps the buffer it needs.
struct UnderrunHeadroom: Sendable, Equatable {
    /// Frames added to the target now.
    private(set) var extra = 0
    /// Frames without an underrun before `relaxStep` comes off.
    private(set) var calm: Int64
    let longestCalm: Int64
    /// Frames taken off at a relaxation.
    let relaxStep: Int
    /// What the buffer must still have held, beyond `relaxStep`, at its lowest in the calm stretch.
    let margin: Int
    /// The least the buffer held after a block was read, in this calm stretch.
    private var lowest = Int.max
    /// Program frames since the last underrun or relaxation.
    private var quiet: Int64 = 0
    /// Frames since the last relaxation (nil before any): an underrun soon after one doubles `calm`.
    private var sinceRelaxed: Int64?
    /// Relaxations so far.
    private(set) var relaxations = 0

    /// The first calm stretch: 2 minutes.
    static let firstCalm = 120.0
    /// The longest: an hour.
    static let longestCalm = 3600.0
    /// The most one relaxation takes off: 20 ms.
    static let largestRelaxStep = 0.02
    /// 5 ms.
    static let lowestMargin = 0.005

    init(rate: Int) {
        calm = Int64(Self.firstCalm * Double(rate))
        longestCalm = Int64(Self.longestCalm * Double(rate))
        relaxStep = Int(Self.largestRelaxStep * Double(rate))
        margin = Int(Self.lowestMargin * Double(rate))
    }

    /// The buffer ran dry: `step` frames more (a quantum), and the calm stretch starts over.
    mutating func underrun(step: Int) {
        extra += step
        if let since = sinceRelaxed, since < calm { calm = min(calm * 2, longestCalm) }
        sinceRelaxed = nil
        quiet = 0
        lowest = .max
    }

    /// `frames` more program frames played without an underrun, the buffer holding `left` input frames
    /// once they were read; true when that relaxed the headroom.
    mutating func played(frames: Int, left: Int) -> Bool {
        quiet += Int64(frames)
        lowest = min(lowest, left)
        if let since = sinceRelaxed { sinceRelaxed = since + Int64(frames) }
        guard extra > 0, quiet >= calm else { return false }
        let step = min(relaxStep, extra), roomy = lowest >= step + margin
        quiet = 0
        lowest = .max
        guard roomy else { return false }
        extra -= step
        sinceRelaxed = 0
        relaxations += 1
        return true
    }
}
