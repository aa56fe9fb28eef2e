import StudioCore
import Capture

/// Program times for a network camera's copied H.264/HEVC packets (`IsoPassthrough`). Pure logic.
///
/// A packet's program time is its media time plus the mapping its picture is timed by (`StreamTiming`:
/// due on this machine's clock, the jitter buffer's `PullTimeline`) minus the program's origin: the
/// frame the program showed at T is at T in the ISO, to within the tick that took it. Within a group of
/// pictures the mapping is held (an anchor), so a reordered stream's pts and dts keep their spacing; at
/// each keyframe the anchor follows the mapping when it moved more than `tolerance` (the timeline's slow
/// slew, its drift), so the file does not drift from the program over hours; a move back is caught up
/// as far as the last packet written allows (`catchUpLimit`).
///
/// The file must stay decodable, so a packet is set aside (`Decision.skip`), and every one after it
/// until the next keyframe, when: the copy has not started yet (it starts at a keyframe), the mapping's
/// epoch changed (a new connection, a publisher's restart, a jump of its timestamps), a packet before
/// it was refused by the queue (`refusals` grew), it falls before the program's origin, or its dts
/// would not come after the last one written (the mapping moved back further than `catchUpLimit`).
/// A keyframe that lands after the last packet written starts the copy again, in the same file.
struct IsoPacketStamps {
    enum Decision: Equatable {
        case write(pts: MediaTime, dts: MediaTime, duration: MediaTime)
        case skip
    }

    /// The anchor follows the mapping at a keyframe when it moved more than this (ns).
    static let tolerance: Int64 = 2_000_000
    /// A mapping that moved back by up to this much more than the time since the last packet written
    /// (ns: the path's delay fell, on a loaded machine or after a stall) is caught up over the next
    /// keyframes, each placed just after the last packet written; further back (a connect's burst),
    /// packets are set aside until a keyframe lands after it.
    static let catchUpLimit: Int64 = 500_000_000

    /// CLOCK_MONOTONIC ns of the program's time 0.
    let origin: UInt64
    /// A packet's duration when the stream does not say.
    let frameDuration: MediaTime
    private var anchor: Int64?
    private var epoch: Int?
    private var refusals: Int?
    private var waiting = true
    private var lastDTS: MediaTime?
    private var lastAudioDTS: MediaTime?

    init(origin: UInt64, frameDuration: MediaTime) {
        self.origin = origin
        self.frameDuration = frameDuration
    }

    /// The copy starts again at the next keyframe (a new stream description, a new file).
    mutating func restart() { waiting = true }

    /// `refusals`: the frames its queue had refused before this one (`CompressedVideoFrame.refusedBefore`).
    mutating func stamp(_ timing: StreamTiming, isKeyframe: Bool, refusals: Int) -> Decision {
        defer { self.refusals = refusals }
        if epoch != timing.epoch || self.refusals.map({ refusals != $0 }) == true { waiting = true }
        epoch = timing.epoch
        if isKeyframe, waiting || anchor.map({ abs(timing.offset - $0) > Self.tolerance }) != false {
            var next = timing.offset
            if let lastDTS {
                // Moved back a little: the keyframe goes just after the last packet written (the program's
                // playout skipped those pictures too), and the next keyframes catch up the rest.
                let shortfall = (lastDTS.milliseconds + 1) * 1_000_000 - (timing.dts &+ next &- Int64(clamping: origin))
                if shortfall > 0, shortfall <= Self.catchUpLimit { next += shortfall }
            }
            anchor = next
            waiting = false
        }
        guard !waiting, let anchor else { return .skip }
        let dts = programTime(timing.dts, anchor)
        guard dts >= .zero, lastDTS.map({ dts.milliseconds > $0.milliseconds }) != false else {
            waiting = true
            return .skip
        }
        lastDTS = dts
        let pts = max(dts, programTime(timing.pts, anchor))
        let duration = timing.duration > 0 ? MediaTime(microseconds: timing.duration / 1000) : frameDuration
        return .write(pts: pts, dts: dts, duration: duration)
    }

    /// The source's own sound (its AAC, copied to the ISO's second audio track): on the video's anchor, so
    /// sound and pictures keep the sync they came with; nothing while the video waits for a keyframe,
    /// and a packet that would not follow the last one (the anchor moved back) is set aside.
    mutating func stampAudio(_ timing: StreamTiming) -> Decision {
        guard !waiting, let anchor, epoch == timing.epoch else { return .skip }
        let dts = programTime(timing.dts, anchor)
        guard dts >= .zero, lastAudioDTS.map({ dts.milliseconds > $0.milliseconds }) != false else { return .skip }
        lastAudioDTS = dts
        return .write(pts: max(dts, programTime(timing.pts, anchor)), dts: dts, duration: MediaTime(microseconds: max(0, timing.duration) / 1000))
    }

    private func programTime(_ media: Int64, _ anchor: Int64) -> MediaTime {
        MediaTime(microseconds: (media &+ anchor &- Int64(clamping: origin)) / 1000)
    }
}
