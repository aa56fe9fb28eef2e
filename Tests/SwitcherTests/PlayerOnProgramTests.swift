import Foundation
import Testing
import Synchronization
import Capture
import Switcher
import StudioCore
import StudioSystem
import TestSupport

/// A player on program, the program and the player on one `ManualClock`: the program takes, for each
/// tick, the player's picture for that tick (`PictureSchedule`), so a player's thread held up (not
/// scheduled, starved of CPU) for a while changes nothing on program; held up for longer than it
/// decodes ahead, the program holds its last picture and the play goes on from the next, none skipped.
@Suite struct PlayerOnProgramTests {
    /// Plays a 60-picture clip on program for 75 ticks, the player's thread held up from tick `from` for
    /// `ticks` program ticks; what the program showed at each tick, and the player's status.
    static func play(holding ticks: Int64, from start: Int64) throws -> (shown: [Int?], status: PlayerStatus?) {
        try PlayerProgramRig.withClips { directory in
            let clip = directory.appendingPathComponent("count.mp4").path
            try NumberedClips.make(clip, frames: 60, tint: 90)
            let rig = try PlayerProgramRig([PlayerSpec(name: "count", items: [clip])])
            _ = rig.players[0].transport(.play(item: nil))
            try rig.run(to: 74) { tick in
                if tick == start { rig.playerClock.hold() }
                if tick == start + ticks { rig.playerClock.release() }
            }
            return (rig.record.shown.withLock { $0 }.map { $0?.number }, rig.players[0].player)
        }
    }

    @Test func heldUpForLessThanItDecodesAheadThePlayerStillGivesTheProgramEveryPictureOnceInOrder() throws {
        let (shown, status) = try Self.play(holding: 6, from: 20)
        var numbers = shown.compactMap { $0 }
        #expect(numbers.count == shown.count, "every frame shows the clip: \(shown)")
        // Cued on 0 before the play, held on 59 after it: between them, each picture once.
        while numbers.first == 0 { numbers.removeFirst() }
        while numbers.last == 59 { numbers.removeLast() }
        #expect(numbers == Array(1...58), "\(shown)")
        #expect(status?.repeatedFrames == 0 && status?.skippedFrames == 0, "\(String(describing: status))")
    }

    @Test func heldUpForLongerTheProgramHoldsAPictureAndSkipsNone() throws {
        let (shown, status) = try Self.play(holding: 13, from: 20)
        let numbers = shown.compactMap { $0 }
        #expect(numbers.count == shown.count, "every frame shows the clip: \(shown)")
        var distinct: [Int] = []
        for number in numbers where distinct.last != number { distinct.append(number) }
        #expect(distinct == Array(0...59), "in order, none skipped: \(shown)")
        let repeats = numbers.count - distinct.count
        // The play slipped by the ticks its thread missed past what it had published: counted as repeated.
        let repeated = try #require(status?.repeatedFrames)
        #expect(repeated > 0 && repeated < 13 && status?.skippedFrames == 0, "\(String(describing: status)), \(repeats) repeats on program")
    }
}
