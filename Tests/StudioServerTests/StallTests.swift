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

    /// The program recording across a 2 s SIGSTOP: the video skips the stall, the audio (the tone) has no
    /// timestamp gap and is silent for exactly the time the video skipped, and both resume together.
    @Test func afterAStopAudioAndVideoResumeTogetherInTheRecording() throws {
        let studio = try StudioHarness()
        let recordings = FileManager.default.temporaryDirectory.appendingPathComponent("stall-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: recordings) }
        let server = try studio.serve(["--cameras", "1", "--no-iso", "--record", recordings.path] + EndToEndTests.smallProgram)
        #expect(studio.waitForProgramFrames(45))
        try syscallOK(kill(server.pid, SIGSTOP))
        usleep(2_000_000)  // the stall itself: the process is stopped, nothing of it runs
        try syscallOK(kill(server.pid, SIGCONT))
        #expect(studio.waitForProgramFrames(45))
        #expect(studio.stopServer() == .exited(0))

        let file = recordings.appendingPathComponent("session-1-program.mkv")
        let probe = try MediaProbe.probe(file)
        // Video: one jump over the stall.
        let video = probe.videoPackets.compactMap(\.ptsMilliseconds).sorted()
        let jumps = zip(video, video.dropFirst()).filter { $1 - $0 > 100 }
        try #require(jumps.count == 1, "one skip in the video: \(jumps)")
        let (lastBefore, firstAfter) = jumps[0]
        #expect(firstAfter - lastBefore >= 1_900, "the video skipped \(firstAfter - lastBefore) ms")
        // Audio: no timestamp gap (AAC frames of 1024 samples, 21.3 ms; Matroska keeps whole ms).
        let audio = probe.audioPackets.compactMap(\.ptsMilliseconds).sorted()
        let audioGaps = zip(audio, audio.dropFirst()).filter { $1 - $0 > 23 }
        #expect(audioGaps.isEmpty, "audio timestamp gaps: \(audioGaps)")
        // Both end together: A/V stayed in sync across the stall.
        let (lastAudio, lastVideo) = (try #require(audio.last), try #require(video.last))
        #expect(abs(lastAudio - lastVideo) < 100, "audio ends at \(lastAudio) ms, video at \(lastVideo) ms")
        // The silence: where the tone stops and starts again, from ffmpeg's silencedetect.
        let detect = try ChildProcess(executable: MediaProbe.ffmpeg, arguments: [
            "-nostdin", "-hide_banner", "-i", file.path, "-map", "0:a", "-af", "silencedetect=noise=-50dB:duration=0.3", "-f", "null", "-",
        ])
        #expect(detect.wait(timeout: 60) == .exited(0))
        func times(_ key: String) -> [Double] {
            detect.errorText().components(separatedBy: key + ": ").dropFirst().compactMap { text in
                Double(text.prefix { "0123456789.-".contains($0) })
            }.map { $0 * 1000 }
        }
        let starts = times("silence_start"), ends = times("silence_end")
        try #require(starts.count == 1 && ends.count == 1, "one silence: \(starts) \(ends)")
        // One video frame (33 ms) and one audio frame (21 ms) of tolerance: the two clocks wake apart.
        #expect(abs(starts[0] - lastBefore) <= 55, "silence from \(starts[0]) ms, the video's last frame before the stall at \(lastBefore) ms")
        #expect(abs(ends[0] - firstAfter) <= 55, "the tone resumes at \(ends[0]) ms, the video at \(firstAfter) ms")
    }

    private func syscallOK(_ result: Int32) throws {
        if result != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
    }
}
