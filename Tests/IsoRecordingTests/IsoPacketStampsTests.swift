import Testing
import StudioCore
import Capture
@testable import IsoRecording

/// A network camera's copied packets on the program's timeline (`IsoPacketStamps`), on made-up
/// mappings: its media times plus the mapping less the origin, from a keyframe, the spacing of a
/// reordered stream kept within a group of pictures, the anchor following the mapping at keyframes, and
/// every event that would break the file's decoding (a new epoch, a refused packet, a mapping that moved
/// back) set aside until the next keyframe.
@Suite struct IsoPacketStampsTests {
    static let ms: Int64 = 1_000_000
    static let frame: Int64 = 40 * ms
    static let origin: UInt64 = 1_000_000_000_000

    /// Packet `index` of a stream whose media clock starts at 7 s, mapped so it is due `offset` after.
    static func timing(_ index: Int, offset: Int64, epoch: Int = 0, reorder: Int64 = 0) -> StreamTiming {
        let dts = 7_000 * ms + Int64(index) * frame
        return StreamTiming(pts: dts + reorder, dts: dts, duration: 0, offset: offset, epoch: epoch)
    }

    /// The offset that puts media time 7 s at program time `programMs`.
    static func offset(programMs: Int64) -> Int64 { Int64(origin) + programMs * ms - 7_000 * ms }

    static func milliseconds(_ decision: IsoPacketStamps.Decision) -> (pts: Int64, dts: Int64)? {
        guard case .write(let pts, let dts, _) = decision else { return nil }
        return (pts.milliseconds, dts.milliseconds)
    }

    @Test func packetsGoAtTheirMediaTimeOnTheMappingFromAKeyframe() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        // Joined between keyframes: set aside until the keyframe.
        #expect(stamps.stamp(Self.timing(0, offset: offset), isKeyframe: false, refusals: 0) == .skip)
        #expect(stamps.stamp(Self.timing(1, offset: offset), isKeyframe: false, refusals: 0) == .skip)
        let key = Self.milliseconds(stamps.stamp(Self.timing(2, offset: offset), isKeyframe: true, refusals: 0))
        #expect(key?.dts == 2_080 && key?.pts == 2_080, "\(String(describing: key))")
        // A reordered stream (pts two frames after dts) keeps its spacing; the duration is the stream's or a frame.
        let next = stamps.stamp(Self.timing(3, offset: offset, reorder: 2 * Self.frame), isKeyframe: false, refusals: 0)
        #expect(Self.milliseconds(next).map { $0.pts - $0.dts } == 80)
        #expect(next == .write(pts: .milliseconds(2_200), dts: .milliseconds(2_120), duration: .milliseconds(33)))
    }

    @Test func theAnchorFollowsTheMappingAtKeyframesOnly() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        _ = stamps.stamp(Self.timing(0, offset: offset), isKeyframe: true, refusals: 0)
        // The timeline slewed 10 ms: within the group the anchor holds, at the next keyframe it follows.
        let held = Self.milliseconds(stamps.stamp(Self.timing(1, offset: offset + 10 * Self.ms), isKeyframe: false, refusals: 0))
        #expect(held?.dts == 2_040)
        let followed = Self.milliseconds(stamps.stamp(Self.timing(2, offset: offset + 10 * Self.ms), isKeyframe: true, refusals: 0))
        #expect(followed?.dts == 2_090)
        // Within the tolerance it does not move (no 1 ms wobble at every keyframe).
        let kept = Self.milliseconds(stamps.stamp(Self.timing(3, offset: offset + 11 * Self.ms), isKeyframe: true, refusals: 0))
        #expect(kept?.dts == 2_130)
    }

    @Test func aRefusedPacketANewEpochOrAMappingThatMovedBackWaitForTheNextKeyframe() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        #expect(stamps.stamp(Self.timing(0, offset: offset), isKeyframe: true, refusals: 0) != .skip)
        // The queue refused packet 2 (its count of refusals grew): 3 cannot be decoded, nor anything until a keyframe.
        #expect(stamps.stamp(Self.timing(2, offset: offset), isKeyframe: false, refusals: 1) == .skip)
        #expect(stamps.stamp(Self.timing(3, offset: offset), isKeyframe: false, refusals: 1) == .skip)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(4, offset: offset), isKeyframe: true, refusals: 1))?.dts == 2_160)
        // A publisher's restart: a new epoch, its media clock from 7 s again, 3 s later in program time.
        let later = Self.offset(programMs: 5_000)
        #expect(stamps.stamp(Self.timing(1, offset: later, epoch: 1), isKeyframe: false, refusals: 1) == .skip)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(2, offset: later, epoch: 1), isKeyframe: true, refusals: 1))?.dts == 5_080)
        // The mapping moved back a second (a burst): the keyframe would land before what is written.
        let back = later - 1_000 * Self.ms
        #expect(stamps.stamp(Self.timing(10, offset: back, epoch: 1), isKeyframe: true, refusals: 1) == .skip)
        #expect(stamps.stamp(Self.timing(11, offset: back, epoch: 1), isKeyframe: false, refusals: 1) == .skip)
        // The next keyframe after the last written goes, on the new mapping.
        #expect(Self.milliseconds(stamps.stamp(Self.timing(40, offset: back, epoch: 1), isKeyframe: true, refusals: 1))?.dts == 5_600)
    }

    @Test func nothingBeforeTheProgramsOrigin() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: -40)
        #expect(stamps.stamp(Self.timing(0, offset: offset), isKeyframe: true, refusals: 0) == .skip)
        #expect(stamps.stamp(Self.timing(1, offset: offset), isKeyframe: false, refusals: 0) == .skip)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(30, offset: offset), isKeyframe: true, refusals: 0))?.dts == 1_160)
    }

    /// The path's delay fell 100 ms (a loaded machine's late packets, then prompt ones): the keyframe goes
    /// just after the last packet written, and the next keyframe catches up the rest. Nothing is set aside.
    @Test func aMappingThatMovedBackALittleIsCaughtUpAtKeyframes() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        for index in 0..<3 { _ = stamps.stamp(Self.timing(index, offset: offset), isKeyframe: index == 0, refusals: 0) }
        let back = offset - 100 * Self.ms
        // On the new mapping the keyframe would be at 2020, before 2080: it goes at 2081.
        #expect(Self.milliseconds(stamps.stamp(Self.timing(3, offset: back), isKeyframe: true, refusals: 0))?.dts == 2_081)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(4, offset: back), isKeyframe: false, refusals: 0))?.dts == 2_121)
        // The next keyframe catches up further (on the mapping 2100, which is not after 2121: 2122) ...
        #expect(Self.milliseconds(stamps.stamp(Self.timing(5, offset: back), isKeyframe: true, refusals: 0))?.dts == 2_122)
        for index in 6..<10 { #expect(stamps.stamp(Self.timing(index, offset: back), isKeyframe: false, refusals: 0) != .skip) }
        // ... and the one after lands on the mapping: 1900 + 400.
        #expect(Self.milliseconds(stamps.stamp(Self.timing(10, offset: back), isKeyframe: true, refusals: 0))?.dts == 2_300)
    }

    /// The camera's own sound goes on its pictures' anchor (the sync it came with), nothing before the
    /// first keyframe nor while the pictures wait for one, and never backwards.
    @Test func theSoundGoesOnThePicturesAnchor() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        func sound(_ media: Int64, epoch: Int = 0) -> StreamTiming {
            StreamTiming(pts: media, dts: media, duration: 21_333_333, offset: offset + 7 * Self.ms, epoch: epoch)
        }
        #expect(stamps.stampAudio(sound(7_000 * Self.ms)) == .skip)
        _ = stamps.stamp(Self.timing(0, offset: offset), isKeyframe: true, refusals: 0)
        // 10 ms after the keyframe's media time: 10 ms after it in the file, whatever the sound's own mapping says.
        #expect(stamps.stampAudio(sound(7_010 * Self.ms)) == .write(pts: .milliseconds(2_010), dts: .milliseconds(2_010), duration: MediaTime(microseconds: 21_333)))
        #expect(stamps.stampAudio(sound(7_005 * Self.ms)) == .skip)
        // A new epoch: nothing until the pictures' next keyframe.
        #expect(stamps.stampAudio(sound(7_050 * Self.ms, epoch: 1)) == .skip)
    }
}
