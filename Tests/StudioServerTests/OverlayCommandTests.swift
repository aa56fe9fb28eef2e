import Foundation
import Testing
import Control
import TestSupport

/// `overlays:` through the real binary: `studio overlay` switches one on the next frame with its event,
/// `scenes` and `status` show the state, and a missing image stops `serve` at its line.
@Suite(.serialized) struct OverlayCommandTests {
    static let small = ["--program", "640x360@30", "--preset", "ultrafast", "--bitrate", "1500k", "--camera-size", "320x180"]

    /// A config with a logo (a real PNG written by ffmpeg) and a text caption, in `studio`'s directory.
    static func config(in directory: URL, image: String = "logo.png") throws -> String {
        let png = directory.appendingPathComponent("logo.png").path
        _ = try MediaProbe.run(MediaProbe.ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "color=white:s=64x32,format=rgba",
                                                   "-frames:v", "1", png])
        let path = directory.appendingPathComponent("studio.yaml").path
        try Data("""
        overlays:
          - name: logo
            layers:
              - image: \(image)
                rect: [560, 20, 64, 32]
          - name: caption
            on: true
            layers:
              - text: "Jane Doe"
                rect: [0.05, 0.8, 0.5, 0.15]
                style: { size: 24, box: black, padding: 8 }

        """.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theOverlayCommandSwitchesOnTheNextFrameWithItsEvent() throws {
        let studio = try StudioHarness()
        let config = try Self.config(in: studio.directory)
        try studio.serve(["--config", config, "--cameras", "1"] + Self.small)
        defer { _ = studio.stopServer() }

        let initial = try studio.json(["scenes"])
        let overlays = initial["overlays"]?.arrayValue ?? []
        #expect(overlays.map { $0["name"]?.stringValue } == ["logo", "caption"])
        #expect(overlays.map { $0["on"]?.boolValue } == [false, true])
        #expect(overlays.first?["layers"]?.arrayValue?.first?["source"]?.stringValue == "image \(studio.directory.path)/logo.png")

        let on = try studio.json(["overlay", "logo", "on"])
        #expect(on["overlay"]?.stringValue == "logo" && on["on"]?.boolValue == true && on["changed"]?.boolValue == true)
        let programMS = try #require(on["program_ms"]?.intValue)
        let toggled = try studio.json(["overlay", "caption"])
        #expect(toggled["on"]?.boolValue == false && toggled["changed"]?.boolValue == true)
        let states = try studio.status()["program"]?["overlays"]?.arrayValue?.map { "\($0["name"]?.stringValue ?? "") \($0["on"]?.boolValue ?? false)" }
        #expect(states == ["logo true", "caption false"])

        // The events carry the program time of the first frame with (and without) the overlay.
        #expect(waitUntil(seconds: 10, every: 0.1) {
            let events = (try? studio.json(["log"]))?["events"]?.arrayValue ?? []
            return events.contains { $0["kind"]?.stringValue == "overlay_on" && $0["program_ms"]?.intValue == programMS
                && $0["details"]?["overlay"]?.stringValue == "logo" }
                && events.contains { $0["kind"]?.stringValue == "overlay_off" && $0["details"]?["overlay"]?.stringValue == "caption" }
        })

        let unknown = try studio.run(["overlay", "nope", "--socket", studio.socket])
        #expect(unknown.status == 1 && unknown.error.contains("no overlay 'nope'; overlays: logo, caption"), "\(unknown)")
    }

    @Test func aMissingImageStopsServeAtItsLine() throws {
        let studio = try StudioHarness()
        let config = try Self.config(in: studio.directory, image: "missing.png")
        let server = try studio.serve(["--config", config, "--cameras", "1"] + Self.small, waitUntilReady: false)
        let exit = server.wait(timeout: 30)
        #expect(exit != nil && exit != .exited(0), "\(String(describing: exit))")
        #expect(server.errorText().contains("\(config):4: overlays[0].layers[0].image: image 'missing.png' not found"), "\(server.errorText())")
    }
}
