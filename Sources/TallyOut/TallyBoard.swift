import Synchronization
import StudioSystem

/// One source as tally receivers see it: its name (the display text), its number and where it is seen.
/// Who is on program and preview is the switcher's one rule (`SwitcherStatus.tally`); the server copies
/// it here, this module only speaks it.
public struct TallyLamp: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case camera, scene
    }

    public var name: String
    public var kind: Kind
    /// TSL's index (and 3.1's address): the pin's `index:`, or the camera's place in the switcher's list
    /// of sources, from 1. Scenes have none (nil): they have no light.
    public var index: UInt16?
    public var program: Bool
    public var preview: Bool

    public init(name: String, kind: Kind, index: UInt16?, program: Bool = false, preview: Bool = false) {
        self.name = name
        self.kind = kind
        self.index = index
        self.program = program
        self.preview = preview
    }
}

/// Every source's lamp, in a stable order: cameras by index, then scenes as declared. vMix's input
/// numbers are places in this order, from 1.
public struct TallyBoard: Sendable, Equatable {
    public var lamps: [TallyLamp]
    /// What is selected for program and for preview (a camera or a scene), by name.
    public var program: String?
    public var preview: String?

    public init(lamps: [TallyLamp] = [], program: String? = nil, preview: String? = nil) {
        self.lamps = lamps
        self.program = program
        self.preview = preview
    }

    /// The lamp of the source named `name`.
    public func lamp(named name: String) -> TallyLamp? { lamps.first { $0.name == name } }
}

/// The board handed from the program thread to the tally threads: the newest one only (`LatestValue`),
/// never a queue, so a slow receiver never holds the switcher. The server publishes on each `tally`
/// event; readers that wake without one (their once-a-second resend) `refresh` it, which catches
/// cameras that came or went without a tally change.
public final class TallyFeed: Sendable {
    private let slot = LatestValue<TallyBoard>()
    private let read: @Sendable () -> TallyBoard
    /// Called after every new board (the vMix server's wake-up), from the publishing thread; must not block.
    private let listeners = Mutex<[@Sendable () -> Void]>([])
    /// Held while a board is read and published, so an older reading never replaces a newer one.
    private let gate = Mutex(())

    /// `read` makes the board from the switcher's state now; any thread, cheap (a lock or two).
    public init(read: @escaping @Sendable () -> TallyBoard) {
        self.read = read
        slot.publish(read())
    }

    /// The tally changed: the new board for every reader.
    public func changed() { refresh() }

    /// Reads the board again; published when it differs (a camera came or went).
    public func refresh() {
        let published = gate.withLock { _ -> Bool in
            let board = read()
            guard board != slot.latest().value else { return false }
            slot.publish(board)
            return true
        }
        if published { for listener in listeners.withLock({ $0 }) { listener() } }
    }

    public var latest: (board: TallyBoard, version: UInt64) {
        let (value, version) = slot.latest()
        return (value ?? TallyBoard(), version)
    }

    /// Waits up to `seconds` for a board newer than `version`.
    public func wait(newerThan version: UInt64, seconds: Double) -> (board: TallyBoard, version: UInt64) {
        let (value, newest) = slot.waitForNewer(than: version, timeoutSeconds: seconds)
        return (value ?? TallyBoard(), newest)
    }

    func onChange(_ listener: @escaping @Sendable () -> Void) { listeners.withLock { $0.append(listener) } }
}
