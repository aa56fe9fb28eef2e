import Foundation
import Testing
import Control
import TestSupport

/// `studio serve` on a bare PC, as a new user starts it: no config, no `--audio`. The studio PC's own
/// microphones are the program's audio (the desktop's default one up, the others muted), or silence
/// with the reason said when there is none; and the start says what it found and where the program goes.
@Suite(.serialized) struct BarePCEndToEndTests {
    typealias Mixer = AudioMixerEndToEndTests

    /// The server's log lines so far (its stderr), without the `studio: ` prefix.
    static func logLines(_ studio: StudioHarness) -> [String] {
        (studio.server?.errorText() ?? "").split(separator: "\n").map { $0.hasPrefix("studio: ") ? String($0.dropFirst(8)) : String($0) }
    }

    /// Waits until a log line starts with `prefix`, and answers it.
    static func logLine(_ studio: StudioHarness, startingWith prefix: String) -> String? {
        var found: String?
        _ = waitUntil(seconds: 15, every: 0.1) {
            found = logLines(studio).first { $0.hasPrefix(prefix) }
            return found != nil
        }
        return found
    }

    /// Two virtual microphones and the rig's own test source; the session manager's default is vmicB:
    /// every one is an input, vmicB up at 0 dB, the others muted; the start lists them so.
    @Test func withoutAnAudioSourceTheMicrophonesAreTakenTheDefaultOneUp() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try rig.startMicrophone(node: "vmicA", tone: 440)
        try rig.startMicrophone(node: "vmicB", tone: 1000)
        try rig.setDefaultMetadata("default.audio.source", to: #"{ "name": "vmicB" }"#)
        let studio = try StudioHarness()
        try studio.serve(["--backends", "none"] + EndToEndTests.smallProgram, environment: rig.environment)
        func audio() -> JSONValue { (try? studio.json(["audio"])) ?? .null }
        #expect(waitUntil(seconds: 20, every: 0.1) { ["vmicA", "vmicB"].allSatisfy { Mixer.input(audio(), node: $0)?["state"]?.stringValue == "streaming" } }, "\(audio())")
        let reply = audio()
        #expect(reply["source"] == "microphones" && reply["silence_reason"] == .null, "\(reply)")
        let inputs = reply["inputs"]?.arrayValue ?? []
        #expect(inputs.count >= 3, "the two microphones and the rig's test source: \(inputs)")
        let b = try #require(Mixer.input(reply, node: "vmicB")), a = try #require(Mixer.input(reply, node: "vmicA"))
        #expect(b["muted"] == false && b["gain_db"]?.doubleValue == 0, "\(b)")
        #expect(a["muted"] == true && a["gain_db"]?.doubleValue == 0, "\(a)")
        #expect(inputs.filter { $0["muted"] == false }.count == 1, "only the default microphone is up: \(inputs)")
        // Heard: the default one's tone (-12 dBFS peak at unity) reaches the program; the muted ones do not.
        #expect(waitUntil(seconds: 20, every: 0.1) { (Mixer.input(audio(), node: "vmicB")?["levels"]?["peak_dbfs"]?[0]?.doubleValue ?? -96) > -15 }, "\(audio())")
        #expect((Mixer.input(audio(), node: "vmicA")?["levels"]?["peak_dbfs"]?[0]?.doubleValue ?? 0) <= -96)

        // The start said so: each microphone with its state, and that the program goes nowhere.
        let nameA = try #require(a["name"]?.stringValue), nameB = try #require(b["name"]?.stringValue)
        let microphones = try #require(Self.logLine(studio, startingWith: "microphones: "), "\(Self.logLines(studio))")
        #expect(microphones.contains("\(nameB) (") && microphones.contains(", up)") && microphones.contains("\(nameA) (") && microphones.contains(", muted)"),
                "\(microphones)")
        #expect(Self.logLine(studio, startingWith: "cameras: none (--backends none)") != nil, "\(Self.logLines(studio))")
        #expect(Self.logLine(studio, startingWith: "warning: the program is neither streamed nor recorded") != nil, "\(Self.logLines(studio))")
        #expect(studio.stopServer() == .exited(0))
    }

    /// A microphone plugged in mid-show starts muted while another is up (the rig's own test source,
    /// the default by the rule without a session manager), and is listed, ready to raise.
    @Test func aMicrophoneFoundMidShowStartsMutedWhileAnotherIsUp() throws {
        let rig = try PipeWireRig()
        try rig.start()
        let studio = try StudioHarness()
        try studio.serve(["--backends", "none"] + EndToEndTests.smallProgram, environment: rig.environment)
        func audio() -> JSONValue { (try? studio.json(["audio"])) ?? .null }
        func inputs() -> [JSONValue] { audio()["inputs"]?.arrayValue ?? [] }
        #expect(waitUntil(seconds: 20, every: 0.1) { inputs().count == 1 && inputs()[0]["muted"] == false }, "the rig's source, up: \(audio())")
        try rig.startMicrophone(node: "vmicA", tone: 440)
        #expect(waitUntil(seconds: 20, every: 0.1) { Mixer.input(audio(), node: "vmicA")?["state"]?.stringValue == "streaming" }, "\(audio())")
        let late = try #require(Mixer.input(audio(), node: "vmicA"))
        #expect(late["muted"] == true && late["gain_db"]?.doubleValue == 0, "\(late)")
        #expect(inputs().filter { $0["muted"] == false }.count == 1, "\(inputs())")
        #expect(studio.stopServer() == .exited(0))
    }

    /// No PipeWire daemon at all: the program is silence, and `studio audio`, `studio status` and the
    /// start's log say so and why; the console's address is said too.
    @Test func withNoPipeWireDaemonTheProgramIsSilenceAndSaysWhy() throws {
        let studio = try StudioHarness()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = studio.directory.path
        environment.removeValue(forKey: "PIPEWIRE_REMOTE")
        try studio.serve(["--backends", "none", "--http", "127.0.0.1:0"] + EndToEndTests.smallProgram, environment: environment)
        let reply = try studio.json(["audio"])
        #expect(reply["source"] == "microphones" && reply["inputs"]?.arrayValue?.isEmpty == true, "\(reply)")
        let reason = try #require(reply["silence_reason"]?.stringValue, "\(reply)")
        #expect(reason.hasPrefix("no microphone: no PipeWire daemon at \(studio.directory.path)/pipewire-0"), "\(reason)")
        #expect(try studio.status()["audio"]?["mixer"]?["silence_reason"]?.stringValue == reason)
        let text = try studio.run(["status", "--socket", studio.socket]).output
        #expect(text.contains("audio in  microphones · the program is silence: \(reason)"), "\(text)")
        let audioText = try studio.run(["audio", "--socket", studio.socket]).output
        #expect(audioText.contains("the program is silence: \(reason)"), "\(audioText)")
        // The program carries silence.
        #expect(studio.waitForProgramFrames(15))
        #expect(try studio.status()["audio"]?["levels"]?["peak_dbfs"]?.arrayValue?.allSatisfy { $0.doubleValue ?? 0 <= -96 } == true)

        #expect(Self.logLine(studio, startingWith: "audio: the program is silence: \(reason)") != nil, "\(Self.logLines(studio))")
        let console = try #require(Self.logLine(studio, startingWith: "console: http://127.0.0.1:"), "\(Self.logLines(studio))")
        #expect(console.hasSuffix("/") && Int(console.dropFirst("console: http://127.0.0.1:".count).dropLast()) != nil, "\(console)")
        #expect(Self.logLine(studio, startingWith: "warning: the program is neither streamed nor recorded") != nil)
        #expect(studio.stopServer() == .exited(0))
    }

    /// Test-pattern cameras keep the test tone; a recording is said, and then there is no warning.
    @Test func testCamerasKeepTheToneAndARecordingIsSaid() throws {
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("rec")
        try studio.serve(["--cameras", "2", "--record", recordings.path, "--no-iso"] + EndToEndTests.smallProgram)
        #expect(try studio.json(["audio"])["source"] == "tone")
        let cameras = try #require(Self.logLine(studio, startingWith: "cameras: "), "\(Self.logLines(studio))")
        #expect(cameras.contains("cam1 (") && cameras.contains("cam2 (") && cameras.contains("test-pattern"), "\(cameras)")
        #expect(Self.logLine(studio, startingWith: "audio: the test tone") != nil, "\(Self.logLines(studio))")
        let recording = try #require(Self.logLine(studio, startingWith: "recording: \(recordings.path)/"), "\(Self.logLines(studio))")
        #expect(recording.hasSuffix("-program.mkv"), "\(recording)")
        #expect(!Self.logLines(studio).contains { $0.hasPrefix("warning: the program is neither") }, "\(Self.logLines(studio))")
        #expect(studio.stopServer() == .exited(0))
    }
}
