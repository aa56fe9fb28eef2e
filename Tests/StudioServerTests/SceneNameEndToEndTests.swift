import Foundation
import Testing
import Control
import TestSupport

/// Issue 34, item 2, the part only the running server can check: a camera holds a name from an older
/// config (a pin since removed) that a scene now has. A reload that would add that scene while the camera
/// is connected is refused; a start with that scene renames the camera to the lowest free `camN`, with a
/// warning, and `studio switch NAME` is the scene. A scene showing a missing camera warns at start.
extension EndToEndTests {
    @Test func aStoredCameraNameAndAScenesNameNeverMeet() throws {
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        let program = ["--cameras", "2"] + Self.smallProgram
        func cameraNames() throws -> [String] {
            (try studio.json(["cameras"])["cameras"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.sorted()
        }
        // 1. The second test-pattern camera is pinned as `guest`; the name is stored with its identity.
        try "cameras:\n  pins:\n    - {match: \"test-pattern:2\", name: guest}\n".write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path] + program)
        #expect(try cameraNames() == ["cam1", "guest"])
        #expect(studio.stopServer() == .exited(0))

        // 2. Without the pin the camera keeps its stored name; a reload adding a scene of that name is refused.
        try "{}\n".write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path] + program)
        #expect(try cameraNames() == ["cam1", "guest"])
        try "scenes:\n  - {name: guest, layout: side-by-side, sources: [cam1, cam2]}\n".write(to: config, atomically: true, encoding: .utf8)
        let refused = try studio.run(["reload", "--socket", studio.socket])
        #expect(refused.status == 1 && refused.error == "studio: scene guest: a connected camera has that name; a scene needs its own; nothing was changed\n",
                "\(refused)")
        #expect(studio.stopServer() == .exited(0))

        // 3. Started with the scene (and a scene showing cam9, which is not there): the camera moves to a free
        // camN, said in the log; `switch guest` is the scene.
        try "scenes:\n  - {name: guest, layout: side-by-side, sources: [cam1, cam2]}\n  - {name: far, layout: full, sources: [cam9]}\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let server = try studio.serve(["--config", config.path] + program)
        #expect(try cameraNames() == ["cam1", "cam2"])
        let reply = try studio.json(["switch", "guest"])
        #expect(reply["kind"] == "scene" && reply["source"] == "guest", "\(reply)")
        #expect(studio.stopServer() == .exited(0))
        let log = server.errorText()
        #expect(log.contains("warning: test-pattern:2 (Test pattern 2) had the name guest, which is a scene's now: the camera is named cam2"), "\(log)")
        #expect(log.contains("warning: scene far shows cam9, which is not connected: its layer shows the slate"), "\(log)")
    }
}
