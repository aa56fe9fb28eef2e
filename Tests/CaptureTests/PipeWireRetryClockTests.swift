import Testing
import Capture
import StudioCore
import StudioSystem
import TestSupport

/// The discoveries' retries without a daemon are timed on the clock they are given: on a manual clock
/// a retry an hour away does not come while the daemon is already there, and comes as soon as the hour
/// has passed on that clock (no hour of real time, no sleep in the test).
extension PipeWireDaemonTests {
@Suite(.serialized) struct PipeWireRetryClockTests {
    static let hour: UInt64 = 3_600_000_000_000

    /// Moves `clock` on by `nanoseconds` and waits until the discovery's thread looked at the new time
    /// and sleeps on the clock again.
    static func advance(_ clock: ManualClock, by nanoseconds: UInt64) -> Bool {
        clock.advance(by: nanoseconds)
        return clock.waitForSleepers(1)
    }

    @Test func aCameraDiscoveryRetriesOnItsClock() throws {
        let rig = try PipeWireRig()
        let clock = ManualClock()
        let discovery = PipeWireDiscovery(namer: MemoryNamer().namer, remote: rig.remote, retryInterval: 3600, clock: clock)
        let log = DiscoveryLog()
        discovery.start(onAdded: log.onAdded, onRemoved: log.onRemoved)
        defer { discovery.stop() }
        #expect(!discovery.isConnected)
        #expect(clock.waitForSleepers(1), "the discovery's thread waits for its retry on the clock")
        try rig.start()
        #expect(Self.advance(clock, by: Self.hour - 1_000_000_000))
        #expect(!discovery.isConnected, "retried before its interval had passed on the clock")
        clock.advance(by: 1_000_000_000)
        #expect(waitUntil(seconds: 10) { discovery.isConnected }, "not retried once the interval had passed on the clock")
    }

    @Test func anAudioDiscoveryRetriesOnItsClock() throws {
        let rig = try PipeWireRig()
        let clock = ManualClock()
        let discovery = PipeWireAudioDiscovery(remote: rig.remote, retryInterval: 3600, clock: clock)
        discovery.start(onAdded: { _ in }, onRemoved: { _ in })
        defer { discovery.stop() }
        #expect(discovery.unreachable != nil)
        #expect(clock.waitForSleepers(1), "the discovery's thread waits for its retry on the clock")
        try rig.start()
        #expect(Self.advance(clock, by: Self.hour - 1_000_000_000))
        #expect(discovery.unreachable != nil, "retried before its interval had passed on the clock")
        clock.advance(by: 1_000_000_000)
        #expect(waitUntil(seconds: 10) { discovery.unreachable == nil && discovery.sources.map(\.nodeName) == ["studio-test-mic"] },
                "not retried once the interval had passed on the clock: \(discovery.unreachable ?? "connected")")
    }
}
}
