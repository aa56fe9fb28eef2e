import Foundation
import Testing
import Control
import TestSupport

/// The program audio's mixer in a real server: two virtual microphones in the private PipeWire rig
/// (`pw-virtual-camera --mic`, 440 Hz and 1 kHz), `--audio pipewire:all`, the program recorded and
/// decoded, each tone's level measured (Goertzel) where the events say the changes happened.
@Suite(.serialized) struct AudioMixerEndToEndTests {
    static let rate = 48_000.0

    /// The input named for PipeWire node `node` in `studio audio --json`.
    static func input(_ audio: JSONValue, node: String) -> JSONValue? {
        audio["inputs"]?.arrayValue?.first { $0["source"]?.stringValue == "pipewire:\(node)" }
    }

    /// The left channel of the first audio stream, at 48 kHz (each input is centred: both channels carry it).
    static func leftChannel(_ file: URL) throws -> [Float] {
        let data = try MediaProbe.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:a:0", "-af", "pan=mono|c0=c0",
                                                 "-ar", "48000", "-f", "f32le", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// A tone's amplitude in the decoded audio over program time `from..<to` (seconds): the median of its
    /// 100 ms windows (a longer Goertzel window would be narrower than the resampled tone's wobble).
    static func level(_ samples: [Float], start: Double, from: Double, to: Double, frequency: Double) -> Double {
        let first = max(0, Int(((from - start) * rate).rounded())), last = min(samples.count, Int(((to - start) * rate).rounded()))
        guard last > first else { return 0 }
        let window = Int(rate / 10)
        guard last - first > window else { return AudioSignals.goertzelAmplitude(samples[first..<last], frequency: frequency) }
        let values = stride(from: first, to: last - window + 1, by: window).map {
            AudioSignals.goertzelAmplitude(samples[$0..<($0 + window)], frequency: frequency)
        }.sorted()
        return values[values.count / 2]
    }

    /// The program time (seconds) nearest `at` where a tone's level, measured over 10 ms windows stepping
    /// by 1 ms within 0.1 s of `at`, crosses from `from` to `to` (halfway between); nil when it does not,
    /// or when the level is not `from` over the 0.4 s before the 30 ms next to `at` and `to` over the
    /// 0.4 s after them (within a quarter of the step). A capture hiccup elsewhere in the window (a loaded machine's
    /// dropout) makes a crossing too, but not the nearest one when the change lands at `at`.
    static func edge(_ samples: [Float], start: Double, at: Double, frequency: Double, from: Double, to: Double) -> Double? {
        func value(_ time: Double) -> Double { level(samples, start: start, from: time, to: time + 0.01, frequency: frequency) }
        // The median of 100 ms windows over most of a second each side: a capture dropout on a loaded
        // machine does not move it.
        let (before, after) = (level(samples, start: start, from: at - 0.43, to: at - 0.03, frequency: frequency),
                               level(samples, start: start, from: at + 0.03, to: at + 0.43, frequency: frequency))
        let step = abs(to - from), rising = to > from, threshold = (from + to) / 2
        guard abs(before - from) < step / 4 && abs(after - to) < step / 4 else { return nil }
        var crossings: [Double] = []
        var time = at - 0.1, above = value(time) > threshold
        while time < at + 0.1 {
            time += 0.001
            let now = value(time) > threshold
            if now != above && now == rising { crossings.append(time + 0.005) }
            above = now
        }
        return crossings.min { abs($0 - at) < abs($1 - at) }
    }

    static func decibels(_ amplitude: Double) -> Double { 20 * log10(max(amplitude, 1e-9)) }

    /// The tone's level in dB in 100 ms windows from 0.5 s before `at` to 0.5 s after, for a failure's message.
    static func around(_ samples: [Float], start: Double, at: Double, frequency: Double) -> String {
        stride(from: -0.5, to: 0.5, by: 0.1).map { offset in
            let dB = decibels(level(samples, start: start, from: at + offset, to: at + offset + 0.1, frequency: frequency))
            return String(format: "%+.1fs %.1f dB", offset, dB)
        }.joined(separator: ", ")
    }

    @Test func twoMicrophonesAreMixedAtTheirGainsAndChangesLandWhereTheEventsSay() throws {
        let rig = try PipeWireRig()
        try rig.start()
        var micA = try rig.startMicrophone(node: "vmicA", tone: 440)
        var micB = try rig.startMicrophone(node: "vmicB", tone: 1000)
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--cameras", "2", "--audio", "pipewire:all", "--record", recordings.path, "--no-iso"]
                         + EndToEndTests.smallProgram, environment: rig.environment)
        // Every Audio/Source is an input: the two microphones and the rig's own test source.
        var audio = JSONValue.null
        #expect(waitUntil(seconds: 20, every: 0.1) {
            audio = (try? studio.json(["audio"])) ?? .null
            return Self.input(audio, node: "vmicA")?["state"] == "streaming" && Self.input(audio, node: "vmicB")?["state"] == "streaming"
        }, "\(audio)")
        let nameA = try #require(Self.input(audio, node: "vmicA")?["name"]?.stringValue)
        let nameB = try #require(Self.input(audio, node: "vmicB")?["name"]?.stringValue)
        let others = (audio["inputs"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.filter { $0 != nameA && $0 != nameB }
        #expect(Set([nameA, nameB] + others).isSubset(of: ["mic1", "mic2", "mic3", "mic4"]), "\(audio)")
        for other in others { #expect(try studio.run(["audio", other, "--mute", "on", "--socket", studio.socket]).status == 0) }

        // Bad input: an unknown name lists the inputs; an out-of-range value says the range. Nothing changes.
        let unknown = try studio.run(["audio", "mic9", "--gain", "-6", "--socket", studio.socket])
        #expect(unknown.status != 0 && unknown.error.contains("no input \"mic9\"") && unknown.error.contains(nameA), "\(unknown)")
        let loud = try studio.run(["audio", nameA, "--gain", "30", "--socket", studio.socket])
        #expect(loud.status != 0 && loud.error.contains("gain 30 dB is outside -inf..+24 dB"), "\(loud)")
        let late = try studio.run(["audio", nameA, "--delay", "2000", "--socket", studio.socket])
        #expect(late.status != 0 && late.error.contains("delay 2000 ms is outside 0..1000 ms"), "\(late)")

        // A at -6 dB, B at unity; both with the shortest fade (5 ms), so an edge is sharp.
        let gain = try studio.json(["audio", nameA, "--gain", "-6", "--fade", "0"])
        let gainMS = try #require(gain["changed"]?["program_ms"]?.doubleValue)
        #expect(gain["changed"]?["changed"]?["gain"] == "0 -> -6", "\(gain)")
        _ = try studio.json(["audio", nameB, "--fade", "0"])
        #expect(studio.waitForProgramFrames(60))

        // B muted: from the audio_changed event's program time on.
        let mute = try studio.json(["audio", nameB, "--mute", "on"])
        let muteMS = try #require(mute["changed"]?["program_ms"]?.doubleValue)
        #expect(studio.waitForProgramFrames(30))

        // A follows cam2 (cam1 is on program: A goes down), then a cut to cam2 brings it up at the cut's pts.
        _ = try studio.json(["audio", nameA, "--follow", "cam2"])
        #expect(studio.waitForProgramFrames(30))
        #expect(try studio.run(["switch", "cam2", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(30))

        // B lost mid-show and back: events, and A goes on unaffected.
        #expect(try studio.run(["audio", nameB, "--mute", "off", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(15))
        _ = micB.stop()
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.json(["audio"])).flatMap { Self.input($0, node: "vmicB") }?["state"] == "lost" })
        #expect(studio.waitForProgramFrames(30))
        micB = try rig.startMicrophone(node: "vmicB", tone: 1000)
        #expect(waitUntil(seconds: 15, every: 0.1) { (try? studio.json(["audio"])).flatMap { Self.input($0, node: "vmicB") }?["state"] == "streaming" })
        #expect(studio.waitForProgramFrames(45))
        // A microphone plugged in mid-show: found, named, and mixed from then on (700 Hz).
        let micC = try rig.startMicrophone(node: "vmicC", tone: 700)
        #expect(waitUntil(seconds: 15, every: 0.1) { (try? studio.json(["audio"])).flatMap { Self.input($0, node: "vmicC") }?["state"] == "streaming" })
        #expect(studio.waitForProgramFrames(45))
        let nameC = try #require(Self.input(try studio.json(["audio"]), node: "vmicC")?["name"]?.stringValue)
        let metrics = try studio.run(["metrics", "--socket", studio.socket]).output
        #expect(metrics.contains("studio_audio_input_peak_dbfs{") && metrics.contains("input=\"\(nameA)\"")
                && metrics.contains("studio_audio_integrated_lufs "), "\(metrics)")
        let status = try studio.status()
        // Every change (the gains, the mute, the cut for the follow) reached the mixer before its sample.
        #expect(status["audio"]?["mixer"]?["late_changes"]?.intValue == 0, "\(status["audio"]?["mixer"] ?? .null)")
        #expect(status["audio"]?["mixer"]?["inputs"]?.arrayValue?.count == 3 + others.count, "\(status)")
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let changes = EndToEndTests.events(log, kind: "audio_changed")
        #expect(changes.contains { $0["details"]?["input"]?.stringValue == nameB && $0["details"]?["mute"] == "off -> on"
            && $0["program_ms"]?.doubleValue == muteMS }, "\(changes)")
        let found = EndToEndTests.events(log, kind: "audio_input_found").compactMap { $0["details"]?["input"]?.stringValue }
        #expect(Set(found) == Set([nameA, nameB, nameC] + others), "\(found)")
        let foundC = try #require(EndToEndTests.events(log, kind: "audio_input_found").first { $0["details"]?["input"]?.stringValue == nameC }?["program_ms"]?.doubleValue)
        let lost = EndToEndTests.events(log, kind: "audio_input_lost"), back = EndToEndTests.events(log, kind: "audio_input_back")
        #expect(lost.map { $0["details"]?["input"]?.stringValue } == [nameB] && back.map { $0["details"]?["input"]?.stringValue } == [nameB],
                "lost \(lost), back \(back)")
        let lostMS = try #require(lost.first?["program_ms"]?.doubleValue), backMS = try #require(back.first?["program_ms"]?.doubleValue)
        let cut = try #require(EndToEndTests.events(log, kind: "switch").last { $0["camera"] == "cam2" })
        let cutMS = try #require(cut["program_ms"]?.doubleValue)

        let file = try #require(try FileManager.default.contentsOfDirectory(at: recordings, includingPropertiesForKeys: nil)
            .first { $0.lastPathComponent.hasSuffix("-program.mkv") })
        let start = try #require(try MediaProbe.probe(file).audioPackets.first?.ptsMilliseconds) / 1000
        let samples = try Self.leftChannel(file)
        let (fullA, fullB) = (0.25 * pow(10, -6.0 / 20), 0.25)
        // Both at their gains between the gain change and the mute (±1 dB).
        let (from, to) = (gainMS / 1000 + 0.2, muteMS / 1000 - 0.05)
        #expect(to - from > 0.5)
        let (levelA, levelB) = (Self.level(samples, start: start, from: from, to: to, frequency: 440),
                                Self.level(samples, start: start, from: from, to: to, frequency: 1000))
        #expect(abs(Self.decibels(levelA) - Self.decibels(fullA)) < 1, "440 Hz at \(Self.decibels(levelA)) dB, set for \(Self.decibels(fullA))")
        #expect(abs(Self.decibels(levelB) - Self.decibels(fullB)) < 1, "1 kHz at \(Self.decibels(levelB)) dB, set for \(Self.decibels(fullB))")
        // The mute's edge within one AAC frame (1024 samples) of its event's program time.
        let frame = 1024 / Self.rate
        // (The edges are found first and required after, so a failure names the levels, not every sample.)
        let foundMute = Self.edge(samples, start: start, at: muteMS / 1000, frequency: 1000, from: fullB, to: 0)
        let muteEdge = try #require(foundMute, "no 1 kHz fall near the mute: \(Self.around(samples, start: start, at: muteMS / 1000, frequency: 1000))")
        #expect(abs(muteEdge - muteMS / 1000) <= frame, "1 kHz fell at \(muteEdge) s, the event says \(muteMS / 1000) s")
        // Follow-video: A comes up at the cut's pts.
        let foundCut = Self.edge(samples, start: start, at: cutMS / 1000, frequency: 440, from: 0, to: fullA)
        let cutEdge = try #require(foundCut, "no 440 Hz rise near the cut: \(Self.around(samples, start: start, at: cutMS / 1000, frequency: 440))")
        #expect(abs(cutEdge - cutMS / 1000) <= frame, "440 Hz rose at \(cutEdge) s, the cut is at \(cutMS / 1000) s")
        // While B was lost: silence in its strip only; A stays at its level.
        let whileLost = Self.level(samples, start: start, from: lostMS / 1000 + 0.2, to: backMS / 1000 - 0.1, frequency: 440)
        #expect(backMS - lostMS > 400)
        // A lost input's reconnect work runs on its own connect thread, never on the inputs' shared clock
        // thread: A does not dip.
        #expect(abs(Self.decibels(whileLost) - Self.decibels(fullA)) < 1, "440 Hz at \(Self.decibels(whileLost)) dB while B was lost; from its loss on: \(Self.around(samples, start: start, at: lostMS / 1000 + 0.7, frequency: 440))")
        #expect(Self.level(samples, start: start, from: lostMS / 1000 + 0.2, to: backMS / 1000 - 0.1, frequency: 1000) < fullB / 10)
        // The late microphone: silent before it was found, at its level (unity) once it plays.
        #expect(Self.level(samples, start: start, from: start + 0.5, to: foundC / 1000 - 0.1, frequency: 700) < 0.01)
        let levelC = Self.level(samples, start: start, from: foundC / 1000 + 0.5, to: Double(samples.count) / Self.rate + start - 0.2, frequency: 700)
        #expect(abs(Self.decibels(levelC) - Self.decibels(0.25)) < 1, "700 Hz at \(Self.decibels(levelC)) dB")
        _ = micC

        // The names are kept in the database: served again without vmicA (found first the last time),
        // vmicB keeps its name rather than taking the first free one.
        _ = micA.stop()
        try studio.serve(["--cameras", "1", "--audio", "pipewire:all", "--no-iso"] + EndToEndTests.smallProgram, environment: rig.environment)
        var again = JSONValue.null
        #expect(waitUntil(seconds: 20, every: 0.1) {
            again = (try? studio.json(["audio"])) ?? .null
            return Self.input(again, node: "vmicB") != nil
        }, "\(again)")
        #expect(Self.input(again, node: "vmicB")?["name"]?.stringValue == nameB && Self.input(again, node: "vmicA") == nil, "\(again)")
        #expect(studio.stopServer() == .exited(0))
        micA = micB
        _ = micA
    }

    /// The config's mixer settings apply from the start; `studio reload` changes them live, at the
    /// program time of its `audio_changed` event.
    @Test func theConfigSetsTheMixerAndAReloadChangesItLive() throws {
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        func write(gain: Int) throws {
            try """
            audio:
              source: tone
              master: { gain: 0, ceiling: -1 }
              inputs:
                - name: tone
                  gain: \(gain)
                  fade: 0
            """.write(to: config, atomically: true, encoding: .utf8)
        }
        try write(gain: -6)
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--config", config.path, "--cameras", "1", "--record", recordings.path, "--no-iso"] + EndToEndTests.smallProgram)
        let audio = try studio.json(["audio"])
        #expect(audio["inputs"]?[0]?["name"] == "tone" && audio["inputs"]?[0]?["gain_db"]?.doubleValue == -6, "\(audio)")
        #expect(studio.waitForProgramFrames(45))
        try write(gain: -12)
        #expect(try studio.run(["reload", "--socket", studio.socket]).status == 0)
        #expect(try studio.json(["audio"])["inputs"]?[0]?["gain_db"]?.doubleValue == -12)
        #expect(studio.waitForProgramFrames(45))
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let change = try #require(EndToEndTests.events(log, kind: "audio_changed").first)
        #expect(change["details"]?["input"] == "tone" && change["details"]?["gain"] == "-6 -> -12" && change["details"]?["by"] == "reload", "\(change)")
        let changeMS = try #require(change["program_ms"]?.doubleValue)
        let file = try #require(try FileManager.default.contentsOfDirectory(at: recordings, includingPropertiesForKeys: nil)
            .first { $0.lastPathComponent.hasSuffix("-program.mkv") })
        let start = try #require(try MediaProbe.probe(file).audioPackets.first?.ptsMilliseconds) / 1000
        let samples = try Self.leftChannel(file)
        // The demo tone peaks at -20 dBFS: -26 with the config's gain, -32 after the reload.
        let before = Self.level(samples, start: start, from: start + 0.3, to: changeMS / 1000 - 0.05, frequency: 1000)
        let after = Self.level(samples, start: start, from: changeMS / 1000 + 0.05, to: changeMS / 1000 + 1, frequency: 1000)
        #expect(abs(Self.decibels(before) + 26) < 1 && abs(Self.decibels(after) + 32) < 1, "\(Self.decibels(before)), \(Self.decibels(after))")
        let edge = try #require(Self.edge(samples, start: start, at: changeMS / 1000, frequency: 1000,
                                          from: before, to: after))
        #expect(abs(edge - changeMS / 1000) <= 1024 / Self.rate, "the level fell at \(edge) s, the event says \(changeMS / 1000) s")
        // The session's row keeps the program's loudness, as ffmpeg's ebur128 measures the recording (±1 LU).
        let sessions = try studio.json(["sessions", "--db", studio.database])
        let row = try #require(sessions["sessions"]?[0])
        let measured = try AudioSignals.ffmpegLoudness(of: file)
        let kept = try #require(row["integrated_lufs"]?.doubleValue, "\(row)")
        #expect(abs(kept - measured.integratedLUFS) < 1, "the session row says \(kept) LUFS, ffmpeg \(measured.integratedLUFS)")
        #expect(abs((row["peak_dbfs"]?.doubleValue ?? 0) + 26) < 0.5, "\(row)")
        let table = try studio.run(["sessions", "--db", studio.database]).output
        #expect(table.contains("LUFS") && table.contains(String(format: "%.1f", kept)), "\(table)")
    }

    /// Delay, exact to the sample: the demo tone (1 kHz, computed from the sample index: no capture
    /// jitter) delayed by 10.25 ms mid-show, 492 samples, ten cycles and a quarter: after the change's
    /// program time the decoded tone lags its own earlier phase by a quarter cycle (90 degrees).
    @Test func aDelayMovesAnInputByItsMilliseconds() throws {
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--cameras", "1", "--audio", "tone", "--record", recordings.path, "--no-iso"] + EndToEndTests.smallProgram)
        #expect(studio.waitForProgramFrames(60))
        let change = try studio.json(["audio", "tone", "--delay", "10.25"])
        let changeMS = try #require(change["changed"]?["program_ms"]?.doubleValue)
        #expect(change["changed"]?["changed"]?["delay"] == "0 -> 10.25" && change["inputs"]?[0]?["delay_ms"]?.doubleValue == 10.25, "\(change)")
        #expect(studio.waitForProgramFrames(60))
        #expect(studio.stopServer() == .exited(0))

        let file = try #require(try FileManager.default.contentsOfDirectory(at: recordings, includingPropertiesForKeys: nil)
            .first { $0.lastPathComponent.hasSuffix("-program.mkv") })
        let start = try #require(try MediaProbe.probe(file).audioPackets.first?.ptsMilliseconds) / 1000
        let samples = try Self.leftChannel(file)
        // The 1 kHz phase (degrees) of 10 ms windows (ten whole cycles) at decoded sample positions: the
        // same in every window of an undelayed tone, whatever the file's start.
        func phase(at time: Double) -> Double {
            let first = Int(((time - start) * Self.rate).rounded())
            var (re, im) = (0.0, 0.0)
            for index in first..<(first + 480) {
                let angle = 2 * Double.pi * 1000 * Double(index) / Self.rate
                re += Double(samples[index]) * cos(angle)
                im += Double(samples[index]) * sin(angle)
            }
            return atan2(im, re) * 180 / .pi
        }
        func medianPhase(_ times: [Double]) -> Double { times.map { phase(at: $0) }.sorted()[times.count / 2] }
        let changeTime = changeMS / 1000
        let before = medianPhase(stride(from: start + 0.5, to: changeTime - 0.05, by: 0.05).map { $0 })
        let after = medianPhase(stride(from: changeTime + 0.05, to: changeTime + 1.5, by: 0.05).map { $0 })
        // A window's phase grows by the delay's share of a cycle (sin(θ - δ) against cos θ and sin θ reads 90° + δ).
        let lag = (after - before + 720).truncatingRemainder(dividingBy: 360)
        #expect(abs(lag - 90) < 5, "the tone's phase moved by \(lag) degrees (before \(before), after \(after)); 10.25 ms is 90")
    }

    /// Audio-follow-video with a scene: an input that follows cam2 comes up when a scene showing cam2
    /// goes on air (a scene counts as its name and its cameras), at that switch's pts, and goes down when
    /// the program cuts back to cam1.
    @Test func anInputFollowsItsCameraIntoAScene() throws {
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try """
        audio:
          source: tone
          inputs:
            - { name: tone, follow: cam2, fade: 0 }
        scenes:
          - name: duo
            layers:
              - { source: cam1, rect: [0, 0, 0.5, 1] }
              - { source: cam2, rect: [0.5, 0, 0.5, 1] }
        """.write(to: config, atomically: true, encoding: .utf8)
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--config", config.path, "--cameras", "2", "--record", recordings.path, "--no-iso"] + EndToEndTests.smallProgram)
        #expect(studio.waitForProgramFrames(45))
        #expect(try studio.run(["switch", "duo", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(45))
        #expect(try studio.run(["switch", "cam1", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(45))
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let switches = EndToEndTests.events(log, kind: "switch")
        let toScene = try #require(switches.first { $0["details"]?["scene"] == "duo" }?["program_ms"]?.doubleValue, "\(switches)")
        let back = try #require(switches.last { $0["camera"] == "cam1" }?["program_ms"]?.doubleValue, "\(switches)")
        let file = try #require(try FileManager.default.contentsOfDirectory(at: recordings, includingPropertiesForKeys: nil)
            .first { $0.lastPathComponent.hasSuffix("-program.mkv") })
        let start = try #require(try MediaProbe.probe(file).audioPackets.first?.ptsMilliseconds) / 1000
        let samples = try Self.leftChannel(file)
        let full = 0.1  // the demo tone: -20 dBFS peak
        #expect(Self.level(samples, start: start, from: start + 0.2, to: toScene / 1000 - 0.05, frequency: 1000) < full / 10)
        let up = try #require(Self.edge(samples, start: start, at: toScene / 1000, frequency: 1000, from: 0, to: full))
        #expect(abs(up - toScene / 1000) <= 1024 / Self.rate, "the tone came up at \(up) s, the scene at \(toScene / 1000) s")
        let down = try #require(Self.edge(samples, start: start, at: back / 1000, frequency: 1000, from: full, to: 0))
        #expect(abs(down - back / 1000) <= 1024 / Self.rate, "the tone went down at \(down) s, the cut to cam1 at \(back / 1000) s")
    }
}
