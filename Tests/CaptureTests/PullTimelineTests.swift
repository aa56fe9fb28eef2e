import Testing
@testable import Capture

/// The network source's timing (`PullTimeline`), on made-up arrivals: a packet's wait is the target
/// past the soonest packet's path delay, jitter never pushes it, a burst of stale pictures falls due in
/// the past, a restart re-bases at once, and a drifting source's clock is followed without the buffer
/// growing.
@Suite struct PullTimelineTests {
    static let ms: Int64 = 1_000_000
    static let frame: Int64 = 33_333_333

    /// A deterministic jitter in 0..<range ns for packet `index`.
    static func jitter(_ index: Int, range: Int64) -> Int64 { Int64((index &* 2_654_435_761) % 1000) * range / 1000 }

    @Test func jitterAddsNoDelayAndTheWaitIsTheTarget() {
        var timeline = PullTimeline(targetMilliseconds: 200)
        let path: Int64 = 50 * Self.ms
        var waits: [Int64] = []
        for index in 0..<900 {
            let media = Int64(index) * Self.frame
            let arrival = 1_000_000_000 + media + path + Self.jitter(index, range: 40 * Self.ms)
            let due = timeline.due(media: media, arrival: UInt64(arrival))
            waits.append(Int64(due) - arrival)
        }
        // Every packet is shown at its media time + the soonest path delay + the target: a late packet
        // waits less, none waits more than the target (once the soonest delay is known).
        let steady = waits.suffix(600)
        #expect(steady.allSatisfy { $0 <= 200 * Self.ms && $0 > 150 * Self.ms }, "\(steady.min()!) ... \(steady.max()!)")
        #expect(timeline.rebases == 0)
    }

    @Test func aBurstOfStalePicturesAtConnectFallsDueTogether() {
        var timeline = PullTimeline(targetMilliseconds: 200)
        // An RTMP server's cached second of pictures arrives at once, then the live ones in real time.
        let connect: Int64 = 5_000_000_000
        var dues: [(due: Int64, arrival: Int64)] = []
        for index in 0..<30 {
            let media = Int64(index) * Self.frame
            dues.append((Int64(timeline.due(media: media, arrival: UInt64(connect + Int64(index) * Self.ms))), connect + Int64(index) * Self.ms))
        }
        for index in 30..<120 {
            let media = Int64(index) * Self.frame
            let arrival = connect + (media - 29 * Self.frame) + 30 * Self.ms
            dues.append((Int64(timeline.due(media: media, arrival: UInt64(arrival))), arrival))
        }
        // The burst's pictures all fall due together, no later than the first live one (the playout then
        // shows the newest of them only, not the old second played out); the live ones wait about the
        // target: nothing of the old second delays them.
        let burst = dues.prefix(30).map(\.due)
        #expect(burst.max()! - burst.min()! <= 30 * Self.ms && burst.max()! <= dues[30].due, "\(burst)")
        let live = dues.suffix(60).map { $0.due - $0.arrival }
        #expect(live.allSatisfy { $0 <= 200 * Self.ms && $0 >= 150 * Self.ms }, "\(live.min()!) ... \(live.max()!)")
    }

    @Test func aPublisherThatRestartsItsTimestampsIsRebasedAtOnce() {
        var timeline = PullTimeline(targetMilliseconds: 100)
        for index in 0..<300 {
            _ = timeline.due(media: 100_000_000_000 + Int64(index) * Self.frame, arrival: UInt64(1_000_000_000 + Int64(index) * Self.frame))
        }
        // The same publisher, restarted: media time from 0 again, arriving right on.
        let arrival: Int64 = 1_000_000_000 + 300 * Self.frame + 500 * Self.ms
        let due = Int64(timeline.due(media: 0, arrival: UInt64(arrival)))
        #expect(timeline.rebases == 1)
        #expect(due - arrival == 100 * Self.ms)
        let next = Int64(timeline.due(media: Self.frame, arrival: UInt64(arrival + Self.frame)))
        #expect(next - (arrival + Self.frame) == 100 * Self.ms)
    }

    @Test func aSlowSourceClockIsFollowedAndTheBufferDoesNotGrow() {
        // The source's clock runs 300 ppm slow: its media time advances 0.9997 s a second of ours, so
        // packets arrive later and later against their timestamps.
        var timeline = PullTimeline(targetMilliseconds: 200)
        var worst: Int64 = 0
        for index in 0..<(30 * 120) {
            let ours = Int64(index) * Self.frame
            let media = ours - ours * 300 / 1_000_000
            let arrival = 2_000_000_000 + ours + 20 * Self.ms + Self.jitter(index, range: 10 * Self.ms)
            let due = Int64(timeline.due(media: media, arrival: UInt64(arrival)))
            if index > 30 * 20 { worst = max(worst, abs(due - arrival)) }
        }
        // Without following, the wait would shrink by 36 ms over the two minutes and run out; followed,
        // it stays within the target and a window's drift of it.
        #expect(worst <= 200 * Self.ms && worst >= 150 * Self.ms, "\(worst / Self.ms) ms")
        let drift = timeline.driftPPM ?? 0
        #expect(abs(drift - 300) < 60, "drift \(drift) ppm")
    }

    /// A compressed packet (the ISO's copy) reads the pictures' mapping; it starts or re-bases the
    /// timeline only where its picture would, so the pictures' due times are the same with it or without.
    @Test func aPacketsMappingIsThePicturesAndLeavesTheirTimingAlone() {
        var alone = PullTimeline(targetMilliseconds: 200)
        var copied = PullTimeline(targetMilliseconds: 200)
        let path: Int64 = 50 * Self.ms
        for index in 0..<300 {
            // A restart at packet 150: the media clock from zero again.
            let media = Int64(index < 150 ? index + 1000 : index - 150) * Self.frame
            let arrival = UInt64(10_000 * Self.ms + Int64(index) * Self.frame + path + Self.jitter(index, range: 20 * Self.ms))
            let offset = copied.mapping(media: media, arrival: arrival)
            let due = copied.due(media: media, arrival: arrival)
            #expect(due == alone.due(media: media, arrival: arrival), "packet \(index)")
            // The packet's mapping is where its picture falls due, give or take the base's move on this picture.
            #expect(abs(Int64(due) - (media + offset)) <= 20 * Self.ms, "packet \(index)")
        }
        #expect(copied.rebases == 1 && alone.rebases == 1)
    }
}
