import Foundation
import Testing
import Capture
import Control
import StudioCore
import StudioServer
import StudioSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real binary capturing PipeWire cameras and a PipeWire microphone from a private headless daemon
/// (TestSupport's `PipeWireRig`: deploy/pipewire-test.conf, no session manager), pushing to a real
/// nginx-rtmp; the received stream is decoded and checked against the event log.
@Suite(.serialized) struct PipeWireEndToEndTests {
    static let program = ["--program", "640x360@30", "--preset", "ultrafast", "--bitrate", "1500k"]
    static let ids: [CameraID] = ["cam1", "cam2", "cam3"]

    /// Three virtual cameras showing cam1's, cam2's and cam3's ident colours, in three pixel formats.
    static func startCameras(_ rig: PipeWireRig) throws {
        try rig.startCamera(node: "vcam1", camera: "cam1", size: "640x480", rate: 30, format: "i420")
        try rig.startCamera(node: "vcam2", camera: "cam2", size: "640x480", rate: 30, format: "nv12")
        try rig.startCamera(node: "vcam3", camera: "cam3", size: "640x480", rate: 30, format: "yuy2")
    }

    /// Mono float samples of the first audio stream, at 48 kHz.
    static func audioSamples(_ file: URL) throws -> [Float] {
        let data = try MediaProbe.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:a:0", "-ac", "1", "-ar", "48000",
                                                 "-f", "f32le", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The known events of an A/V sync run in a decoded file (program time, ms): the flash frames (all
    /// white) and the beep onsets (a sample above 0.05 after half a second of quiet).
    static func flashesAndBeeps(in file: URL) throws -> (flashes: [Double], beeps: [Double]) {
        let probe = try MediaProbe.probe(file)
        let frames = try MediaProbe.videoFrames(file)
        let thumbnails = try MediaProbe.tinyFrames(file)
        try #require(frames.count == thumbnails.count)
        let flashes = zip(frames, thumbnails).compactMap { frame, thumbnail -> Double? in
            let colour = MediaProbe.averageColour(thumbnail)
            return colour.red > 200 && colour.green > 200 && colour.blue > 200 ? frame.ptsMilliseconds : nil
        }
        let audioStart = try #require(probe.audioPackets.first?.ptsMilliseconds)
        let samples = try audioSamples(file)
        var onsets: [Double] = []
        var quiet = 0
        for (index, sample) in samples.enumerated() {
            if abs(sample) > 0.05 {
                if quiet >= 24_000 { onsets.append(audioStart + Double(index) / 48) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return (flashes, onsets)
    }

    /// Each flash paired with the nearest beep; audio later than video is a positive offset (ms). The
    /// events are a second apart: a flash with no beep within half a second (the first one, before the
    /// microphone was linked, is silence) has no pair.
    static func pairs(_ events: (flashes: [Double], beeps: [Double])) -> [(flash: Double, offset: Double)] {
        events.flashes.compactMap { flash in
            events.beeps.min { abs($0 - flash) < abs($1 - flash) }.map { $0 - flash }.flatMap { abs($0) < 500 ? (flash, $0) : nil }
        }
    }

    /// A source of flashes and beeps on program (a phone's, a clip's): lets `frames` more program frames
    /// go out, stops `server`, and expects the program's recording in `recordings` to keep them together,
    /// the median of at least five pairs (audio minus video) within one and a half frames at 30 fps.
    static func expectProgramInSync(_ label: String, server: StudioServer, client: ControlClient, recordings: URL, frames: Double) throws {
        func delivered() -> Double { (try? client.request("status"))?["program"]?["frames"]?.doubleValue ?? 0 }
        let start = try client.request("status")["program"]?["frames"]?.doubleValue ?? 0
        #expect(waitUntil(seconds: 60, every: 0.2) { delivered() > start + frames })
        server.shutdown()

        let events = try flashesAndBeeps(in: try AudioInputsEndToEndTests.programFile(in: recordings))
        let found = pairs(events)
        try #require(found.count >= 5, "pairs \(found); flashes \(events.flashes); beeps \(events.beeps)")
        let offsets = found.map(\.offset).sorted()
        let median = offsets[offsets.count / 2]
        print("\(label) A/V sync, audio minus video (ms): median \(median), all \(offsets)")
        #expect(abs(median) <= 1.5 * 1000 / 30, "audio minus video (ms): \(offsets)")
    }

    /// vcam3 (cam3's picture) is pinned in the config by its node name (a part of its identity,
    /// `pipewire:vcam3`): it is `wide`, listed and switched to under that name.
    @Test func camerasAndMicrophoneGoOnAirWithCutsWhereTheEventsSay() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try Self.startCameras(rig)
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try """
        cameras:
          pins:
            - match: vcam3
              name: wide
        """.write(to: config, atomically: true, encoding: .utf8)
        let server = try studio.serve(["--config", config.path, "--backends", "pipewire", "--audio", "pipewire:studio-test-mic",
                                       "--rtmp", nginx.url(stream: "pw")] + Self.program, environment: rig.environment)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })

        // `studio cameras --json`: the three nodes, named in discovery order (vcam3 by its pin), with what
        // they offer and deliver.
        let cameras = try studio.json(["cameras"])["cameras"]?.arrayValue ?? []
        #expect(cameras.compactMap { $0["name"]?.stringValue } == ["cam1", "cam2", "wide"])
        let listing = try studio.run(["cameras", "--socket", studio.socket])
        #expect(listing.output.split(separator: "\n").contains { $0.hasPrefix("wide ") && $0.contains("Virtual cam3") }, "\(listing.output)")
        let expected = [("vcam1", "I420", "i420"), ("vcam2", "NV12", "nv12"), ("vcam3", "YUY2", "yuyv")]
        for (camera, (node, offered, delivered)) in zip(cameras, expected) {
            #expect(camera["backend"] == "pipewire")
            #expect(camera["identity"]?.stringValue == "pipewire:\(node)")
            #expect(camera["state"] == "live")
            #expect(camera["offered_modes"]?[0]?["format"]?.stringValue == offered)
            #expect(camera["offered_modes"]?[0]?["width"]?.intValue == 640 && camera["offered_modes"]?[0]?["height"]?.intValue == 480)
            #expect(camera["offered_modes"]?[0]?["fps"]?[0]?.doubleValue == 30)
            #expect(camera["format"]?["pixel_format"]?.stringValue == delivered)
            #expect(camera["format"]?["width"]?.intValue == 640 && camera["format"]?["fps"]?.doubleValue == 30)
        }

        // Each camera on air for 36 program frames (1.2 s of program time, however long that takes here).
        #expect(studio.waitForProgramFrames(36))
        #expect(try studio.run(["switch", "wide", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(36))
        #expect(try studio.run(["switch", "cam2", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(36))
        // `studio status` says where the program audio comes from and that the microphone is live (once
        // it has captured 2 s: a loaded machine gets there later).
        _ = waitUntil(seconds: 30, every: 0.1) { (try? studio.status())?["audio_input"]?["captured_s"]?.doubleValue ?? 0 > 2 }
        let input = try #require(try studio.status()["audio_input"])
        #expect(input["source"] == "pipewire:studio-test-mic" && input["node"] == "studio-test-mic" && input["state"] == "streaming", "\(input)")
        #expect((input["captured_s"]?.doubleValue ?? 0) > 2, "\(input)")
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let switches = EndToEndTests.events(log, kind: "switch")
        #expect(switches.compactMap { $0["camera"]?.stringValue } == ["cam1", "wide", "cam2"])
        #expect(EndToEndTests.events(log, kind: "camera_added").count == 3)
        let connected = try #require(EndToEndTests.events(log, kind: "output_connected").first)
        let firstProgramMS = try #require(Int(connected["details"]?["first_program_ms"]?.stringValue ?? ""))

        let file = try #require(nginx.recordings().first)
        let probe = try MediaProbe.probe(file)
        #expect(probe.video?.width == 640 && probe.video?.height == 360)
        #expect(probe.audio?.codecName == "aac" && probe.audio?.sampleRate == 48000 && probe.audio?.channels == 2)
        let frames = try MediaProbe.videoFrames(file)
        let thumbnails = try MediaProbe.tinyFrames(file)
        try #require(frames.count == thumbnails.count && frames.count > 60)
        let shown = thumbnails.map { EndToEndTests.camera(in: $0, among: Self.ids) }
        // Exactly cam1, then cam3's picture (`wide`), then cam2 on air; each cut where its event says.
        var runs: [CameraID] = []
        for camera in shown.compactMap({ $0 }) where runs.last != camera { runs.append(camera) }
        #expect(runs == ["cam1", "cam3", "cam2"])
        #expect(shown.allSatisfy { $0 != nil }, "every frame shows a camera (no slate)")
        try EndToEndTests.expectCutsWhereTheEventsSay(zip(["cam3", "cam2"], switches.dropFirst()).map { (CameraID($0), $1) },
                                                      shown: shown, frames: frames, firstProgramMS: firstProgramMS)

        // The audio track carries the microphone: audiotestsrc's 440 Hz sine (after the first second,
        // which may hold the silence before the microphone was linked).
        let samples = try Self.audioSamples(file)
        try #require(samples.count > 48_000 * 2)
        let tone = ToneAnalysis(samples: Array(samples[48_000...]))
        #expect(tone.level > 0.05, "tone level \(tone.level)")
        #expect(abs(tone.frequency - 440) < 25, "tone at \(tone.frequency) Hz")
        // Mostly sound: a loaded machine (no realtime priority here: the whole suite runs in parallel on
        // two cores) may drop quanta now and then.
        let profile = stride(from: 0, to: samples.count - 24_000, by: 24_000).map {
            Int(ToneAnalysis(samples: Array(samples[$0..<($0 + 24_000)])).soundFraction * 100)
        }
        #expect(tone.soundFraction > 0.5, """
            sound in \(tone.soundFraction * 100) % of the audio; per half second from the start: \(profile); \
            server: \(server.errorText().split(separator: "\n").filter { $0.contains("PipeWire") || $0.contains("stopping") })
            """)
    }

    /// Without a session manager, and with WirePlumber running.
    @Test(arguments: [false, true])
    func aCameraKilledMidStreamShowsTheSlateAndComesBackUnderItsName(withWirePlumber: Bool) throws {
        let rig = try PipeWireRig()
        try rig.start()
        if withWirePlumber { try rig.startSessionManager() }
        try Self.startCameras(rig)
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        try studio.serve(["--backends", "pipewire", "--rtmp", nginx.url(stream: "pw")] + Self.program, environment: rig.environment)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        #expect(try studio.run(["switch", "cam2", "--socket", studio.socket]).status == 0)
        #expect(studio.waitForProgramFrames(30))
        // cam2's producer dies (SIGKILL, like a camera yanked out): the program shows the slate.
        rig.stopCamera(node: "vcam2")
        #expect(waitUntil(seconds: 3, every: 0.1) {
            let cameras = (try? studio.json(["cameras"]))?["cameras"]?.arrayValue ?? []
            return cameras.first { $0["name"] == "cam2" }?["state"] == "lost"
        })
        #expect(studio.waitForProgramFrames(30))
        try rig.startCamera(node: "vcam2", camera: "cam2", size: "640x480", rate: 30, format: "nv12")
        #expect(waitUntil(seconds: 5, every: 0.1) {
            let cameras = (try? studio.json(["cameras"]))?["cameras"]?.arrayValue ?? []
            return cameras.first { $0["name"] == "cam2" }?["state"] == "live"
        })
        #expect(studio.waitForProgramFrames(30))
        let status = try studio.json(["status"])
        #expect(status["program"]?["source"] == "cam2", "still on cam2, without operator action")
        #expect((status["program"]?["fps"]?.doubleValue ?? 0) > 20, "the program kept its frame rate")
        #expect(studio.stopServer() == .exited(0))

        let log = try JSONValue(parsing: try studio.run(["log", "--json", "--db", studio.database]).output)
        let lost = EndToEndTests.events(log, kind: "camera_lost")
        let returned = EndToEndTests.events(log, kind: "camera_returned")
        // cam2 went away and came back, exactly once. (A loaded machine can also starve a producer past
        // the loss timeout: such `reason=silent` losses are allowed as long as each ends in its return.)
        func named(_ events: [JSONValue], reason: String) -> [String] {
            events.filter { $0["details"]?["reason"]?.stringValue == reason }.compactMap { $0["camera"]?.stringValue }
        }
        #expect(named(lost, reason: "removed") == ["cam2"], "\(lost)")
        #expect(named(returned, reason: "reappeared") == ["cam2"], "\(returned)")
        for camera in ["cam1", "cam2", "cam3"] {
            #expect(named(lost, reason: "silent").filter { $0 == camera }.count
                    == named(returned, reason: "frames resumed").filter { $0 == camera }.count, "\(camera): every silent loss ended")
        }
        #expect(lost.count == named(lost, reason: "removed").count + named(lost, reason: "silent").count, "no other kind of loss: \(lost)")

        // On air: cam2, the slate (no camera), cam2 again; never another camera in cam2's place.
        let file = try #require(nginx.recordings().first)
        let shown = try MediaProbe.tinyFrames(file).map { EndToEndTests.camera(in: $0, among: Self.ids) }
        var runs: [String] = []
        for camera in shown.map({ $0?.name ?? "slate" }) where runs.last != camera { runs.append(camera) }
        #expect(runs.drop { $0 != "cam2" }.elementsEqual(["cam2", "slate", "cam2"]), "\(runs)")
    }

    /// A/V sync through the whole pipeline. On the input side a flash (an all-white frame from a
    /// virtual camera) and a beep (from a virtual microphone) happen at the same instants: every whole
    /// second of CLOCK_MONOTONIC. On the output side the decoded stream's flash frames and beep onsets
    /// are paired; their offset is what the pipeline adds between audio and video.
    ///
    /// The server takes the default microphone (`--audio pipewire`), which the daemon's
    /// default.audio.source metadata says is the beeper; without following it the server would take the
    /// rig's 440 Hz test tone (the rule's choice) and no beep onsets would be found.
    @Test func aKnownAudioEventAndAKnownVideoEventStayTogether() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try rig.startCamera(node: "vcam1", camera: "cam1", size: "640x480", rate: 30, format: "i420", extraArguments: ["--flash", "1"])
        try rig.startBeeper(node: "vbeep")
        try rig.setDefaultMetadata("default.audio.source", to: #"{ "name": "vbeep" }"#)
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        try studio.serve(["--backends", "pipewire", "--audio", "pipewire", "--rtmp", nginx.url(stream: "av")] + Self.program,
                         environment: rig.environment)
        #expect(waitUntil(seconds: 10, every: 0.1) { (try? studio.status())?["outputs"]?[0]?["state"]?.stringValue == "connected" })
        // Ten seconds of program, however long that takes here: flashes and beeps at least four times
        // each even where a loaded machine loses a flash frame or a beep now and then.
        #expect(studio.waitForProgramFrames(300, seconds: 90))
        _ = waitUntil(seconds: 30, every: 0.1) { (try? studio.status())?["audio_input"]?["captured_s"]?.doubleValue ?? 0 > 9 }
        let input = try #require(try studio.status()["audio_input"])
        #expect(input["node"] == "vbeep" && input["default_node"] == "vbeep" && input["connections"]?.intValue == 1, "\(input)")
        #expect(studio.stopServer() == .exited(0))

        let file = try #require(nginx.recordings().first)
        let events = try Self.flashesAndBeeps(in: file)
        try #require(events.flashes.count >= 4, "flash frames at \(events.flashes)")
        try #require(events.beeps.count >= 4, "beep onsets at \(events.beeps)")
        let offsets = Self.pairs(events).map(\.offset)
        try #require(offsets.count >= 3, "pairs: \(offsets); flashes \(events.flashes); onsets \(events.beeps)")
        let median = offsets.sorted()[offsets.count / 2]
        // Steady: every pair within 90 ms of the median (a frame interval is 33 ms, a quantum 21 ms; when
        // the microphone's buffer runs dry on a loaded machine it refills, and until the compensation
        // follows, within a tenth of a second, the audio moves by up to one buffer, 43-125 ms).
        // Found 2026-12-02 on a quiet machine once the microphone was compensated: the first pair after
        // the start can be 100-130 ms off the rest (audio early against the flash; the camera's or the
        // microphone's start-up, not found yet), the others within a frame. Not seen since: 26 runs on
        // 2026-12-02 (12 with the machine loaded by busy loops or a release build) had every pair within
        // 5 ms of the median but for a flash held over two frames (its second frame 33 ms off). Checked
        // every run, reported until found or not seen for long.
        withKnownIssue("issue 13: the first flash/beep pair after the start can be 100-130 ms off the others", isIntermittent: true) {
            #expect(offsets.allSatisfy { abs($0 - median) < 90 }, "offsets vary: \(offsets)")
        }
        // Within what viewers accept as lip sync (ITU-R BT.1359: audio at most 45 ms early, 125 ms late),
        // and, with the microphone's buffer compensated (its audio at its capture time, docs/audio.md),
        // near zero: the picture waits 0-33 ms for its tick, the beep's quantum a little; 40 ms either way
        // (22-90 ms late before the compensation, -3..+13 after it on a loaded machine; +31 once the rig's
        // camera handed its pictures over at once, its beeper still a quantum late; 5-10 with both on time).
        #expect(median > -40 && median < 40, "A/V offset \(median) ms (audio minus video); all: \(offsets)")
        print("A/V offset through the pipeline: median \(median) ms (audio minus video), per event \(offsets.map { Int($0.rounded()) })")
    }
}
