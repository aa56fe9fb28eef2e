import Foundation
import Testing
import Synchronization
import Capture
import Switcher
import Encoding
import TestSupport
import StudioCore
import StudioSystem
@testable import StudioServer
@testable import IsoRecording
#if canImport(Glibc)
import Glibc
#endif

/// Records every event.
final class HubEvents: EventSink {
    private let events = Mutex<[StudioEvent]>([])
    func emit(_ event: StudioEvent) { events.withLock { $0.append(event) } }
    var all: [StudioEvent] { events.withLock { $0 } }
    func of(_ kind: EventKind, _ camera: String) -> [StudioEvent] { all.filter { $0.kind == kind && $0.camera?.name == camera } }
}


/// The hub between discoveries and the switcher: hot-plug with real test-pattern cameras and a real
/// program switcher (no encoders or outputs).
@Suite(.serialized) struct CameraHubTests {
    static let small = CameraFormat(pixelFormat: .i420, width: 320, height: 180, frameRate: Rational(30))

    /// What the program thread showed last: the camera recognised by its ident colour, or nil for a slate.
    final class Program: Sendable {
        let shown = Mutex<[CameraID?]>([])
        let candidates: [CameraID]
        init(candidates: [CameraID]) { self.candidates = candidates }
        func record(_ frame: VideoFrame) {
            let camera = TestPatternCamera.camera(in: frame, among: candidates)
            shown.withLock { $0.append(camera) }
        }
        var last: CameraID?? { shown.withLock { $0.last } }
    }

    func makeRig(cameras: Int, makeSender: CameraHub.IsoFactory? = nil) throws
        -> (CameraHub, ProgramSwitcher, TestPatternDiscovery, HubEvents, Program, ServerLog) {
        let events = HubEvents()
        let log = ServerLog()
        let discovery = try TestPatternDiscovery(count: cameras, format: Self.small)
        let program = Program(candidates: discovery.cameras.map(\.id))
        let switcher = ProgramSwitcher(format: ProgramFormat(width: 320, height: 180, frameRate: Rational(30)),
                                       configuration: .init(lossTimeout: 0.3), events: events,
                                       deliver: { frame, _ in program.record(frame) })
        let hub = CameraHub(switcher: switcher, events: events, log: log, lossTimeoutSeconds: 0.3, makeIso: nil, makeSender: makeSender)
        return (hub, switcher, discovery, events, program, log)
    }

    @Test func unpluggedCameraShowsTheSlateAtOnceAndComesBackUnderItsName() throws {
        let (hub, switcher, discovery, events, program, log) = try makeRig(cameras: 2)
        defer { log.close() }
        hub.attach(discovery)
        #expect(hub.present.map(\.id.name) == ["cam1", "cam2"])
        #expect(events.of(.cameraAdded, "cam1").count == 1 && events.of(.cameraAdded, "cam2").count == 1)
        let origin = MonotonicClock.now()
        switcher.start(origin: origin)
        hub.start(origin: origin)
        defer {
            hub.stop()
            switcher.stop()
        }
        #expect(waitUntil(seconds: 3) { program.last == .some(CameraID("cam1")) }, "the first camera goes on program")

        // Unplugged: lost at once (reason removed), still listed, the program shows the slate within a
        // couple of frames (well inside the 300 ms silence timeout).
        let unplugged = MonotonicClock.now()
        discovery.simulateUnplug(CameraID("cam1"))
        #expect(hub.isLost(CameraID("cam1")) && hub.lostReason(CameraID("cam1")) == "removed")
        #expect(hub.all.map(\.id.name) == ["cam1", "cam2"] && hub.present.map(\.id.name) == ["cam2"])
        #expect(events.of(.cameraLost, "cam1").map { $0.details["reason"] } == ["removed"])
        #expect(waitUntil(seconds: 3) { switcher.status.slate == "CAMERA LOST cam1" })
        let slateAfter = Double(MonotonicClock.now() - unplugged) / 1e6
        #expect(slateAfter < 250, "slate after \(slateAfter) ms")
        // A lost camera can still be cut to (it shows the slate), and cutting away works.
        let cut = Mutex<Result<SwitchOutcome, SwitchError>?>(nil)
        switcher.switchProgram(to: CameraID("cam2")) { result in cut.withLock { $0 = result } }
        #expect(waitUntil(seconds: 3) { program.last == .some(CameraID("cam2")) })
        switcher.switchProgram(to: CameraID("cam1")) { result in cut.withLock { $0 = result } }
        #expect(waitUntil(seconds: 3) { switcher.status.slate == "CAMERA LOST cam1" })
        if case .failure(let error)? = cut.withLock({ $0 }) { Issue.record("cut to the lost camera failed: \(error)") }

        // Plugged back: same name, back on program by itself, one returned event, no second `added`.
        discovery.simulatePlug(CameraID("cam1"))
        #expect(waitUntil(seconds: 3) { program.last == .some(CameraID("cam1")) }, "the returning camera is shown again")
        #expect(!hub.isLost(CameraID("cam1")))
        #expect(events.of(.cameraReturned, "cam1").map { $0.details["reason"] } == ["reappeared"])
        #expect(events.of(.cameraAdded, "cam1").count == 1)
        // The silence watch did not report the removed camera a second time.
        #expect(events.of(.cameraLost, "cam1").count == 1)
    }

    @Test func silentCameraIsLostAndReturnsWhenFramesResume() throws {
        let (hub, switcher, discovery, events, _, log) = try makeRig(cameras: 2)
        defer { log.close() }
        hub.attach(discovery)
        let origin = MonotonicClock.now()
        switcher.start(origin: origin)
        hub.start(origin: origin)
        defer {
            hub.stop()
            switcher.stop()
        }
        // Both cameras deliver before one falls silent (a camera never heard from is not "silent").
        #expect(waitUntil { discovery.cameras.allSatisfy { $0.statistics.framesCaptured >= 3 } })
        discovery.cameras[1].pause()
        #expect(waitUntil(seconds: 3) { hub.lostReason(CameraID("cam2")) == "silent" })
        #expect(events.of(.cameraLost, "cam2").map { $0.details["reason"] } == ["silent"])
        #expect(!hub.isLost(CameraID("cam1")), "the other camera is unaffected")
        discovery.cameras[1].resume()
        #expect(waitUntil(seconds: 3) { !hub.isLost(CameraID("cam2")) })
        #expect(events.of(.cameraReturned, "cam2").map { $0.details["reason"] } == ["frames resumed"])
    }

    @Test func namesComeFromTheNamer() throws {
        let asked = Mutex<[String]>([])
        let discovery = try TestPatternDiscovery(count: 2, format: Self.small, namer: { identity in
            asked.withLock { $0.append(identity.identity) }
            return CameraID(identity.identity == "test-pattern:1" ? "wide" : "close")
        })
        #expect(discovery.cameras.map(\.id.name) == ["wide", "close"])
        #expect(asked.withLock { $0 } == ["test-pattern:1", "test-pattern:2"])
        #expect(discovery.cameras.map(\.identity) == ["test-pattern:1", "test-pattern:2"])
    }
}

/// An ISO recorder that follows a camera through unplug and replug: the returning device (a new camera
/// object, here at another size and pixel format) is recorded on the same timeline, its encoder reopened
/// at the new size, into the next file generation. Real x264, AAC, Matroska; checked with ffprobe.
@Suite(.serialized) struct IsoRebindTests {
    @Test func isoFollowsAReturningCameraAtItsNewSize() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-iso-rebind-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("session-1-cam1.mkv").path

        let events = HubEvents()
        let id = CameraID("cam1")
        let before = try TestPatternCamera(id: id, format: CameraFormat(pixelFormat: .i420, width: 320, height: 180, frameRate: Rational(30)),
                                           identity: "test-pattern:1")
        let after = try TestPatternCamera(id: id, format: CameraFormat(pixelFormat: .nv12, width: 256, height: 144, frameRate: Rational(30)),
                                          identity: "test-pattern:1")
        let iso = IsoRecorder(camera: before, path: path,
                              settings: .init(preset: "ultrafast", bitRate: 400_000, keyframeIntervalSeconds: 1,
                                              fallbackRate: Rational(30), staleAfterSeconds: 0.5),
                              events: events)
        let audio = AudioEncodingStage(encoder: try AACEncoder(format: .program, bitRate: 64_000), events: events,
                                       deliver: { iso.deliverAudio($0) })
        let tone = TestToneSource(deliver: { _ = audio.submit($0) })

        before.start()
        _ = before.frames.waitForNewer(than: 0, timeoutSeconds: 2)
        let origin = MonotonicClock.now()
        tone.start(origin: origin)
        iso.start(origin: origin)
        // 45 frames (1.5 s of the camera) into the first file, however long that takes here.
        #expect(waitUntil(seconds: 30) { iso.statistics.framesEncoded >= 45 })
        // Unplugged, then back as a new camera object under the same name.
        before.stop()
        after.start()
        iso.rebind(to: after)
        #expect(iso.camera === after)
        let rebound = iso.statistics.framesEncoded
        #expect(waitUntil(seconds: 30) { iso.statistics.framesEncoded >= rebound + 45 })
        iso.stopEncoding()
        tone.stop()
        audio.finish()
        iso.output.stop(timeoutSeconds: 5)
        after.stop()

        let first = try MediaProbe.probe(URL(fileURLWithPath: path))
        let second = try MediaProbe.probe(directory.appendingPathComponent("session-1-cam1-g1.mkv"))
        #expect(first.video?.width == 320 && first.video?.height == 180)
        #expect(second.video?.width == 256 && second.video?.height == 144)
        #expect(first.videoPackets.count > 30 && second.videoPackets.count > 30, "\(first.videoPackets.count) + \(second.videoPackets.count) frames")
        #expect(second.audio != nil, "the next file carries the program audio too")
        // One timeline: the second file continues where the first ended (within a few frames).
        let firstEnd = first.videoPackets.compactMap(\.ptsMilliseconds).max() ?? 0
        let secondStart = second.videoPackets.compactMap(\.ptsMilliseconds).min() ?? 0
        #expect(secondStart > firstEnd && secondStart - firstEnd < 300, "first ends \(firstEnd) ms, second starts \(secondStart) ms")
        #expect(iso.statistics.framesUnusable == 0 && iso.statistics.encodeErrors == 0)
        #expect(events.all.filter { $0.kind == .error }.isEmpty, "\(events.all.filter { $0.kind == .error })")
    }
}
