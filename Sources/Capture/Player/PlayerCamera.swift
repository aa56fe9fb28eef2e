import Foundation
import Synchronization
import StudioCore
import StudioSystem

/// What the operator asks of a player (`studio play`, `pause`, `stop`, `cue`, `next`); items by index.
public enum PlayerCommand: Sendable, Equatable {
    /// Plays from where it is (an item given: from that item's start; ended: its item again).
    case play(item: Int?)
    case pause
    /// Back to the first item's first frame, stopped (cued).
    case stop
    /// To an item's first frame (or its picture `at` ns into it), stopped.
    case cue(item: Int, at: Int64 = 0)
    /// To `to` ns into the item on screen: playing on from there if it played, else cued there.
    case seek(to: Int64)
    /// On to the next item (playing on if it played).
    case next
    /// It went on air on the program tick due at `at` (the program's notice, `PictureSchedule.onAir`):
    /// `autoplay:` plays with that tick as the play's first (`restart:` cues its first item first, if
    /// it is not there).
    case onAir(at: UInt64)
    /// It went off air: `restart:` cues its first item (shown on preview until it is on air again).
    case offAir
}

/// A camera the operator plays like a deck (a player): the server finds it by this protocol alone.
public protocol PlayableCamera: Camera {
    var playerSpec: PlayerSpec { get }
    /// Hands `command` to the player's thread and waits (up to 2 s) until it took it: the status after it.
    func transport(_ command: PlayerCommand) -> PlayerStatus
}

/// A media player as a camera (`players:`): its items played on its own thread (`player.NAME`), which
/// decodes ahead into a small bounded queue of pictures and sound with their times on the play's
/// timeline (`PlayerReader`) and, on a grid at the program's rate, publishes the picture whose time has
/// come on the clock: a clip at another rate is shown by the clock (24 fps into 30: some pictures twice,
/// counted in `repeatedFrames`). The next item and a loop's restart are read ahead in the same queue,
/// so no black or stale frame comes between them. Its sound (where an item has some) is pushed into
/// `audio` as its time comes, with its pictures.
public final class PlayerCamera: PlayableCamera {
    /// Pictures decoded ahead.
    static let queuedPictures = 8

    public let id: CameraID
    public let backend: BackendName
    public let identity: String
    public let displayName: String
    public let frames = LatestValue<VideoFrame>()
    /// The pictures of the play ahead, each with the tick it is shown from (the program takes its tick's).
    let upcoming = PictureSchedule()
    public var schedule: PictureSchedule? { upcoming }
    public let playerSpec: PlayerSpec
    let sound: TimedAudioInput
    public var audio: (any ClockedAudioInput)? { sound }
    public var threadName: String { "player.\(id.name)" }

    let clock: any Clock
    let rate: Rational
    let programOrigin: ProgramOrigin
    let log: @Sendable (String) -> Void
    let emit: @Sendable (StudioEvent) -> Void
    struct Shared {
        var state = CameraState.stopped
        var statistics = CaptureStatistics()
        var format: CameraFormat?
        var status: PlayerStatus
    }
    let shared: Mutex<Shared>
    /// Commands waiting for the thread, how many were handed in and how many it took: read and written
    /// only under `commandLock` (the callers of `transport` and the player's thread), hence unsafe.
    let commandLock = ConditionLock()
    nonisolated(unsafe) var pending: [PlayerCommand] = []
    nonisolated(unsafe) var taken = 0
    nonisolated(unsafe) var submitted = 0
    let worker = WorkerThread()

    /// A camera for `spec` on `clock`, shown at the program's `rate`, its ticks half a frame before the
    /// program's once `programOrigin` is set (before: on a grid of its own).
    public init(spec: PlayerSpec, id: CameraID, rate: Rational, clock: any Clock = .monotonic, programOrigin: ProgramOrigin = ProgramOrigin(),
                log: @escaping @Sendable (String) -> Void, emit: @escaping @Sendable (StudioEvent) -> Void) {
        self.programOrigin = programOrigin
        playerSpec = spec
        self.id = id
        backend = .player
        identity = spec.identity
        displayName = "player: " + spec.items.map(PlayerSpec.itemName).joined(separator: ", ")
        self.rate = rate
        self.clock = clock
        self.log = log
        self.emit = emit
        sound = TimedAudioInput(id.name + " clip", clock: clock)
        shared = Mutex(Shared(status: PlayerStatus(item: PlayerSpec.itemName(spec.items[0]), itemNumber: 1,
                                                   items: spec.items.map(PlayerSpec.itemName), state: .cued,
                                                   positionMilliseconds: 0, remainingMilliseconds: nil, end: spec.end.rawValue)))
        upcoming.whenOnAir { [weak self] onAir, at in self?.notify(onAir ? .onAir(at: at) : .offAir) }
    }

    deinit { worker.requestStop() }

    public var state: CameraState { shared.withLock { $0.state } }
    public var currentFormat: CameraFormat? { shared.withLock { $0.format } }
    public var statistics: CaptureStatistics { shared.withLock { $0.statistics } }
    public var player: PlayerStatus? { shared.withLock { $0.status } }

    public func start() {
        worker.start(name: threadName, prepare: { shared.withLock { $0.state = .starting } }) { [self] in
            var deck = PlayerDeck(camera: self)
            deck.run()
        }
    }

    public func stop() {
        worker.stop()
        shared.withLock { $0.state = .stopped }
        commandLock.withLock {
            pending.removeAll()
            taken = submitted
            commandLock.broadcast()
        }
    }

    public func transport(_ command: PlayerCommand) -> PlayerStatus {
        let deadline = MonotonicClock.now() + 2_000_000_000
        commandLock.withLock {
            pending.append(command)
            submitted += 1
            let ticket = submitted
            while taken < ticket, MonotonicClock.now() < deadline {
                _ = commandLock.wait(untilMonotonic: min(deadline, MonotonicClock.now() + 50_000_000))
            }
        }
        return shared.withLock { $0.status }
    }

    /// Hands `command` to the player's thread without waiting (from the program thread).
    func notify(_ command: PlayerCommand) {
        commandLock.withLock {
            pending.append(command)
            submitted += 1
        }
    }

    /// The thread's side: the commands given since the last call (and a note that they are taken once
    /// `done` ran them).
    func takeCommands(_ done: ([PlayerCommand]) -> Void) {
        let commands = commandLock.withLock {
            defer { pending.removeAll() }
            return pending
        }
        guard !commands.isEmpty else { return }
        done(commands)
        commandLock.withLock {
            taken += commands.count
            commandLock.broadcast()
        }
    }
}
