import Foundation
import Testing
import Control
import StudioConfig
import StudioCore
import StudioServer
import TestSupport

/// A stinger configured as the default transition, against the real binary: decoded at start, run by
/// `studio auto`, its length the clip's, its events in the history; a reload with a cut outside the
/// clip refused naming it, and a clip of 0 frames refusing the start. The pictures themselves are
/// checked frame by frame in SwitcherTests (StingerTests, StingerClipTests); its sound in
/// StingerAudioEndToEndTests (this clip has none: no input).
@Suite struct StingerEndToEndTests {
    @Test func theConfiguredStingerRunsForItsClipsLengthAndABadCutIsRefusedOnReload() throws {
        let studio = try StudioHarness()
        let sting = studio.directory.appendingPathComponent("sting.mov")
        try StingClips.make(sting.path, ["-pix_fmt", "argb", "-c:v", "qtrle"])
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try "transition: {kind: stinger, clip: sting.mov, cut_at_ms: 400}\n".write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path, "--cameras", "2"] + EndToEndTests.smallProgram)
        func cli(_ words: String) throws -> (status: Int32, output: String, error: String) {
            try studio.run(words.split(separator: " ").map(String.init) + ["--socket", studio.socket])
        }
        // A sting without sound adds no audio input.
        let inputs = try studio.json(["audio"])["inputs"]?.arrayValue ?? []
        #expect(!inputs.contains { $0["name"] == "stinger" }, "\(inputs)")
        // As set: a 1 s clip at 25 fps lasts 30 frames of the 30 fps program.
        let shown = try cli("transition")
        #expect(shown.output.contains("stinger 30 frames"), "\(shown)")
        let transition = try studio.json(["transition"])
        #expect(transition["clip"] == .string(sting.path) && transition["cut_at_ms"]?.intValue == 400, "\(transition)")
        #expect(try cli("preview cam2").status == 0)
        let auto = try cli("auto")
        #expect(auto.status == 0, "\(auto)")
        #expect(studio.waitForProgramFrames(40))
        // A stinger takes no length; a mix can still be asked for by name.
        let withLength = try cli("auto stinger --frames 3")
        #expect(withLength.status != 0 && withLength.error.contains("a stinger lasts its clip's length"), "\(withLength)")

        // A cut outside the clip: the reload is refused naming it and the clip's length; the show goes on.
        try "transition: {kind: stinger, clip: sting.mov, cut_at_ms: 1500}\n".write(to: config, atomically: true, encoding: .utf8)
        let refused = try cli("reload")
        #expect(refused.status == 1 && refused.error.contains("cut_at_ms 1500") && refused.error.contains("1000 ms")
                && refused.error.contains(sting.path) && refused.error.contains("nothing was changed"), "\(refused)")
        #expect(studio.waitForProgramFrames(10))
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        func ms(_ event: JSONValue?) throws -> Int { try #require(event?["program_ms"]?.intValue) }
        let started = try #require(EndToEndTests.events(log, kind: "transition_started").first)
        let ended = try #require(EndToEndTests.events(log, kind: "transition_ended").first)
        #expect(started["details"]?["kind"] == "stinger" && started["details"]?["frames"] == "30" && started["details"]?["cut_at_ms"] == "400", "\(started)")
        // 30 frames: the last one 29 frame intervals after the first; the switch recorded there.
        #expect(abs(Double(try ms(ended) - ms(started)) - 29 * 1000.0 / 30) <= 1.5)
        let switched = try #require(EndToEndTests.events(log, kind: "switch").last)
        let (switchedAt, endedAt) = (try ms(switched), try ms(ended))
        #expect(switched["camera"] == "cam2" && switched["details"]?["via"] == "stinger" && switchedAt == endedAt, "\(switched)")
    }

    @Test func aStingerOfNoFramesRefusesTheStartNamingIt() throws {
        let directory = try PlayerEndToEndTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty.mkv").path
        let made = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30", "-frames:v", "0", "-c:v", "libx264", "-y", empty,
        ])
        try #require(made.wait(timeout: 60) == .exited(0))
        var options = PlayerEndToEndTests.options(directory, players: [])
        options.configuration.transition = TransitionSpec(kind: .stinger, clip: empty, cutAtMilliseconds: 100)
        do {
            let server = try StudioServer(options: options)
            server.shutdown()
            Issue.record("a server started with a stinger of no frames")
        } catch {
            #expect("\(error)".contains(empty) && "\(error)".contains("0 frames"), "\(error)")
        }
    }
}
