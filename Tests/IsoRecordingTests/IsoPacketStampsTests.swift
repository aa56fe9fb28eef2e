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
        #expect(stamps.stamp(Self.timing(0, offset: offset), isKeyframe: false, sequence: 1) == .skip)
        #expect(stamps.stamp(Self.timing(1, offset: offset), isKeyframe: false, sequence: 2) == .skip)
        let key = Self.milliseconds(stamps.stamp(Self.timing(2, offset: offset), isKeyframe: true, sequence: 3))
        #expect(key?.dts == 2_080 && key?.pts == 2_080, "\(String(describing: key))")
        // A reordered stream (pts two frames after dts) keeps its spacing; the duration is the stream's or a frame.
        let next = stamps.stamp(Self.timing(3, offset: offset, reorder: 2 * Self.frame), isKeyframe: false, sequence: 4)
        #expect(Self.milliseconds(next).map { $0.pts - $0.dts } == 80)
        #expect(next == .write(pts: .milliseconds(2_200), dts: .milliseconds(2_120), duration: .milliseconds(33)))
    }

    @Test func theAnchorFollowsTheMappingAtKeyframesOnly() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        _ = stamps.stamp(Self.timing(0, offset: offset), isKeyframe: true, sequence: 1)
        // The timeline slewed 10 ms: within the group the anchor holds, at the next keyframe it follows.
        let held = Self.milliseconds(stamps.stamp(Self.timing(1, offset: offset + 10 * Self.ms), isKeyframe: false, sequence: 2))
        #expect(held?.dts == 2_040)
        let followed = Self.milliseconds(stamps.stamp(Self.timing(2, offset: offset + 10 * Self.ms), isKeyframe: true, sequence: 3))
        #expect(followed?.dts == 2_090)
        // Within the tolerance it does not move (no 1 ms wobble at every keyframe).
        let kept = Self.milliseconds(stamps.stamp(Self.timing(3, offset: offset + 11 * Self.ms), isKeyframe: true, sequence: 4))
        #expect(kept?.dts == 2_130)
    }

    @Test func aRefusedPacketANewEpochOrAMappingThatMovedBackWaitForTheNextKeyframe() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        #expect(stamps.stamp(Self.timing(0, offset: offset), isKeyframe: true, sequence: 1) != .skip)
        // The queue refused packet 2 (sequence 2 missing): 3 cannot be decoded, nor anything until a keyframe.
        #expect(stamps.stamp(Self.timing(2, offset: offset), isKeyframe: false, sequence: 3) == .skip)
        #expect(stamps.stamp(Self.timing(3, offset: offset), isKeyframe: false, sequence: 4) == .skip)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(4, offset: offset), isKeyframe: true, sequence: 5))?.dts == 2_160)
        // A publisher's restart: a new epoch, its media clock from 7 s again, 3 s later in program time.
        let later = Self.offset(programMs: 5_000)
        #expect(stamps.stamp(Self.timing(1, offset: later, epoch: 1), isKeyframe: false, sequence: 6) == .skip)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(2, offset: later, epoch: 1), isKeyframe: true, sequence: 7))?.dts == 5_080)
        // The mapping moved back a second (a burst): the keyframe would land before what is written.
        let back = later - 1_000 * Self.ms
        #expect(stamps.stamp(Self.timing(10, offset: back, epoch: 1), isKeyframe: true, sequence: 8) == .skip)
        #expect(stamps.stamp(Self.timing(11, offset: back, epoch: 1), isKeyframe: false, sequence: 9) == .skip)
        // The next keyframe after the last written goes, on the new mapping.
        #expect(Self.milliseconds(stamps.stamp(Self.timing(40, offset: back, epoch: 1), isKeyframe: true, sequence: 10))?.dts == 5_600)
    }

    @Test func nothingBeforeTheProgramsOrigin() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: -40)
        #expect(stamps.stamp(Self.timing(0, offset: offset), isKeyframe: true, sequence: 1) == .skip)
        #expect(stamps.stamp(Self.timing(1, offset: offset), isKeyframe: false, sequence: 2) == .skip)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(30, offset: offset), isKeyframe: true, sequence: 3))?.dts == 1_160)
    }

    /// The path's delay fell 100 ms (a loaded machine's late packets, then prompt ones): the keyframe goes
    /// just after the last packet written, and the next keyframe catches up the rest. Nothing is set aside.
    @Test func aMappingThatMovedBackALittleIsCaughtUpAtKeyframes() {
        var stamps = IsoPacketStamps(origin: Self.origin, frameDuration: .milliseconds(33))
        let offset = Self.offset(programMs: 2_000)
        for index in 0..<3 { _ = stamps.stamp(Self.timing(index, offset: offset), isKeyframe: index == 0, sequence: index + 1) }
        let back = offset - 100 * Self.ms
        // On the new mapping the keyframe would be at 2020, before 2080: it goes at 2081.
        #expect(Self.milliseconds(stamps.stamp(Self.timing(3, offset: back), isKeyframe: true, sequence: 4))?.dts == 2_081)
        #expect(Self.milliseconds(stamps.stamp(Self.timing(4, offset: back), isKeyframe: false, sequence: 5))?.dts == 2_121)
        // The next keyframe catches up further (on the mapping 2100, which is not after 2121: 2122) ...
        #expect(Self.milliseconds(stamps.stamp(Self.timing(5, offset: back), isKeyframe: true, sequence: 6))?.dts == 2_122)
        for index in 6..<10 { #expect(stamps.stamp(Self.timing(index, offset: back), isKeyframe: false, sequence: index + 1) != .skip) }
        // ... and the one after lands on the mapping: 1900 + 400.
        #expect(Self.milliseconds(stamps.stamp(Self.timing(10, offset: back), isKeyframe: true, sequence: 11))?.dts == 2_300)
    }
}
