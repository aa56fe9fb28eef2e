import Foundation
import Testing
@testable import StudioServer
import StudioCore
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The whole server standing still (SIGSTOP, a paused VM, a laptop lid) is said once, as itself; no
/// camera is blamed for the frames nobody could take meanwhile.
@Suite struct StallTests {
    @Test func aWakeUpLaterThanTheThresholdIsAStall() {
        var watch = StallWatch(threshold: 500_000_000)
        #expect(watch.wake(at: 1_000_000_000) == nil, "the first wake-up has nothing to compare with")
        #expect(watch.wake(at: 1_050_000_000) == nil)
        #expect(watch.wake(at: 1_540_000_000) == nil, "490 ms late is within the threshold")
        #expect(watch.wake(at: 4_540_000_000) == 3_000_000_000)
        #expect(watch.wake(at: 4_590_000_000) == nil)
    }

    @Test func aStoppedServerBlamesNoCameraAndSaysItStalled() throws {
        let studio = try StudioHarness()
        let server = try studio.serve(["--cameras", "2"] + EndToEndTests.smallProgram)
        #expect(studio.waitForProgramFrames(15))
        try syscallOK(kill(server.pid, SIGSTOP))
        // The process is stopped: nothing of it runs while this test waits.
        usleep(2_500_000)
        try syscallOK(kill(server.pid, SIGCONT))
        #expect(studio.waitForProgramFrames(30))
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let lost = EndToEndTests.events(log, kind: "camera_lost")
        #expect(lost.isEmpty, "no camera is blamed for the server's own stall: \(lost)")
        let stalls = EndToEndTests.events(log, kind: "server_stalled")
        #expect(stalls.count >= 1, "the stall is said")
        let longest = stalls.compactMap { $0["details"]?["stalled_ms"]?.stringValue.flatMap { Int($0) } }.max() ?? 0
        #expect(longest >= 2_000, "the stall lasted the 2.5 s the process was stopped: \(stalls)")
    }

    private func syscallOK(_ result: Int32) throws {
        if result != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
    }
}
