import Foundation
import Testing
import Capture
import Switcher
import StudioCore
import StudioSystem
import TestSupport
@testable import StudioServer
@testable import IsoRecording

/// A capture node's senders in the hub: every camera the hub adds gets one (encoding on its own
/// threads, at the node's size), a camera that goes and comes back keeps it, a removed one loses it.
@Suite(.serialized) struct NodeSenderHubTests {
    @Test func everyCameraGetsItsSenderAndARemovedOneLosesIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-senders-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = IsoRecorder.Settings(preset: "ultrafast", bitRate: 300_000, keyframeIntervalSeconds: 1, fallbackRate: Rational(30),
                                            staleAfterSeconds: 1)
        settings.feed = .send
        settings.size = (160, 90)
        let senderEvents = HubEvents()
        let (hub, switcher, discovery, _, _, log) = try CameraHubTests().makeRig(cameras: 2, makeSender: { [settings] camera in
            IsoRecorder(camera: camera, path: directory.appendingPathComponent("\(camera.id.name).mkv").path, settings: settings,
                        events: senderEvents)
        })
        defer { log.close() }
        hub.attach(discovery)
        let origin = MonotonicClock.now()
        switcher.start(origin: origin)
        hub.start(origin: origin)
        defer {
            hub.stop()
            switcher.stop()
            for sender in hub.senders { sender.stopEncoding() }
        }
        #expect(hub.senders.map(\.cameraID) == ["cam1", "cam2"] && hub.isoRecorders.isEmpty)
        #expect(hub.senders.map(\.output.destination.name) == ["send-cam1", "send-cam2"])
        func encoding() -> Bool { hub.senders.allSatisfy { $0.statistics.framesEncoded > 5 && $0.statistics.width == 160 } }
        #expect(waitUntil(seconds: 10, every: 0.05) { encoding() }, "\(hub.senders.map(\.statistics.framesEncoded))")

        // Unplugged and back: the same sender, encoding the returned camera.
        let first = try #require(hub.senders.first)
        discovery.simulateUnplug("cam1")
        discovery.simulatePlug("cam1")
        #expect(hub.senders.first === first)
        let before = first.statistics.framesEncoded
        #expect(waitUntil(seconds: 5, every: 0.05) { first.statistics.framesEncoded > before + 5 })

        // Removed from the show: its sender goes with it.
        #expect(hub.remove("cam2", by: "test", reason: "gone"))
        #expect(hub.senders.map(\.cameraID) == ["cam1"] && hub.cameraFeeds.count == 1)
    }

    /// A node camera's ISO file on the switcher: the name's `/` is a `.` (no plain name holds one), not a directory.
    @Test func aNodeCamerasISOFileIsOneFile() {
        #expect(RecordingDirectory.isoPath(in: "/r", session: 3, camera: "pc2/cam1", exists: { _ in false }) == "/r/session-3-pc2.cam1.mkv")
        #expect(RecordingDirectory.isoPath(in: "/r", session: 3, camera: "cam1", exists: { _ in false }) == "/r/session-3-cam1.mkv")
    }
}
