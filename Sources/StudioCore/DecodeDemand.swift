import Synchronization

/// How much of a camera's picture the pipeline needs now.
public enum DecodeDemand: String, Sendable, Codable, Hashable, CaseIterable {
    /// Every frame at the camera's full size: it is seen (program, preview, a scene or transition on
    /// either), recorded by an encoded ISO, or full decoding is forced.
    case full
    /// Only what the multiview tiles take: a picture at least `CameraDemand.reducedWidth` wide, at most
    /// one per `CameraDemand.reducedInterval`: someone watches the tiles, or the camera stands by for a
    /// backup rule (its liveness must be known, and a cut to it needs a recent picture).
    case reduced
    /// Nothing decoded: nobody needs its picture. The camera keeps its newest compressed frame, counts
    /// what arrives (it stays live, its passthrough ISO records), and decodes at once when the demand rises.
    case idle

    /// Higher needs more: `idle` < `reduced` < `full`.
    var level: Int {
        switch self {
        case .idle: 0
        case .reduced: 1
        case .full: 2
        }
    }
}

/// One camera's decode demand, between whoever needs its picture (the switcher's program thread, the
/// ISO recorder, the tiles, the server) and the camera's own thread, which decodes accordingly (an MJPEG
/// camera decodes at a fraction of its size and rate while only the tiles or a backup rule need it, and
/// not at all while nobody does; a raw camera ignores it).
///
/// Each holder sets or clears its own `Reason` (one atomic read-modify-write, never a lock held by the
/// camera), so the program thread never waits for a camera. When the demand rises, `wake` (given by the
/// camera) is called on the setter's thread: the camera decodes its newest frame as now needed at once
/// instead of waiting for the next one.
public final class CameraDemand: Sendable {
    /// Why a camera is needed (`demand` says how much they need together).
    public struct Reasons: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The switcher shows it (program, preview, in a scene or transition there) or is about to.
        public static let seen = Reasons(rawValue: 1)
        /// An encoded ISO recording takes every frame at full size.
        public static let recorded = Reasons(rawValue: 2)
        /// Full decoding of every camera forced (`STUDIO_DECODE=full`, for comparisons).
        public static let forced = Reasons(rawValue: 4)
        /// Someone watches the multiview's camera or scene tiles: a reduced picture is enough.
        public static let tiles = Reasons(rawValue: 8)
        /// A backup rule names it (as a backup, or as the camera the program cuts back to): its liveness
        /// is read from its pictures, so a reduced one is kept coming.
        public static let standby = Reasons(rawValue: 16)

        /// The reasons that need every frame at full size.
        public static let needingFull: Reasons = [.seen, .recorded, .forced]

        /// What these reasons need together.
        public var demand: DecodeDemand {
            if !intersection(.needingFull).isEmpty { return .full }
            return isEmpty ? .idle : .reduced
        }
    }

    /// Tiles' defaults: 320 pixels wide, 10 pictures a second.
    public static let defaultReducedWidth = 320
    public static let defaultReducedInterval: UInt64 = 100_000_000

    /// `.seen` at first: a camera is needed at full size until whoever shows it says otherwise (a camera
    /// used without a switcher decodes everything).
    private let reasons = Atomic<UInt8>(Reasons.seen.rawValue)
    private let width = Atomic<Int>(CameraDemand.defaultReducedWidth)
    private let interval = Atomic<UInt64>(CameraDemand.defaultReducedInterval)
    /// Whether a full-size picture was published since the demand last turned full.
    private let fullPicture = Atomic<Bool>(false)
    private let wake: @Sendable () -> Void

    /// - Parameter wake: called (on the thread that raised it) when the demand rises; must not block.
    public init(wake: @escaping @Sendable () -> Void = {}) {
        self.wake = wake
    }

    public var demand: DecodeDemand { currentReasons.demand }
    public var currentReasons: Reasons { Reasons(rawValue: reasons.load(ordering: .acquiring)) }

    /// Sets (`needed`) or clears `reason`; wakes the camera if that raised the demand (idle to reduced,
    /// or either to full).
    public func set(_ reason: Reasons, _ needed: Bool) {
        if needed, !reason.isDisjoint(with: .needingFull), demand != .full {
            // Cleared before the demand turns full: only a picture published after that counts.
            fullPicture.store(false, ordering: .releasing)
        }
        let before: UInt8
        if needed {
            before = reasons.bitwiseOr(reason.rawValue, ordering: .acquiringAndReleasing).oldValue
        } else {
            before = reasons.bitwiseAnd(~reason.rawValue, ordering: .acquiringAndReleasing).oldValue
        }
        let was = Reasons(rawValue: before)
        if needed, was.union(reason).demand.level > was.demand.level { wake() }
    }

    /// Whether the camera has published a full-size picture since its demand last turned full (a take
    /// waits a little for it: `ProgramSwitcher`'s hold).
    public var hasFullPicture: Bool { demand == .full && fullPicture.load(ordering: .acquiring) }

    /// The camera's thread: a full-size picture was published.
    public func noteFullPicture() { fullPicture.store(true, ordering: .releasing) }

    /// The narrowest picture a reduced decode may make (the tiles' width).
    public var reducedWidth: Int { width.load(ordering: .relaxed) }
    /// Nanoseconds between two reduced decodes at least (the tiles' period).
    public var reducedInterval: UInt64 { interval.load(ordering: .relaxed) }

    /// What the multiview needs of a camera nobody shows: `width` pixels wide, one picture per `interval`.
    public func setReducedTarget(width: Int, interval: UInt64) {
        self.width.store(max(1, width), ordering: .relaxed)
        self.interval.store(interval, ordering: .relaxed)
    }
}
