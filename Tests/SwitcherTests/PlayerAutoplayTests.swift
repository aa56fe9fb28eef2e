import Foundation
import Testing
import Capture
import Switcher
import StudioCore
import StudioSystem
import TestSupport

/// `autoplay:` and `restart:`: a player told by the program when it goes on air (`PictureSchedule.wentOnAir`)
/// plays from the frame it goes on air, and goes back to its first frame each time, on a `ManualClock`.
@Suite struct PlayerAutoplayTests {
    /// A card (a still, tint 170) on program, and a 30-picture clip (tint 90) with `flags`.
    static func rig(_ directory: URL, autoplay: Bool, restart: Bool) throws -> PlayerProgramRig {
        let card = directory.appendingPathComponent("card.png").path, clip = directory.appendingPathComponent("clip.mp4").path
        try NumberedClips.make(card, frames: 1, tint: 170)
        try NumberedClips.make(clip, frames: 30, tint: 90)
        return try PlayerProgramRig([PlayerSpec(name: "card", items: [card], end: .loop),
                                     PlayerSpec(name: "clip", items: [clip], autoplay: autoplay, restart: restart)])
    }

    static func cut(_ rig: PlayerProgramRig, to name: String) {
        rig.switcher.switchProgram(to: CameraID(name)) { _ in }
    }

    @Test func autoplayStartsOnTheFrameItGoesOnAirAndRestartFromTheTopEachTime() throws {
        try PlayerProgramRig.withClips { directory in
            let rig = try Self.rig(directory, autoplay: true, restart: true)
            try rig.run(to: 5)
            #expect(rig.players[1].player?.state == .cued)
            // On air at tick 6: its first picture there, then one a tick.
            Self.cut(rig, to: "clip")
            try rig.run(to: 20)
            #expect(rig.shown(0...5) == Array(repeating: "170 0", count: 6))
            #expect(rig.shown(6...20) == (0...14).map { "90 \($0)" }, "\(rig.shown(0...20))")
            Self.cut(rig, to: "card")
            try rig.run(to: 25)
            // Back on air: from the top, on that frame.
            Self.cut(rig, to: "clip")
            try rig.run(to: 35)
            #expect(rig.shown(21...25) == Array(repeating: "170 0", count: 5))
            #expect(rig.shown(26...35) == (0...9).map { "90 \($0)" }, "\(rig.shown(20...35))")
            #expect(rig.eventSummary.filter { $0.contains("clip") && !$0.contains("card") } ==
                    ["clip_started clip ", "clip_ended clip restarted", "clip_started clip "], "\(rig.eventSummary)")
            let status = try #require(rig.players[1].player)
            #expect(status.repeatedFrames == 0 && status.skippedFrames == 0, "\(status)")
        }
    }

    @Test func autoplayAloneGoesOnWhereItIsAndAnAutoStartsItOnTheMixsFirstFrame() throws {
        try PlayerProgramRig.withClips { directory in
            let rig = try Self.rig(directory, autoplay: true, restart: false)
            try rig.run(to: 3)
            // A 5-frame mix from the card: the clip is on air (in the mix) from its first frame, tick 4.
            rig.switcher.setPreview(.camera("clip")) { _ in }
            try rig.run(to: 4)
            rig.switcher.auto(TransitionSpec(kind: .mix, frames: 5)) { _ in }
            try rig.run(to: 12)
            // The mix's last frame (tick 9) is all clip: its picture 4 (of 0 at tick 5).
            #expect(rig.shown(10...12) == (5...7).map { "90 \($0)" }, "\(rig.shown(0...12))")
            // Off air and back: it played on meanwhile (no restart).
            Self.cut(rig, to: "card")
            try rig.run(to: 15)
            Self.cut(rig, to: "clip")
            try rig.run(to: 17)
            #expect(rig.shown(16...17) == ["90 11", "90 12"], "\(rig.shown(10...17))")
            #expect(rig.eventSummary.filter { $0.contains("clip") && !$0.contains("card") } == ["clip_started clip "], "\(rig.eventSummary)")
        }
    }

    @Test func withoutAutoplayGoingOnAirLeavesItCued() throws {
        try PlayerProgramRig.withClips { directory in
            let rig = try Self.rig(directory, autoplay: false, restart: false)
            try rig.run(to: 2)
            Self.cut(rig, to: "clip")
            try rig.run(to: 6)
            #expect(rig.shown(3...6) == Array(repeating: "90 0", count: 4))
            #expect(rig.players[1].player?.state == .cued)
        }
    }
}
