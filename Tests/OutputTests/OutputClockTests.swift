import Foundation
import Testing
import StudioCore
import StudioSystem
import MediaSupport
@testable import Output
import TestSupport

/// The output's decisions run on its injected clock: the backoff between attempts, and what `status`
/// says of the next one, moved by a test's `ManualClock` rather than waited for.
@Suite(.serialized) struct OutputClockTests {
    init() { FFmpegLogging.configure(verbose: false) }

    @Test func theBackoffBetweenAttemptsRunsOnTheOutputsClock() throws {
        let port = try freePort()
        let clock = ManualClock()
        let output = MediaOutput(destination: OutputDestination(name: "live", url: "rtmp://127.0.0.1:\(port)/live/backoffkey"),
                                 events: CollectingSink(), requestKeyframe: {},
                                 policy: OutputPolicy(initialBackoffSeconds: 1, maxBackoffSeconds: 4), clock: clock)
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        fanOut.add(output)
        output.start()
        feed.run(seconds: 0.3)  // the streams' descriptions reach the output: it connects, and is refused

        // Refused at once; then it waits 1 s of its clock, however long the test takes.
        #expect(clock.waitForSleepers(1))
        #expect(output.statistics.reconnectAttempts == 0 && output.statistics.secondsToNextAttempt == 1)
        clock.advance(by: 999_000_000)
        #expect(clock.waitForSleepers(1))
        #expect(output.statistics.reconnectAttempts == 0, "a millisecond early")
        #expect(abs((output.statistics.secondsToNextAttempt ?? 0) - 0.001) < 1e-9)
        clock.advance(by: 1_000_000)
        #expect(waitUntil { output.statistics.reconnectAttempts == 1 })
        // Refused again: the backoff doubles, 2 s, then 4 s (its cap).
        #expect(clock.waitForSleepers(1))
        #expect(output.statistics.secondsToNextAttempt == 2)
        clock.advance(by: 2_000_000_000)
        #expect(waitUntil { output.statistics.reconnectAttempts == 2 })
        #expect(clock.waitForSleepers(1))
        #expect(output.statistics.secondsToNextAttempt == 4)

        output.stop(timeoutSeconds: 1)
        feed.finish()
        #expect(output.statistics.state == .stopped && output.statistics.reconnectAttempts == 2)
    }
}
