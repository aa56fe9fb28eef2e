import Foundation
import Testing
import Capture
import Control
import LivePictures
import StudioConfig
import StudioCore
import StudioServer
import StudioSystem
import Switcher

/// The live tiles inside a real server (in this process: the HTTP console will serve `server.tiles`):
/// the program tile shows what goes to the encoder, preview its camera, each camera its own picture.
@Suite struct TilesInServerTests {
    @Test func programPreviewAndCameraTilesShowTheirCameras() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-tiles-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 2
        options.testCameraSize = (640, 360)
        // No HTTP console: the tiles are read here, and the default port may be another test's.
        options.configuration.http.enabled = false
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let tiles = server.tiles
        #expect(tiles.tileNames == ["program", "preview", "cam1", "cam2"])
        #expect(tiles.counters.pictures == 0, "pictures made with no one watching")
        let ids: [CameraID] = ["cam1", "cam2"]
        for name in tiles.tileNames { #expect(tiles.subscribe(name)) }
        // Through the control socket, as an operator.
        let client = try ControlClient(socketPath: options.socketPath)
        _ = try client.request("switch", arguments: ["source": .string("cam2")])
        _ = try client.request("preview", arguments: ["source": .string("cam1")])
        for (tile, camera) in [("program", "cam2"), ("preview", "cam1"), ("cam1", "cam1"), ("cam2", "cam2")] {
            var shown: CameraID?
            var sequence: UInt64 = 0
            let deadline = MonotonicClock.now() + 20_000_000_000
            while shown?.name != camera, MonotonicClock.now() < deadline {
                guard let picture = tiles.waitForNewer(tile, than: sequence, timeoutSeconds: 1) else { continue }
                sequence = picture.sequence
                #expect(picture.width == 320 && picture.height == 180)
                let frame = try picture.jpeg.withUnsafeBytes { try MJPEGDecoder().decode($0) }
                shown = TestPatternCamera.camera(in: frame, among: ids)
            }
            #expect(shown?.name == camera, "the \(tile) tile")
        }
    }
}
