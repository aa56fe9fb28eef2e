import Foundation
import Synchronization
import Testing
import Capture
import Control
import FrameDrawing
import StudioConfig
import StudioCore
import StudioSystem
import Switcher
import TestSupport
@testable import StudioServer

/// A backend whose one source (a solid-colour camera with its own tone, `SolidColourCamera`) the test
/// takes out of the show and brings back: each `plug` is a new camera object for the same identity,
/// named by the server's namer, as a network pull re-created at a reload or a capture node that
/// connects again would be.
struct RemovableBackend: SourceBackend {
    let discovery: RemovableDiscovery
    var name: BackendName { "removable" }
    var summary: String { "one camera the test removes and adds again" }
    var isSelectable: Bool { false }

    func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        discovery.namer.withLock { $0 = context.namer }
        return discovery
    }
}

final class RemovableDiscovery: CameraDiscovery {
    static let identity = CameraIdentity(backend: "removable", identity: "removable:1", displayName: "Removable")
    let colour: YUVColor
    let namer = Mutex<CameraNamer?>(nil)
    private let reports = Mutex<(added: (@Sendable (any Camera) -> Void)?, removed: (@Sendable (any Camera) -> Void)?)>((nil, nil))

    init(colour: YUVColor, namer: CameraNamer? = nil) {
        self.colour = colour
        self.namer.withLock { $0 = namer }
    }

    func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
        reports.withLock { $0 = (onAdded, onRemoved) }
        _ = try? plug()
    }

    func stop() {}

    /// A new camera object for the identity, named by the namer, reported as added.
    @discardableResult
    func plug() throws -> SolidColourCamera {
        guard let namer = namer.withLock({ $0 }) else { throw CaptureError(camera: nil, message: "no namer yet") }
        let name = try namer(Self.identity)
        let camera = SolidColourCamera(id: name, identity: Self.identity, colour: colour)
        report(added: camera)
        return camera
    }

    func report(added camera: any Camera) { reports.withLock { $0.added }?(camera) }
    func report(removed camera: any Camera) { reports.withLock { $0.removed }?(camera) }
}

/// A source removed for good while the show runs (`CameraHub.remove`), on a real server: its picture
/// leaves the program for the slate on the next frames, its tone leaves the mixer, `camera_removed` is
/// stored, its ISO file is finished and decodes to the end; a late report about the removed object
/// changes nothing; the same identity added again is a fresh camera under the same name, its tone back.
@Suite(.serialized) struct SourceRemovalTests {
    static let colour = YUVColor(red: 230, green: 20, blue: 160)

    @Test func aSourceRemovedMidShowLeavesProgramMixerAndListAndComesBackFresh() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-removal-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (320, 180)
        options.configuration.program = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))
        options.configuration.video.encoder = .x264
        options.configuration.video.preset = "ultrafast"
        options.configuration.video.bitRate = 500_000
        options.configuration.audio.source = .silence
        options.configuration.http.enabled = false
        options.configuration.recordDirectory = directory.appendingPathComponent("rec").path
        let discovery = RemovableDiscovery(colour: Self.colour)
        options.backends = SourceBackends.standard + [RemovableBackend(discovery: discovery)]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        let cam2 = CameraID("cam2")
        let first = try #require(server.cameras.camera(named: cam2) as? SolidColourCamera, "the removable camera is cam2")

        // On program, heard at the tone's level (the program audio is its tone alone), recorded.
        #expect(server.tiles.subscribe("program"))
        _ = try client.request("switch", arguments: ["source": .string("cam2")])
        let onAir = SolidColourBackendTests.programColour(server.tiles) { $0.distance(to: Self.colour) < 30 }
        #expect(onAir.map { $0.distance(to: Self.colour) < 30 } == true, "cam2 on program: \(onAir.map(\.description) ?? "no picture")")
        #expect(waitUntil(seconds: 20, every: 0.05) { Self.heard(server, "cam2") && Self.programPeak(server) > -25 },
                "cam2's tone in the mix: \(server.audio.meters.inputs["cam2"].map { "\($0.peakDBFS)" } ?? "no meter")")
        let iso = try #require(server.cameras.isoRecorders.first { $0.cameraID == cam2 })
        #expect(waitUntil(seconds: 30, every: 0.05) { iso.statistics.framesEncoded >= 30 }, "cam2's ISO records")

        // Removed mid-show.
        let encodedBefore = iso.statistics.framesEncoded
        #expect(server.cameras.remove(cam2, by: "test", reason: "its source closed"))
        #expect(!server.cameras.remove(cam2, by: "test", reason: "again"), "removed already")
        #expect(first.state == .stopped)
        // The program: the slate from the next frames (no backup rule here), the colour gone.
        #expect(waitUntil(seconds: 5, every: 0.01) { server.switcher.status.slate == "CAMERA LOST cam2" },
                "\(server.switcher.status.slate ?? "no slate")")
        let slate = SolidColourBackendTests.programColour(server.tiles) { $0.distance(to: Self.colour) > 60 }
        #expect(slate.map { $0.distance(to: Self.colour) > 60 } == true, "program after the removal: \(slate.map(\.description) ?? "no picture")")
        #expect(server.switcher.status.sources == [CameraID("cam1")])
        // The mixer: its input, strip and meter gone, and its level gone from the program.
        #expect(!server.audio.inputs.contains { $0.name == "cam2" })
        #expect(waitUntil(seconds: 10, every: 0.05) { server.audio.meters.inputs["cam2"] == nil && Self.programPeak(server) < -80 },
                "after the removal: meters \(server.audio.meters.inputs.keys.sorted()), program peak \(Self.programPeak(server))")
        #expect(server.audio.set.freeSlots == 1)
        // Not listed; a cut to it names it as removed.
        let listed = try client.request("cameras")["cameras"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
        #expect(listed == ["cam1"])
        let removedError = ControlError(.unknownCamera, "camera 'cam2' was removed from the show; it is no source until it is added again; available cameras: cam1")
        #expect(throws: removedError) { _ = try client.request("switch", arguments: ["source": .string("cam2")]) }
        #expect(throws: removedError) { _ = try client.request("preview", arguments: ["source": .string("cam2")]) }
        #expect(throws: removedError) { _ = try client.request("picture", arguments: ["camera": .string("cam2"), "mirror": .bool(true)]) }
        // The event, stored.
        var removed: [JSONValue] = []
        #expect(waitUntil(seconds: 10, every: 0.05) {
            removed = (try? client.request("log", arguments: ["kind": .string("camera_removed")]))?["events"]?.arrayValue ?? []
            return !removed.isEmpty
        })
        #expect(removed.count == 1 && removed.first?["camera"] == "cam2")
        let details = removed.first?["details"]
        #expect(details?["by"] == "test" && details?["reason"] == "its source closed" && details?["backend"] == "removable"
                && details?["identity"] == "removable:1" && details?["audio_input"] == "cam2", "\(details ?? .null)")

        // Its ISO file: finished, and every frame decodes.
        #expect(waitUntil(seconds: 20, every: 0.05) { iso.output.statistics.state == .stopped }, "the ISO output stops")
        let file = URL(fileURLWithPath: iso.path)
        let decoded = try MediaProbe.decodeCheck(file)
        let probed = try MediaProbe.probe(file)
        #expect(decoded.clean, "\(decoded.errors)")
        #expect(decoded.videoFrames >= encodedBefore && decoded.videoFrames == probed.videoPackets.count,
                "\(decoded.videoFrames) frames decoded of \(probed.videoPackets.count); \(encodedBefore) encoded before the removal")
        #expect(probed.audio != nil)

        // A late report from the discovery about the removed object changes nothing.
        discovery.report(removed: first)
        discovery.report(added: first)
        #expect(server.cameras.camera(named: cam2) == nil && first.state == .stopped)
        #expect(server.audio.set.freeSlots == 1 && !server.audio.inputs.contains { $0.name == "cam2" })

        // The same identity, added again: the same name, a fresh add (its own `camera_added`), its tone
        // back in the mix in the slot the first one left, its ISO into the next take.
        let second = try discovery.plug()
        #expect(second.id == cam2 && server.cameras.camera(named: cam2) === second)
        #expect(server.audio.set.freeSlots == 0)
        #expect(waitUntil(seconds: 20, every: 0.05) { Self.heard(server, "cam2") && Self.programPeak(server) > -25 }, "the tone back")
        _ = try client.request("switch", arguments: ["source": .string("cam2")])
        let back = SolidColourBackendTests.programColour(server.tiles) { $0.distance(to: Self.colour) < 30 }
        #expect(back.map { $0.distance(to: Self.colour) < 30 } == true, "cam2 back on program")
        let take2 = try #require(server.cameras.isoRecorders.first { $0.cameraID == cam2 })
        #expect(take2.path.hasSuffix("-cam2-take2.mkv") && take2.path != iso.path, "\(take2.path)")
        var added: [JSONValue] = []
        #expect(waitUntil(seconds: 10, every: 0.05) {
            added = (try? client.request("log", arguments: ["kind": .string("camera_added")]))?["events"]?.arrayValue ?? []
            return added.filter { $0["camera"] == "cam2" }.count == 2
        }, "\(added)")
        // The history (`program_intervals`, as `studio onair` reads it): cam2 ended at its removal, its slate
        // until it was added again (the program still named it, so it was on air at once).
        let intervals = try client.request("onair")["intervals"]?.arrayValue ?? []
        let removal = try #require(intervals.firstIndex { $0["ended_by"] == "removed" }, "\(intervals)")
        #expect(intervals[removal]["source"] == "cam2" && removal + 2 < intervals.count, "\(intervals)")
        #expect(intervals[removal + 1]["source"] == "slate" && intervals[removal + 1]["camera"] == "cam2"
                && intervals[removal + 1]["ended_by"] == "added" && intervals[removal + 2]["source"] == "cam2", "\(intervals)")
    }

    /// The backup rule applies to a removed camera as to a lost one, on that frame; and a camera added and
    /// removed many times leaves the hub, the switcher and the audio set as they were.
    @Test func aRemovedCameraGivesWayToItsBackupAndManyRemovalsGrowNothing() throws {
        let events = HubEvents()
        let log = ServerLog()
        defer { log.close() }
        let patterns = try TestPatternDiscovery(count: 1, format: CameraHubTests.small)
        let program = CameraHubTests.Program(candidates: [CameraID("cam1")])
        let switcher = ProgramSwitcher(format: ProgramFormat(width: 320, height: 180, frameRate: Rational(30)),
                                       configuration: .init(lossTimeout: 0.3), events: events,
                                       deliver: { frame, _ in program.record(frame) })
        switcher.setBackups(["cam2": BackupRule(backup: "cam1")])
        let hub = CameraHub(switcher: switcher, events: events, log: log, lossTimeoutSeconds: 0.3, makeIso: nil)
        let audio = ProgramAudio(source: .silence, events: events, log: log, deliver: { _ in })
        hub.routeAudio(.init(attach: { audio.attach(sourceAudio: $0, of: $1) }, detach: { audio.detach(sourceAudioOf: $0) },
                             remove: { audio.remove(sourceAudioOf: $0) }))
        let removable = RemovableDiscovery(colour: Self.colour, namer: { _ in CameraID("cam2") })
        hub.attach(patterns)
        hub.attach(removable)
        let origin = MonotonicClock.now()
        switcher.start(origin: origin)
        hub.start(origin: origin)
        audio.start(origin: origin)
        defer {
            audio.stop()
            hub.stop()
            switcher.stop()
        }
        let cam2 = CameraID("cam2")
        let done = Mutex(false)
        switcher.switchProgram(to: cam2) { _ in done.withLock { $0 = true } }
        #expect(waitUntil(seconds: 5) { done.withLock { $0 } && switcher.status.programSource == cam2 })
        // cam2 goes live on program (its frames), then is removed: the backup on that frame, no slate.
        let live = hub.camera(named: cam2)
        #expect(waitUntil(seconds: 5) { (live?.statistics.framesCaptured ?? 0) >= 3 && switcher.status.slate == nil })
        #expect(hub.remove(cam2, by: "test", reason: "closed"))
        #expect(waitUntil(seconds: 5) { switcher.status.programSource == CameraID("cam1") && program.last == .some(CameraID("cam1")) })
        let backup = events.all.filter { $0.kind == .backupTaken }
        #expect(backup.count == 1 && backup.first?.details["reason"] == "removed" && backup.first?.details["backup"] == "cam1", "\(backup)")
        #expect(!switcher.status.sources.contains(cam2))

        // Added and removed many times: no growth anywhere, one `camera_added` and one `camera_removed` each time.
        let slots = audio.set.count
        for round in 0..<40 {
            let camera = try removable.plug()
            #expect(hub.camera(named: cam2) === camera && audio.inputs.contains { $0.name == "cam2" }, "round \(round)")
            #expect(hub.remove(cam2, by: "test", reason: "round \(round)"))
        }
        #expect(audio.set.count == slots && audio.set.freeSlots == 1, "\(audio.set.count) slots, \(slots) before")
        #expect(hub.all.map(\.id) == [CameraID("cam1")] && switcher.status.sources == [CameraID("cam1")])
        #expect(audio.inputs.isEmpty && audio.settings.isEmpty)
        #expect(events.of(.cameraAdded, "cam2").count == 41 && events.of(.cameraRemoved, "cam2").count == 41)
        #expect(waitUntil(seconds: 5) { audio.meters.inputs["cam2"] == nil }, "no strip left for cam2")
    }

    static func heard(_ server: StudioServer, _ input: String) -> Bool {
        let peaks = server.audio.meters.inputs[input]?.peakDBFS ?? []
        return peaks.count == 2 && peaks.allSatisfy { abs($0 - SolidColourCamera.tonePeakDBFS) < 1.5 }
    }

    static func programPeak(_ server: StudioServer) -> Double { server.audio.meters.program.peakDBFS.max() ?? -200 }
}
