import Foundation
import Testing
import Control
import StudioCore
import TestSupport

/// A stinger's sound on the program, against the real binary and its recording: a 30 fps sting whose
/// picture 6 is white all over and whose sound has a 1 kHz beep from picture 6's time. Its input,
/// `stinger`, is listed; each sting's beep starts within a frame (33 ms) of the program frame showing
/// the white picture; muted, the sting is silent; a reload to a sting without sound removes the input
/// (one without from the start adds none: StingerEndToEndTests). In scripts/test.sh's real-time set: it measures A/V timing to a frame.
@Suite struct StingerAudioEndToEndTests {
    @Test func theStingsBeepLandsOnItsPictureMutingSilencesItAndAReloadReplacesTheInput() throws {
        let studio = try StudioHarness()
        let sting = studio.directory.appendingPathComponent("sting.mov")
        try StingClips.make(sting.path, ["-pix_fmt", "argb", "-c:v", "qtrle"], fps: 30, flash: 6, beep: 6)
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try "transition: {kind: stinger, clip: sting.mov, cut_at_ms: 400}\n".write(to: config, atomically: true, encoding: .utf8)
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--config", config.path, "--cameras", "2", "--audio", "silence", "--record", recordings.path, "--no-iso"]
                         + EndToEndTests.smallProgram)
        func cli(_ words: String) throws -> (status: Int32, output: String, error: String) {
            try studio.run(words.split(separator: " ").map(String.init) + ["--socket", studio.socket])
        }
        let inputs = try studio.json(["audio"])["inputs"]?.arrayValue ?? []
        #expect(inputs.contains { $0["name"] == "stinger" }, "\(inputs)")
        #expect(try cli("preview cam2").status == 0)
        #expect(studio.waitForProgramFrames(30))
        // Two stings heard, then one with the input muted.
        for muted in [false, false, true] {
            if muted { #expect(try cli("audio stinger --mute on").status == 0) }
            let auto = try cli("auto")
            #expect(auto.status == 0, "\(auto)")
            #expect(studio.waitForProgramFrames(60))
        }
        // Reloaded with a sting without sound: the input goes; back to the one with: it is there again.
        let silent = studio.directory.appendingPathComponent("silent.mov")
        try StingClips.make(silent.path, ["-pix_fmt", "argb", "-c:v", "qtrle"], fps: 30)
        func listed() throws -> Bool { (try studio.json(["audio"])["inputs"]?.arrayValue ?? []).contains { $0["name"] == "stinger" } }
        try "transition: {kind: stinger, clip: silent.mov, cut_at_ms: 400}\n".write(to: config, atomically: true, encoding: .utf8)
        #expect(try cli("reload").status == 0)
        #expect(try !listed())
        try "transition: {kind: stinger, clip: sting.mov, cut_at_ms: 400}\n".write(to: config, atomically: true, encoding: .utf8)
        #expect(try cli("reload").status == 0)
        #expect(try listed())
        #expect(studio.stopServer() == .exited(0))

        let events = try PipeWireEndToEndTests.flashesAndBeeps(in: try AudioInputsEndToEndTests.programFile(in: recordings))
        try #require(events.flashes.count == 3, "flashes \(events.flashes); beeps \(events.beeps)")
        let pairs = PipeWireEndToEndTests.pairs(events)
        print("Stinger A/V sync, audio minus video (ms): \(pairs.map(\.offset))")
        // The first two flashes have their beep within a frame; the muted third has none.
        #expect(pairs.map(\.flash) == Array(events.flashes.prefix(2)), "flashes \(events.flashes); beeps \(events.beeps)")
        for pair in pairs { #expect(abs(pair.offset) <= 1000.0 / 30, "audio minus video \(pair.offset) ms at \(pair.flash) ms") }
        #expect(events.beeps.count == 2, "beeps \(events.beeps)")
    }
}
