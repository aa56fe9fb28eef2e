import Foundation
import Synchronization

/// A media player (`players:` in the config): a source that plays a list of items, video files and
/// stills, named like any camera by its `name` (identity `player:NAME`, backend `player`).
public struct PlayerSpec: Sendable, Equatable, Encodable {
    /// The camera's name (`name:`), as `studio switch` and `studio play` take it.
    public var name: CameraID
    /// The files it plays, in order (`items:`): video files libavformat reads, or stills (PNG, JPEG).
    public var items: [String]
    /// What happens when an item ends (`end:`).
    public var end: PlayerEnd
    /// How long a still is shown (`still_seconds:`).
    public var stillSeconds: Double
    /// Plays on the frame it goes on air (`autoplay:`): by a switch, a cut, an auto, or a scene or
    /// overlay that shows it.
    public var autoplay: Bool
    /// Goes back to its first item's first frame each time it goes on air (`restart:`).
    public var restart: Bool
    /// The transition `end: cut-back` takes back (`end_transition:`); nil: the configured default.
    public var endTransition: TransitionSpec?

    public static let defaultStillSeconds = 5.0

    public init(name: CameraID, items: [String], end: PlayerEnd = .hold, stillSeconds: Double = PlayerSpec.defaultStillSeconds,
                autoplay: Bool = false, restart: Bool = false, endTransition: TransitionSpec? = nil) {
        self.name = name
        self.items = items
        self.end = end
        self.stillSeconds = stillSeconds
        self.autoplay = autoplay
        self.restart = restart
        self.endTransition = endTransition
    }

    /// The camera's identity, as the event store keeps it.
    public var identity: String { "player:" + name.name }

    /// An item's name as commands and events give it: its file name (`intro.mov`).
    public static func itemName(_ path: String) -> String { (path as NSString).lastPathComponent }

    /// The index of the item `text` names (its file name, its path, or its number from 1); nil if none.
    public func item(named text: String) -> Int? {
        if let index = items.firstIndex(where: { $0 == text || Self.itemName($0) == text }) { return index }
        if let number = Int(text), (1...items.count).contains(number) { return number - 1 }
        return nil
    }

    /// What `milliseconds(at:)` reads.
    public static let timeForms = "seconds (12.5) or minutes and seconds (1:30, 1:02:03.5)"

    /// A time into an item (`studio seek intro 1:30`, `cue --at 12.5`) in milliseconds: seconds, or
    /// `[H:]M:SS[.fff]`; nil for anything else or a negative time.
    public static func milliseconds(at text: String) -> Int64? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let seconds = Double(parts.last!), seconds.isFinite, seconds >= 0,
              parts.count == 1 || seconds < 60 else { return nil }
        var whole: Int64 = 0
        for (index, part) in parts.dropLast().enumerated() {
            // Minutes under an hour count at most 59 (`1:75:00` is no time); the leading part is unbounded.
            let isMinutesAfterHours = parts.count == 3 && index == 1
            guard let value = Int64(part), value >= 0, value < (isMinutesAfterHours ? 60 : 100_000) else { return nil }
            whole = whole * 60 + value
        }
        return whole * 60_000 + Int64((seconds * 1000).rounded())
    }

    /// The keys of a `players:` entry (the config reads them; the snapshot writes them).
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, items, end, stillSeconds = "still_seconds", autoplay, restart, endTransition = "end_transition"
    }

    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(name.name, forKey: .name)
        try keys.encode(items, forKey: .items)
        try keys.encode(end.rawValue, forKey: .end)
        try keys.encode(stillSeconds, forKey: .stillSeconds)
        try keys.encode(autoplay, forKey: .autoplay)
        try keys.encode(restart, forKey: .restart)
        try keys.encodeIfPresent(endTransition?.description, forKey: .endTransition)
    }
}

/// What a player does when an item ends.
public enum PlayerEnd: String, Sendable, Codable, CaseIterable {
    /// Holds the item's last frame.
    case hold
    /// Shows black.
    case black
    /// Plays the item again from its start, with no gap.
    case loop
    /// Goes on to the next item, with no gap (after the last: holds).
    case next
    /// Holds, and the program goes back to what was on it before the player went on air, with a
    /// transition timed so that its last frame showing the clip shows the clip's last picture.
    case cutBack = "cut-back"
}

/// Where a player is (`studio cameras`, `/api/v1/cameras`): its item, position and state.
public struct PlayerStatus: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable, CaseIterable {
        /// Stopped, its item's first frame decoded and shown.
        case cued
        case playing
        case paused
        /// Its item over and nothing follows (`end: hold` or `black`, a truncated file).
        case ended
    }
    /// The item's file name.
    public var item: String
    /// Its index in the player's list, from 1.
    public var itemNumber: Int
    public var items: [String]
    public var state: State
    public var positionMilliseconds: Int
    /// Nil while the item's length is not known.
    public var remainingMilliseconds: Int?
    public var end: String
    /// Program frames that showed a picture already shown (a clip slower than the program), and pictures
    /// never shown (faster), since the start.
    public var repeatedFrames: Int
    public var skippedFrames: Int

    public init(item: String, itemNumber: Int, items: [String], state: State, positionMilliseconds: Int, remainingMilliseconds: Int?,
                end: String, repeatedFrames: Int = 0, skippedFrames: Int = 0) {
        self.item = item
        self.itemNumber = itemNumber
        self.items = items
        self.state = state
        self.positionMilliseconds = positionMilliseconds
        self.remainingMilliseconds = remainingMilliseconds
        self.end = end
        self.repeatedFrames = repeatedFrames
        self.skippedFrames = skippedFrames
    }

    /// One line for people: `playing intro.mov (1/2) at 1.200 s, 8.800 s left`.
    public var summary: String {
        let seconds = { (ms: Int) in String(format: "%.3f s", Double(ms) / 1000) }
        let left = remainingMilliseconds.map { ", \(seconds($0)) left" } ?? ""
        return "\(state.rawValue) \(item) (\(itemNumber)/\(items.count)) at \(seconds(positionMilliseconds))\(left)"
    }

    enum CodingKeys: String, CodingKey {
        case item, itemNumber = "item_number", items, state, positionMilliseconds = "position_ms"
        case remainingMilliseconds = "remaining_ms", end, repeatedFrames = "repeated_frames", skippedFrames = "skipped_frames"
    }
}

/// The program clock's origin (CLOCK_MONOTONIC ns of its tick 0), set by the server once it is decided
/// (after the cameras start): a source that publishes on its own grid at the program's rate (a player)
/// puts its ticks half a frame before the program's, so each of its pictures is there when the program
/// takes the newest one, whatever either thread's wake-up jitter. 0 until set.
public final class ProgramOrigin: Sendable {
    private let value = Atomic<UInt64>(0)
    public init() {}
    public var origin: UInt64? {
        let origin = value.load(ordering: .acquiring)
        return origin == 0 ? nil : origin
    }
    public func set(_ origin: UInt64) { value.store(origin, ordering: .releasing) }
}
