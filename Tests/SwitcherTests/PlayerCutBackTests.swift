import Foundation
import Testing
import Capture
import Switcher
import StudioCore
import StudioSystem
import TestSupport

/// `end: cut-back`: when a player's clip ends, the program goes back to what was on it before the
/// player went on air, timed so that the last frame showing the clip shows its last picture; on a
/// `ManualClock`, the program and players as in `PlayerProgramRig`.
@Suite struct PlayerCutBackTests {
    /// A card (a still, tint 170) on program; a 30-picture clip (tint 90) that plays on air and cuts
    /// back with `transition`; the clip switched in at tick 3 (its last picture, 29, due at tick 32).
    static func play(_ directory: URL, transition: TransitionSpec?, to last: Int64, stingers: [StingerClip] = []) throws -> PlayerProgramRig {
        let card = directory.appendingPathComponent("card.png").path, clip = directory.appendingPathComponent("clip.mp4").path
        try NumberedClips.make(card, frames: 1, tint: 170)
        try NumberedClips.make(clip, frames: 30, tint: 90)
        let rig = try PlayerProgramRig([PlayerSpec(name: "card", items: [card], end: .loop),
                                        PlayerSpec(name: "clip", items: [clip], end: .cutBack, autoplay: true, endTransition: transition)])
        rig.switcher.setStingers(stingers)
        try rig.run(to: 2)
        rig.switcher.switchProgram(to: CameraID("clip")) { _ in }
        try rig.run(to: last)
        return rig
    }

    @Test func aCutBackIsOnTheFrameAfterTheClipsLastPicture() throws {
        try PlayerProgramRig.withClips { directory in
            let rig = try Self.play(directory, transition: .cut, to: 36)
            #expect(rig.shown(3...32) == (0...29).map { "90 \($0)" }, "\(rig.shown(0...36))")
            #expect(rig.shown(33...36) == Array(repeating: "170 0", count: 4), "\(rig.shown(28...36))")
            let back = try #require(rig.programEvents.last(.switchProgram))
            #expect(back.camera?.name == "card" && back.details["from"] == "clip" && back.details["reason"] == "cut-back", "\(back)")
            #expect(back.programTime == rig.grid.pts(ofFrame: 33))
            #expect(rig.switcher.status.program == .camera("card"))
        }
    }

    @Test func aMixBackRunsOverTheClipsLastPicturesAndIsAllBackTheFrameAfter() throws {
        try PlayerProgramRig.withClips { directory in
            let rig = try Self.play(directory, transition: TransitionSpec(kind: .mix, frames: 5), to: 36)
            // Its 5 frames are ticks 29...33: the clip's pictures 26...29 under them, then all card.
            #expect(rig.shown(3...28) == (0...25).map { "90 \($0)" }, "\(rig.shown(0...36))")
            #expect(rig.shown(29...32).allSatisfy { $0 != "90 \($0)" && $0 != "170 0" }, "mixed: \(rig.shown(28...36))")
            #expect(rig.shown(33...36) == Array(repeating: "170 0", count: 4), "\(rig.shown(28...36))")
            let started = try #require(rig.programEvents.last(.transitionStarted)), ended = try #require(rig.programEvents.last(.transitionEnded))
            #expect(started.details["reason"] == "cut-back" && started.details["from"] == "clip" && started.details["to"] == "card", "\(started)")
            #expect(started.programTime == rig.grid.pts(ofFrame: 29) && ended.programTime == rig.grid.pts(ofFrame: 33), "\(started) \(ended)")
            #expect(rig.programEvents.last(.switchProgram)?.details["via"] == "mix")
            #expect(rig.switcher.status.program == .camera("card"))
        }
    }

    /// A stinger as `end_transition` (5 pictures at 30 fps: 5 frames, cut at 66 ms: its frame 2): it
    /// starts so that it cuts underneath on the tick after the clip's last picture (32), ticks 31...35.
    @Test func aStingerBackCutsUnderneathOnTheTickAfterTheClipsLastPicture() throws {
        try PlayerProgramRig.withClips { directory in
            let sting = syntheticSting(fps: 30, count: 5)
            let rig = try Self.play(directory, transition: TransitionSpec(kind: .stinger, clip: sting.path, cutAtMilliseconds: 66),
                                    to: 38, stingers: [sting])
            #expect(rig.shown(3...30) == (0...27).map { "90 \($0)" }, "\(rig.shown(0...38))")
            #expect(rig.shown(36...38) == Array(repeating: "170 0", count: 3), "\(rig.shown(28...38))")
            let started = try #require(rig.programEvents.last(.transitionStarted)), ended = try #require(rig.programEvents.last(.transitionEnded))
            #expect(started.details["kind"] == "stinger" && started.details["frames"] == "5" && started.details["reason"] == "cut-back", "\(started)")
            #expect(started.programTime == rig.grid.pts(ofFrame: 31) && ended.programTime == rig.grid.pts(ofFrame: 35), "\(started) \(ended)")
            #expect(rig.programEvents.last(.switchProgram)?.details["via"] == "stinger")
        }
    }

    /// The clip as a layer of a scene on program (the clip full, the card inset in a corner above the
    /// bars read): the scene goes back to what was on program before it, on the frame after the clip's
    /// last picture.
    @Test func aSceneShowingThePlayerCutsBackToWhatWasOnProgramBeforeIt() throws {
        try PlayerProgramRig.withClips { directory in
            let card = directory.appendingPathComponent("card.png").path, clip = directory.appendingPathComponent("clip.mp4").path
            try NumberedClips.make(card, frames: 1, tint: 170)
            try NumberedClips.make(clip, frames: 30, tint: 90)
            let rig = try PlayerProgramRig([PlayerSpec(name: "card", items: [card], end: .loop),
                                            PlayerSpec(name: "clip", items: [clip], end: .cutBack, autoplay: true, endTransition: .cut)])
            try rig.switcher.setScenes([SceneDescription(name: "boxed", layout: .pip, sources: ["clip", "card"], corner: .topRight, size: 0.2)])
            try rig.run(to: 2)
            rig.switcher.switchProgram(to: .scene("boxed")) { _ in }
            try rig.run(to: 36)
            #expect(rig.shown(3...32) == (0...29).map { "90 \($0)" }, "\(rig.shown(0...36))")
            #expect(rig.shown(33...36) == Array(repeating: "170 0", count: 4), "\(rig.shown(28...36))")
            let back = try #require(rig.programEvents.last(.switchProgram))
            #expect(back.camera?.name == "card" && back.details["from"] == "boxed" && back.details["reason"] == "cut-back", "\(back)")
            #expect(back.programTime == rig.grid.pts(ofFrame: 33))
            #expect(rig.switcher.status.program == .camera("card"))
        }
    }

    @Test func switchedAwayBeforeItsEndNothingCutsBack() throws {
        try PlayerProgramRig.withClips { directory in
            let rig = try Self.play(directory, transition: .cut, to: 10)
            rig.switcher.switchProgram(to: CameraID("card")) { _ in }
            try rig.run(to: 40)
            #expect(rig.programEvents.all(.switchProgram).count == 3, "first source, clip, card: no cut-back")
        }
    }
}
