import Foundation
import Testing
import Capture
import Control
import LivePictures
import StudioConfig
import StudioCore
@testable import StudioServer
import StudioSystem
import TestSupport

/// A capture node and its switcher on loopback: a real `studio serve --node pc2 --send srt://...` of two
/// test-pattern cameras (cam1 red, cam2 green ident) into a switcher whose SRT listener names the node.
/// Both cameras appear as `pc2/cam1` and `pc2/cam2`; `studio switch pc2/cam2` (the CLI) puts the green
/// one on program and `pc2/cam1` the red one; a stranger node and a second claim on a connected name are
/// refused with their reasons; the node killed: both lost; the node started again: both back under the
/// same names, no new cameras. The node starts first: its senders call again with backoff until the
/// switcher is there. cam2 is sent at a size of its own (`video.cameras`), cam1 at its own 320x180.
@Suite(.serialized) struct NodeEndToEndTests {
    static let passphrase = "pc2-node-secret"

    @Test func aNodesCamerasAreTheSwitchersUnderTheNodesName() throws {
        let scratch = try ScratchStudio("node-switcher")
        defer { scratch.remove() }
        let port = try NginxRTMP.freePort()
        var options = scratch.options()
        options.testCameraCount = 0
        options.configuration.program = ProgramFormat(width: 640, height: 360, frameRate: Rational(30, 1))
        options.configuration.network.srt = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(port)), callers: [],
                                                            nodes: [.init(name: "pc2", passphrase: Self.passphrase)])
        // The node: a real `studio serve`, its two test-pattern cameras sent as pc2/cam1 and pc2/cam2. It
        // starts before its switcher: its senders fail, call again with backoff, and get through once it is up.
        let node = try StudioHarness()
        let config = node.directory.appendingPathComponent("node.yaml")
        try """
            node:
              name: pc2
              send: srt://127.0.0.1:\(port)?passphrase=\(Self.passphrase)
              video: {cameras: [{name: cam2, size: 160x90, bitrate: 300k}]}

            """.write(to: config, atomically: true, encoding: .utf8)
        let nodeArguments = ["--config", config.path, "--cameras", "2", "--camera-size", "320x180", "--program", "320x180@30", "--no-iso"]
        try node.serve(nodeArguments)
        defer { _ = node.stopServer() }
        let nodeClient = try ControlClient(socketPath: node.socket)
        // The second attempt comes about 9.5 s after the start (the backoff's 0.5 s and SRT's connect
        // timeouts): 30 s leaves room on a busy machine.
        #expect(waitUntil(seconds: 30, every: 0.1) {
            ((try? nodeClient.request("log"))?["events"]?.arrayValue ?? []).contains {
                $0["kind"] == "output_reconnect_attempt" && $0["details"]?["output"] == "send-cam2" && $0["details"]?["attempt"] == "2"
            }
        }, "the node's sender did not try twice")

        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        func cameras() -> [JSONValue] { (try? client.request("cameras"))?["cameras"]?.arrayValue ?? [] }
        func camera(_ name: String) -> JSONValue? { cameras().first { $0["name"]?.stringValue == name } }
        func refusals() -> [String] {
            ((try? client.request("log"))?["events"]?.arrayValue ?? []).filter { $0["kind"] == "ingest_refused" }
                .compactMap { $0["details"]?["reason"]?.stringValue }
        }
        #expect(waitUntil(seconds: 20, every: 0.1) { camera("pc2/cam1")?["state"] == "live" && camera("pc2/cam2")?["state"] == "live" },
                "\(cameras()); node: \(node.server?.errorText() ?? "")")
        // Each at its size on the network: cam2 its own 160x90, cam1 the camera's 320x180.
        func size(_ name: String) -> [Int]? { camera(name)?["format"].flatMap { f in f["width"]?.intValue.flatMap { w in f["height"]?.intValue.map { [w, $0] } } } }
        #expect(waitUntil(seconds: 10, every: 0.1) { size("pc2/cam1") == [320, 180] && size("pc2/cam2") == [160, 90] },
                "\(String(describing: size("pc2/cam1"))) \(String(describing: size("pc2/cam2")))")

        // `studio switch pc2/cam2` from the command line: the green camera on program; then the red one.
        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        for (name, ident) in [("pc2/cam2", CameraID("cam2")), ("pc2/cam1", CameraID("cam1"))] {
            let switched = try node.run(["switch", name, "--socket", options.socketPath])
            #expect(switched.status == 0, "\(switched.error)")
            #expect(Self.programShows(ident, tiles: tiles, after: tiles.latest("program")?.sequence ?? 0), "\(name) is not on program")
        }

        // A node nobody listed, and a second claim on a name that is connected: refused, with the reason.
        let stranger = try SRTListenerEndToEndTests.caller(port: port, streamID: "pc9/cam1", passphrase: Self.passphrase, colour: "000000",
                                                          directory: scratch.directory)
        #expect(stranger.wait(timeout: 20) != nil, "an unknown node got in")
        let twin = try SRTListenerEndToEndTests.caller(port: port, streamID: "pc2/cam1", passphrase: Self.passphrase, colour: "000000",
                                                      directory: scratch.directory)
        #expect(twin.wait(timeout: 20) != nil, "a second pc2/cam1 got in")
        #expect(waitUntil(seconds: 10, every: 0.1) {
            let reasons = refusals()
            return reasons.contains("an unknown node \"pc9\"") && reasons.contains { $0.hasPrefix("pc2/cam1 is connected already") }
        }, "\(refusals())")
        #expect(camera("pc2/cam1")?["state"] == "live" && cameras().count == 2, "\(cameras())")

        // The node dies: both its cameras are lost (silent: SRT itself sees the peer gone only after
        // seconds), still listed.
        node.server?.terminate(signal: SIGKILL)
        _ = node.server?.wait(timeout: 10)
        #expect(waitUntil(seconds: 20, every: 0.1) { ["pc2/cam1", "pc2/cam2"].allSatisfy { camera($0)?["state"] == "lost" } }, "\(cameras())")

        // Started again at once: taken back under the same names (the silent connections give way, not
        // refused as a second node's), no other camera, and they stay live.
        try node.serve(nodeArguments)
        #expect(waitUntil(seconds: 30, every: 0.1) { camera("pc2/cam1")?["state"] == "live" && camera("pc2/cam2")?["state"] == "live" },
                "\(cameras()); node: \(node.server?.errorText() ?? "")")
        #expect(cameras().compactMap { $0["name"]?.stringValue }.sorted() == ["pc2/cam1", "pc2/cam2"])
        #expect(refusals().filter { $0.contains("is connected already") }.count == 1, "the restarted node was refused: \(refusals())")
        let back = camera("pc2/cam1")?["network"]?["pictures_in"]?.intValue ?? 0
        #expect(waitUntil(seconds: 20, every: 0.1) { (camera("pc2/cam1")?["network"]?["pictures_in"]?.intValue ?? 0) >= back + 90 })
        let since = ((try? client.request("log"))?["events"]?.arrayValue ?? []).filter { $0["camera"] == "pc2/cam1" }
            .compactMap { $0["kind"]?.stringValue }.filter { $0 == "camera_lost" || $0 == "camera_returned" }
        #expect(since.last == "camera_returned" && since.filter { $0 == "camera_lost" }.count == 1, "pc2/cam1 after the restart: \(since)")
        #expect(Self.programShows("cam1", tiles: tiles, after: tiles.latest("program")?.sequence ?? 0), "pc2/cam1 is not back on program")
    }

    /// Waits (20 s at most) for two program pictures in a row after picture `after` (the last one from
    /// before the switch) to show the test pattern's ident colour of `ident`.
    static func programShows(_ ident: CameraID, tiles: TilePictures, after: UInt64) -> Bool {
        var sequence = after, inARow = 0
        let deadline = MonotonicClock.now() + 20_000_000_000
        while MonotonicClock.now() < deadline {
            guard let picture = tiles.waitForNewer("program", than: sequence, timeoutSeconds: 1) else { continue }
            sequence = picture.sequence
            guard let frame = try? picture.jpeg.withUnsafeBytes({ try MJPEGDecoder().decode($0) }) else { continue }
            inARow = TestPatternCamera.camera(in: frame, among: ["cam1", "cam2"]) == ident ? inARow + 1 : 0
            if inARow == 2 { return true }
        }
        return false
    }
}
