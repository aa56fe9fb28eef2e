import Foundation
import Testing
import Control
import StudioCore
@testable import StudioServer
import TestSupport

extension EndToEndTests {
    /// `focus` against the real server with test-pattern cameras: a point outside the picture and an
    /// unknown camera are refused with the reason; a test-pattern camera answers `none` and says why;
    /// each answered request is logged as `camera_focus`. (Devices: CaptureTests.FocusControlsTests
    /// for the choice of method, VividTests for a V4L2 device without focus controls.)
    @Test func focusSaysExactlyWhatTheCameraCouldDo() throws {
        let studio = try StudioHarness()
        try studio.serve(["--cameras", "2", "--camera-size", "320x180"] + Self.smallProgram)

        let printed = try studio.run(["focus", "cam1", "0.4", "0.6", "--socket", studio.socket])
        #expect(printed.status == 0, "\(printed)")
        #expect(printed.output.contains("cam1: focus on (0.4, 0.6) by none"), "\(printed.output)")
        #expect(printed.output.contains("test-pattern camera: it has no focus or exposure controls"), "\(printed.output)")

        let reply = try studio.json(["focus", "cam2", "1", "0"])
        #expect(reply["camera"] == "cam2" && reply["x"]?.doubleValue == 1 && reply["y"]?.doubleValue == 0)
        #expect(reply["method"] == "none" && reply["exposure"] == .null && reply["region"] == .null)
        #expect(reply["reason"]?.stringValue == "cam2 is a test-pattern camera: it has no focus or exposure controls")

        let client = try ControlClient(socketPath: studio.socket)
        let refused: [([String: JSONValue], ControlErrorCode, String)] = [
            (["camera": "cam1", "x": 1.5, "y": 0.5], .invalidArgument, "x and y are fractions of the picture from 0 to 1"),
            (["camera": "cam1", "x": 0.5, "y": -0.1], .invalidArgument, "got x 0.5, y -0.1"),
            (["camera": "cam9", "x": 0.5, "y": 0.5], .unknownCamera, "no camera named cam9"),
            (["camera": "cam1", "x": "left", "y": 0.5], .invalidArgument, "argument \"x\" must be"),
            (["camera": "cam1", "y": 0.5], .invalidArgument, "missing argument \"x\""),
        ]
        for (arguments, code, message) in refused {
            do {
                _ = try client.request("focus", arguments: arguments)
                Issue.record("focus \(arguments): expected \(code)")
            } catch {
                #expect(error.code == code && error.message.contains(message), "focus \(arguments): \(error)")
            }
        }
        let outside = try studio.run(["focus", "cam1", "2", "0.5", "--socket", studio.socket])
        #expect(outside.status == 1 && outside.error.contains("from 0 to 1"), "\(outside)")
        let notANumber = try studio.run(["focus", "cam1", "middle", "0.5", "--socket", studio.socket])
        #expect(notANumber.status == 2 && notANumber.error.contains("studio focus") && notANumber.error.contains("middle"), "\(notANumber)")
        let missing = try studio.run(["focus", "cam1", "0.5", "--socket", studio.socket])
        #expect(missing.status == 2 && missing.error.contains("studio focus cam1 0.4 0.6"), "\(missing)")

        // The two answered requests are in the session's log, with the point and the method; the refused are not.
        #expect(waitUntil(seconds: 10, every: 0.1) { ((try? studio.json(["log"]))?["events"]?.arrayValue ?? []).filter { $0["kind"] == "camera_focus" }.count == 2 })
        let focus = Self.events(try studio.json(["log"]), kind: "camera_focus")
        #expect(focus.map { $0["camera"]?.stringValue } == ["cam1", "cam2"])
        #expect(focus.first?["details"]?["x"] == "0.4" && focus.first?["details"]?["y"] == "0.6")
        #expect(focus.first?["details"]?["method"] == "none" && focus.first?["details"]?["reason"]?.stringValue?.contains("test-pattern") == true)
        #expect(try studio.json(["status"])["program"]?["late_ticks"]?.intValue != nil, "the show goes on")
        #expect(studio.stopServer() == .exited(0))
    }
}
