import Synchronization

/// A source's pictures to come, each with the time it is shown from: a source that knows its pictures
/// ahead (a player, which decodes a few ahead) publishes them here with the program tick each belongs
/// to, and the program takes, for each tick, the picture for that tick's time (`picture(at:)`), so a
/// publishing thread that wakes late makes no difference as long as the pictures it published reach
/// past that tick. Bounded (`capacity`, the newest dropped beyond it); the program never waits on it
/// (one lock, held for a copy or a look-up).
public final class PictureSchedule: Sendable {
    /// A picture and the clock time (CLOCK_MONOTONIC ns, or the program clock's) it is shown from.
    public struct Entry: Sendable {
        public let from: UInt64
        public let frame: VideoFrame
        public init(from: UInt64, frame: VideoFrame) {
            self.from = from
            self.frame = frame
        }
    }

    public static let capacity = 32
    private let entries = Mutex<[Entry]>([])
    private let onAir = Mutex<(@Sendable (Bool, UInt64) -> Void)?>(nil)

    /// How the play on screen ends when it ends with a cut back (`end: cut-back`): the time of the
    /// program tick that shows its last picture, and the transition to take (nil: the program's default).
    public struct Ending: Sendable, Equatable {
        public let lastPicture: UInt64
        public let transition: TransitionSpec?
        public init(lastPicture: UInt64, transition: TransitionSpec?) {
            self.lastPicture = lastPicture
            self.transition = transition
        }
    }
    private let endingValue = Mutex<Ending?>(nil)
    /// The play's end, once known (nil: none, or not known yet).
    public var ending: Ending? {
        get { endingValue.withLock { $0 } }
        set { endingValue.withLock { $0 = newValue } }
    }

    public init() {}

    /// Has `body` called on the program thread when the source goes on air (true: on program, in a
    /// transition to it, or in a scene or overlay on air) or off it (false), with the due time of the
    /// first tick that shows it, or does not: it must not block.
    public func whenOnAir(_ body: @escaping @Sendable (Bool, UInt64) -> Void) { onAir.withLock { $0 = body } }

    /// The program's notice that the source went on air (or off it) on the tick due at `time`.
    public func onAir(_ onAir: Bool, at time: UInt64) { self.onAir.withLock { $0 }?(onAir, time) }

    /// Pictures from before the new ones that are kept: a program tick composed late (its thread woke
    /// late) still finds its own picture, not the one after.
    public static let kept = 4

    /// Replaces what is to come with `entries`, in time order (the first the one shown now); the last
    /// `kept` pictures from before the first of them stay.
    public func replace(with entries: [Entry]) {
        let bounded = Array(entries.prefix(Self.capacity))
        self.entries.withLock { current in
            let start = bounded.first?.from ?? .max
            current = current.filter { $0.from < start }.suffix(Self.kept) + bounded
        }
    }

    /// The picture shown at `time`: the last one from `time` or before; nil when all are later (or none).
    public func picture(at time: UInt64) -> VideoFrame? {
        entries.withLock { entries in entries.last { $0.from <= time }?.frame }
    }

    /// When the last picture published is shown from (nil: none).
    public var lastFrom: UInt64? { entries.withLock { $0.last?.from } }
}
