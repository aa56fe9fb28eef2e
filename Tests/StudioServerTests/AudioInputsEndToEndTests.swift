import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Program audio from several microphones when PipeWire itself goes away, and a microphone lined up
/// with its camera by a delay: a real server, the private PipeWire rig, the recording decoded.
@Suite(.serialized) struct AudioInputsEndToEndTests {
    typealias Mixer = AudioMixerEndToEndTests

    /// The recording's program file in `directory`.
    static func programFile(in directory: URL) throws -> URL {
        try #require(try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .first { $0.lastPathComponent.hasSuffix("-program.mkv") })
    }

    /// A tone's level in dB in every half second of the recording, for a failure's message.
    static func trace(_ samples: [Float], start: Double, end: Double, frequency: Double) -> String {
        stride(from: start, to: end, by: 0.5).map { time in
            String(format: "%.1fs %.0f", time, Mixer.decibels(Mixer.level(samples, start: start, from: time, to: time + 0.5, frequency: frequency)))
        }.joined(separator: ", ")
    }

    /// The daemon is killed mid-show (by its PID, as a crash): the program's audio goes on (its track
    /// has no hole), both microphones are `audio_input_lost`, the server keeps running; the daemon and
    /// the microphones come back: `audio_input_back`, and both tones are in the program again.
    @Test func programAudioGoesOnWhenThePipeWireDaemonGoesAwayAndComesBack() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try rig.startMicrophone(node: "vmicA", tone: 440)
        try rig.startMicrophone(node: "vmicB", tone: 1000)
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--cameras", "1", "--audio", "pipewire:all", "--record", recordings.path, "--no-iso"]
                         + EndToEndTests.smallProgram, environment: rig.environment)
        func states() -> (a: String?, b: String?) {
            let audio = (try? studio.json(["audio"])) ?? .null
            return (Mixer.input(audio, node: "vmicA")?["state"]?.stringValue, Mixer.input(audio, node: "vmicB")?["state"]?.stringValue)
        }
        #expect(waitUntil(seconds: 20, every: 0.1) { states() == ("streaming", "streaming") }, "\(states())")
        let audio = try studio.json(["audio"])
        let nameA = try #require(Mixer.input(audio, node: "vmicA")?["name"]?.stringValue)
        let nameB = try #require(Mixer.input(audio, node: "vmicB")?["name"]?.stringValue)
        // The rig's own test source (440 Hz too) is muted: only the two microphones are heard.
        let others = (audio["inputs"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.filter { $0 != nameA && $0 != nameB }
        for other in others { #expect(try studio.run(["audio", other, "--mute", "on", "--socket", studio.socket]).status == 0) }
        #expect(studio.waitForProgramFrames(45))

        // The daemon dies.
        let pid = try #require(rig.daemonPID)
        rig.killDaemon()
        #expect(kill(pid, 0) != 0, "the daemon \(pid) is gone")
        #expect(waitUntil(seconds: 20, every: 0.1) { states() == ("lost", "lost") }, "\(states())")
        // The show goes on: the server answers and the program keeps being encoded.
        #expect(studio.waitForProgramFrames(60))
        #expect(studio.server.map { !$0.hasExited } == true)

        // The daemon and the microphones come back; the inputs with them, by themselves.
        try rig.start()
        try rig.startMicrophone(node: "vmicA", tone: 440)
        try rig.startMicrophone(node: "vmicB", tone: 1000)
        #expect(waitUntil(seconds: 30, every: 0.1) { states() == ("streaming", "streaming") }, "\(states())")
        // And heard: each input's meter (post-fader, unity) reads its tone's peak again, -12 dBFS.
        func peaks() -> [Double] {
            let audio = (try? studio.json(["audio"])) ?? .null
            return ["vmicA", "vmicB"].map { Mixer.input(audio, node: $0)?["levels"]?["peak_dbfs"]?[0]?.doubleValue ?? -96 }
        }
        #expect(waitUntil(seconds: 30, every: 0.1) { peaks().allSatisfy { $0 > -15 } }, "peaks \(peaks()): \((try? studio.json(["audio"])) ?? .null)")
        #expect(studio.waitForProgramFrames(60))
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        func times(_ kind: String, _ name: String) -> [Double] {
            EndToEndTests.events(log, kind: kind).filter { $0["details"]?["input"]?.stringValue == name }.compactMap { $0["program_ms"]?.doubleValue }
        }
        let lostA = times("audio_input_lost", nameA), lostB = times("audio_input_lost", nameB)
        let backA = times("audio_input_back", nameA), backB = times("audio_input_back", nameB)
        #expect(lostA.count == 1 && lostB.count == 1 && backA.count == 1 && backB.count == 1,
                "lost \(lostA) \(lostB), back \(backA) \(backB): \(EndToEndTests.events(log, kind: "audio_input_lost"))")
        let lost = try #require((lostA + lostB).max()) / 1000, back = try #require((backA + backB).max()) / 1000
        #expect(back > lost)

        // The decoded program: its audio never stops, not while the daemon was gone either.
        let file = try Self.programFile(in: recordings)
        let packets = try MediaProbe.probe(file).audioPackets.compactMap(\.ptsMilliseconds)
        let start = try #require(packets.first) / 1000
        let holes = zip(packets.dropFirst(), packets).map { $0 - $1 }.filter { $0 > 1024 / Mixer.rate * 1000 + 2 }
        #expect(packets.count > 100 && holes.isEmpty, "audio pts holes (ms): \(holes)")
        let samples = try Mixer.leftChannel(file)
        let duration = Double(samples.count) / Mixer.rate
        let last = try #require(packets.last) / 1000
        #expect(abs(start + duration - last) < 0.1, "decoded \(duration) s of audio from \(start) s, last packet at \(last) s")
        // Both tones before, silence while the daemon was gone, both again from when they are heard again
        // to the end (`audio_input_back` comes with the node; the capture links it on its next attempt,
        // up to its 2 s retry later, and its jitter buffer fills). Heard at their level (the microphones
        // at unity, 0.25 peak: -12 dBFS), never above it, and at most 6 dB below: on a loaded machine a
        // capture's underruns leave short holes in a tone, before the daemon went as after (the mixer
        // test measures levels to ±1 dB, the drift test the underruns).
        let full = Mixer.decibels(0.25), end = start + duration - 0.2
        for frequency in [440.0, 1000] {
            let before = Mixer.level(samples, start: start, from: lost - 1.2, to: lost - 0.2, frequency: frequency)
            let gone = Mixer.level(samples, start: start, from: lost + 0.2, to: back - 0.5, frequency: frequency)
            let heard = stride(from: back, to: end, by: 0.05).first {
                Mixer.level(samples, start: start, from: $0, to: $0 + 0.1, frequency: frequency) > 0.25 / 4
            }
            let heardAgain = try #require(heard, "\(frequency) Hz never heard again after \(back) s: \(Mixer.around(samples, start: start, at: end - 0.5, frequency: frequency))")
            #expect(heardAgain - back < 6, "\(frequency) Hz heard again \(heardAgain - back) s after its input was back")
            let again = Mixer.level(samples, start: start, from: heardAgain + 0.3, to: end, frequency: frequency)
            let when = "heard again at \(heardAgain) s; lost at \(lost) s, back at \(back) s, the end at \(end) s"
            let trace = Self.trace(samples, start: start, end: end, frequency: frequency)
            func heardAtItsLevel(_ level: Double) -> Bool { Mixer.decibels(level) > full - 6 && Mixer.decibels(level) < full + 1 }
            let said = "\(frequency) Hz: \(Mixer.decibels(before)) dB before, \(Mixer.decibels(gone)) dB while gone, \(Mixer.decibels(again)) dB back (\(when); by half seconds: \(trace))"
            #expect(heardAtItsLevel(before) && gone < 0.25 / 40, "\(said)")
            // Known (issue 13): in the whole suite on 2 cores (two CI runs, 2026-12-01) the 440 Hz tone came
            // back 6.3-6.5 dB low over the last two seconds (holes: the fresh captures underrunning while
            // they fill); alone, on a quiet machine, it is at its level.
            withKnownIssue("issue 13: after the daemon comes back, a loaded machine's fresh captures underrun", isIntermittent: true) {
                #expect(heardAtItsLevel(again), "\(said)")
            }
        }
    }

    /// The issue's delay test: a click on the picture (a white flash) and on a microphone (a beep) 40 ms
    /// apart, the microphone early (as one nearer than the camera's path), lined up by a 40 ms delay on
    /// the microphone. The pipeline's own A/V offset (the microphone's capture path against the video's,
    /// not compensated: docs/pipewire.md) is measured first, with a microphone on time; then the
    /// microphone is swapped (muted meanwhile) for one 40 ms early: its clicks come 40 ms earlier
    /// (±one video frame); then `--delay 40`: back on the on-time microphone's offset (within one frame).
    /// All three in one recording. Always checked: the early clicks lead, the delay moves them later; to one
    /// frame (the issue's test) where the capture's latency held steady (see below).
    @Test func aFortyMillisecondDelayLinesAnEarlyMicrophoneUpWithItsCamera() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try rig.startCamera(node: "vcam1", camera: "cam1", size: "640x480", rate: 30, format: "i420", extraArguments: ["--flash", "1"])
        try rig.startBeeper(node: "vbeep")
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--backends", "pipewire", "--audio", "pipewire:vbeep", "--record", recordings.path, "--no-iso"]
                         + PipeWireEndToEndTests.program, environment: rig.environment)
        let name = try #require(Mixer.input(try studio.json(["audio"]), node: "vbeep")?["name"]?.stringValue)
        func input() -> JSONValue? { (try? studio.json(["audio"])).flatMap { Mixer.input($0, node: "vbeep") } }
        #expect(waitUntil(seconds: 20, every: 0.1) { input()?["state"] == "streaming" }, "\(input() ?? .null)")
        // Eight seconds of program for each part: beeps enough to pair even where a loaded machine loses one.
        #expect(studio.waitForProgramFrames(240, seconds: 90))
        // What the input's buffer held and how much of it was compensated, at the end of each part.
        var buffers: [String] = []
        func noteBuffer() { buffers.append("latency \(input()?["latency_ms"] ?? .null) ms, compensation \(input()?["compensation_ms"] ?? .null) ms") }
        noteBuffer()
        // The microphone swapped for one 40 ms early, muted meanwhile.
        let mute = try #require(try studio.json(["audio", name, "--mute", "on"])["changed"]?["program_ms"]?.doubleValue)
        try rig.startBeeper(node: "vbeep", offsetMilliseconds: -40)
        func connections() -> Int? { (try? studio.status())?["audio_input"]?["connections"]?.intValue }
        #expect(waitUntil(seconds: 20, every: 0.1) { input()?["state"] == "streaming" && connections() == 2 }, "\(input() ?? .null), \(connections() ?? -1) connections")
        let unmute = try #require(try studio.json(["audio", name, "--mute", "off"])["changed"]?["program_ms"]?.doubleValue)
        #expect(studio.waitForProgramFrames(240, seconds: 90))
        noteBuffer()
        let change = try studio.json(["audio", name, "--delay", "40"])
        let delayed = try #require(change["changed"]?["program_ms"]?.doubleValue)
        #expect(change["changed"]?["changed"]?["delay"] == "0 -> 40", "\(change)")
        #expect(studio.waitForProgramFrames(240, seconds: 90))
        noteBuffer()
        #expect(studio.stopServer() == .exited(0))

        let events = try PipeWireEndToEndTests.flashesAndBeeps(in: try Self.programFile(in: recordings))
        let pairs = PipeWireEndToEndTests.pairs(events)
        // Each part's pairs, clear of the changes around it (a click across a change belongs to neither).
        func offsets(after: Double, before: Double) -> [Double] { pairs.filter { $0.flash > after + 500 && $0.flash < before - 500 }.map(\.offset) }
        let onTime = offsets(after: -.infinity, before: mute), early = offsets(after: unmute, before: delayed)
        let lined = offsets(after: delayed, before: .infinity)
        try #require(onTime.count >= 3 && early.count >= 3 && lined.count >= 3,
                     "pairs \(pairs); mute \(mute), unmute \(unmute), delay \(delayed) ms; flashes \(events.flashes); beeps \(events.beeps)")
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let frame = 1000.0 / 30
        let (onTimeMedian, earlyMedian, linedMedian) = (median(onTime), median(early), median(lined))
        let said = "audio minus video (ms): on time \(onTime), 40 ms early \(early), early with a 40 ms delay \(lined); each part's end: \(buffers)"
        print("Delay test, audio minus video (median ms): on time \(onTimeMedian), 40 ms early \(earlyMedian), early with --delay 40 \(linedMedian); \(said)")
        // Always: the early microphone's clicks come before the on-time one's, and the delay moves them later.
        #expect(onTimeMedian - earlyMedian > 10 && linedMedian - earlyMedian > 10, "\(said)")
        // To one video frame: the early clicks 40 ms before the on-time ones, and with the delay back where
        // those were. The mixer compensates the microphone's jitter buffer (its samples sit at their
        // capture time), but only up to 100 ms: on a starved machine underruns raise the buffer beyond
        // that, and a flash frame taken a tick late moves a pair by a frame; each part lasts 8 s
        // (docs/audio.md, "Capture latency"). Checked every run, reported as a known issue when that happens.
        withKnownIssue("issue 13: on a starved machine a microphone's buffer grows beyond what is compensated", isIntermittent: true) {
            #expect(abs(onTimeMedian - earlyMedian - 40) <= frame, "\(said)")
            #expect(abs(linedMedian - onTimeMedian) <= frame, "\(said)")
        }
    }
}
