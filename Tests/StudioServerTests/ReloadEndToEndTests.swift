import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `studio reload` and SIGHUP against the real binary: the config file is rewritten under a running
/// server, and `studio scenes --json` says what the program composes.
@Suite(.serialized) struct ReloadEndToEndTests {
    /// The program format is in the file (a `--program` flag would win over it, reload or not).
    static func config(corner: String = "top-right", size: Double = 0.3, format: String = "640x360@30", extra: String = "") -> String {
        """
        program:
          format: \(format)
        scenes:
          - name: pip
            layout: pip
            sources: [cam1, cam2]
            corner: \(corner)
            size: \(size)
        \(extra)
        transition: { kind: mix, frames: 15 }
        """
    }

    /// The pip scene's inset (its second layer): `[x, y, width, height]` in program pixels.
    private func inset(_ studio: StudioHarness) throws -> [Int] {
        let scenes = try studio.json(["scenes"])["scenes"]?.arrayValue ?? []
        let pip = try #require(scenes.first { $0["name"] == "pip" })
        let layers = pip["layers"]?.arrayValue ?? []
        try #require(layers.count == 2, "\(pip)")
        return layers[1]["rect"]?.arrayValue?.compactMap(\.intValue) ?? []
    }

    @Test func reloadAndSIGHUPChangeScenesLiveAndABrokenOrFixedChangeChangesNothing() throws {
        let studio = try StudioHarness()
        let file = studio.directory.appendingPathComponent("studio.yaml")
        func write(_ text: String) throws { try text.write(to: file, atomically: true, encoding: .utf8) }
        func reload() throws -> (status: Int32, output: String, error: String) { try studio.run(["reload", "--socket", studio.socket]) }
        try write(Self.config())
        let server = try studio.serve(["--config", file.path, "--cameras", "2", "--preset", "ultrafast", "--bitrate", "1500k"])
        let topRight = try inset(studio)
        #expect(topRight.count == 4 && topRight[0] > 320, "the inset starts on the right: \(topRight)")

        // A changed layout: `studio reload` applies it.
        try write(Self.config(corner: "top-left"))
        let reloaded = try reload()
        #expect(reloaded.status == 0 && reloaded.output.contains("changed scenes"), "\(reloaded)")
        let topLeft = try inset(studio)
        #expect(topLeft.count == 4 && topLeft[0] < 40 && topLeft[2] == topRight[2], "the inset moved left: \(topLeft)")

        // SIGHUP does the same, and the server keeps running.
        try write(Self.config(corner: "top-left", size: 0.5))
        server.terminate(signal: SIGHUP)
        #expect(waitUntil(seconds: 15, every: 0.1) { ((try? inset(studio))?[2] ?? 0) == 320 }, "SIGHUP did not apply the new size: \((try? inset(studio)) ?? [])")
        #expect(!server.hasExited)
        #expect(studio.waitForProgramFrames(5))
        let afterSIGHUP = try inset(studio)

        // A broken file changes nothing and says file:line.
        try write("program:\n  format: 640x360@30\nscenes:\n  - name: pip\n    layout: pipp\n    sources: [cam1, cam2]\n")
        let broken = try reload()
        #expect(broken.status == 1 && broken.error.contains("studio.yaml:5") && broken.error.contains("nothing was changed"), "\(broken)")
        #expect(try inset(studio) == afterSIGHUP)

        // A key only a restart applies refuses the whole reload, by name, the scene change with it.
        try write(Self.config(corner: "bottom-right", format: "1280x720@30"))
        let fixed = try reload()
        #expect(fixed.status == 1 && fixed.error.contains("program.format cannot change while the server runs; restart to apply"), "\(fixed)")
        #expect(try inset(studio) == afterSIGHUP)
        #expect(try studio.json(["status"])["program"]?["format"] == "640x360@30")

        // A scene on program that the new file removes: the operator cuts away first.
        _ = try studio.json(["scene", "pip"])
        try write("program:\n  format: 640x360@30\nscenes:\n  - { name: wide, layout: side-by-side, sources: [cam1, cam2] }\n")
        let onAir = try reload()
        #expect(onAir.status == 1 && onAir.error.contains("scene pip is on program"), "\(onAir)")
        _ = try studio.json(["switch", "cam1"])
        let away = try reload()
        #expect(away.status == 0 && away.output.contains("scenes"), "\(away)")
        let names = try studio.json(["scenes"])["scenes"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
        #expect(names == ["wide"])

        // Every reload is an event.
        let events = try studio.json(["log"])["events"]?.arrayValue ?? []
        let done = events.filter { $0["kind"] == "config_reloaded" }, failed = events.filter { $0["kind"] == "config_reload_failed" }
        #expect(done.map { $0["details"]?["by"]?.stringValue ?? "" } == ["reload", "SIGHUP", "reload"], "\(done)")
        #expect(done.first?["details"]?["changed"] == "scenes")
        #expect(failed.count == 3 && failed.allSatisfy { $0["details"]?["file"]?.stringValue == file.path }, "\(failed)")
        #expect(failed.first?["details"]?["reason"]?.stringValue?.contains("studio.yaml:5") == true)
        #expect(studio.stopServer() == .exited(0))
    }

    @Test func reloadWithoutAConfigFileSaysSo() throws {
        let studio = try StudioHarness()
        try studio.serve(["--cameras", "1", "--program", "320x180@30", "--preset", "ultrafast", "--bitrate", "500k"])
        let result = try studio.run(["reload", "--socket", studio.socket])
        #expect(result.status == 1 && result.error.contains("started without --config"), "\(result)")
        #expect(studio.stopServer() == .exited(0))
    }
}
