import Foundation
import Testing
import Control
import TestSupport

/// Picture settings through the real binary: a pin's `picture:` applied when its camera appears, then
/// `studio picture` changing, showing and refusing settings live, logged and never written to the file.
@Suite(.serialized) struct PictureEndToEndTests {
    @Test func aPinsPictureAppliesAndStudioPictureChangesItLive() throws {
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        let yaml = """
        cameras:
          pins:
            - match: "test-pattern:1"
              name: cam1
              picture:
                mirror: true

        """
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path, "--cameras", "2"] + EndToEndTests.smallProgram)
        defer { _ = studio.stopServer() }

        // The pin's settings are in force from the camera's first frames: once the program has cam1's
        // picture at all (the client now starts in milliseconds, before the camera's first frame reached
        // the switcher), it is the pin's.
        #expect(waitUntil(seconds: 30, every: 0.1) { (try? studio.json(["status"]))?["program"]?["pictures"]?["cam1"] != nil })
        let shown = try studio.json(["picture", "cam1"])
        #expect(shown["camera"] == "cam1" && shown["picture"]?["mirror"] == .bool(true) && shown["program_ms"] == .null, "\(shown)")
        #expect(try studio.json(["status"])["program"]?["pictures"]?["cam1"]?["mirror"] == .bool(true))

        let changed = try studio.run(["picture", "cam1", "--no-mirror", "--beauty", "40", "--crop", "0,0,0.5,1", "--socket", studio.socket])
        #expect(changed.status == 0, "\(changed)")
        #expect(changed.output.hasPrefix("cam1: crop 0,0,0.5,1 · beauty 40\n"), "\(changed.output)")
        #expect(changed.output.contains("changed crop none -> 0,0,0.5,1, mirror true -> false, beauty 0 -> 40"), "\(changed.output)")
        let status = try studio.json(["status"])
        let picture = status["program"]?["pictures"]?["cam1"]
        #expect(picture?["beauty"]?.intValue == 40 && picture?["mirror"] == .bool(false) && picture?["crop"]?.arrayValue?.count == 4)

        // Bad values and unknown cameras: exit 1 with the reason, nothing changed.
        let tooMuch = try studio.run(["picture", "cam1", "--beauty", "140", "--socket", studio.socket])
        #expect(tooMuch.status == 1 && tooMuch.error.contains("beauty must be between 0 and 100 (got 140)"), "\(tooMuch)")
        let unknown = try studio.run(["picture", "cam9", "--mirror", "--socket", studio.socket])
        #expect(unknown.status == 1 && unknown.error.contains("cam9") && unknown.error.contains("cam1, cam2"), "\(unknown)")
        let both = try studio.run(["picture", "cam1", "--mirror", "--no-mirror", "--socket", studio.socket])
        #expect(both.status == 2 && both.error.contains("--mirror or --no-mirror"), "\(both)")
        #expect(try studio.json(["picture", "cam1"])["picture"]?["beauty"]?.intValue == 40)

        // --reset goes back to the camera's own picture.
        let reset = try studio.json(["picture", "cam1", "--reset"])
        #expect(reset["picture"]?["beauty"]?.intValue == 0 && reset["picture"]?["crop"] == .null && reset["program_ms"]?.intValue != nil)
        #expect(try studio.json(["status"])["program"]?["pictures"] == .object([:]))

        // Each change is an event with its program time; the config file is left as it was.
        func logged() -> [JSONValue] {
            ((try? studio.json(["log"]))?["events"]?.arrayValue ?? []).filter { $0["kind"] == "picture_changed" }
        }
        #expect(waitUntil(seconds: 10, every: 0.1) { logged().count == 3 }, "\(logged())")
        let events = logged()
        try #require(events.count == 3)
        #expect(events.first?["camera"] == "cam1" && events.first?["details"] == .object(["mirror": "false -> true"]))
        #expect(events[1]["details"]?["beauty"] == "0 -> 40" && events[1]["program_ms"]?.intValue != nil)
        #expect(try String(contentsOf: config, encoding: .utf8) == yaml)
    }
}
