import Synchronization

/// How much of a camera's picture the pipeline needs now.
public enum DecodeDemand: String, Sendable, Codable, Hashable, CaseIterable {
    /// Every frame at the camera's full size: it is seen (program, preview, a scene or transition on
    /// either), recorded by an encoded ISO, or full decoding is forced.
    case full
    /// Only what the multiview tiles take: a picture at least `CameraDemand.reducedWidth` wide, at most
    /// one per `CameraDemand.reducedInterval`.
    case reduced
}

/// One camera's decode demand, between whoever needs its picture (the switcher's program thread, the
/// ISO recorder, the server) and the camera's own thread, which decodes accordingly (an MJPEG camera
/// decodes at a fraction of its size and rate while nobody needs more; a raw camera ignores it).
///
/// Each holder sets or clears its own `Reason` (one atomic read-modify-write, never a lock held by the
/// camera), so the program thread never waits for a camera. When the demand turns `full`, `wake`
/// (given by the camera) is called on the setter's thread: the camera decodes its newest frame at full
/// size at once instead of waiting for the next one.
public final class CameraDemand: Sendable {
    /// Why a camera is needed at full size; the demand is `full` while any reason is set.
    public struct Reasons: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The switcher shows it (program, preview, in a scene or transition there) or is about to.
        public static let seen = Reasons(rawValue: 1)
        /// An encoded ISO recording takes every frame at full size.
        public static let recorded = Reasons(rawValue: 2)
        /// Full decoding of every camera forced (`STUDIO_DECODE=full`, for comparisons).
        public static let forced = Reasons(rawValue: 4)
    }

    /// Tiles' defaults: 320 pixels wide, 10 pictures a second.
    public static let defaultReducedWidth = 320
    public static let defaultReducedInterval: UInt64 = 100_000_000

    /// `.seen` at first: a camera is needed at full size until whoever shows it says otherwise (a camera
    /// used without a switcher decodes everything).
    private let reasons = Atomic<UInt8>(Reasons.seen.rawValue)
    private let width = Atomic<Int>(CameraDemand.defaultReducedWidth)
    private let interval = Atomic<UInt64>(CameraDemand.defaultReducedInterval)
    private let wake: @Sendable () -> Void

    /// - Parameter wake: called (on the thread that raised it) when the demand turns `full`; must not block.
    public init(wake: @escaping @Sendable () -> Void = {}) {
        self.wake = wake
    }

    public var demand: DecodeDemand { reasons.load(ordering: .acquiring) == 0 ? .reduced : .full }
    public var currentReasons: Reasons { Reasons(rawValue: reasons.load(ordering: .acquiring)) }

    /// Sets (`needed`) or clears `reason`; wakes the camera if that made the demand `full`.
    public func set(_ reason: Reasons, _ needed: Bool) {
        let before: UInt8
        if needed {
            before = reasons.bitwiseOr(reason.rawValue, ordering: .acquiringAndReleasing).oldValue
        } else {
            before = reasons.bitwiseAnd(~reason.rawValue, ordering: .acquiringAndReleasing).oldValue
        }
        if needed, before == 0 { wake() }
    }

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
