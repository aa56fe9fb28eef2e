import Foundation
import Testing
import Synchronization
import Capture
import StudioCore
import StudioSystem
import TestSupport

/// A namer like the server's, in memory: the same identity always gets the same `camN`.
final class MemoryNamer: Sendable {
    private let names = Mutex<[String: CameraID]>([:])
    let requests = Mutex<[CameraIdentity]>([])
    /// Pins a node name to a camera name (as the config can).
    let pins: [String: CameraID]

    init(pins: [String: CameraID] = [:]) { self.pins = pins }

    var namer: CameraNamer {
        { [self] identity in
            requests.withLock { $0.append(identity) }
            return names.withLock { names in
                if let known = names[identity.identity] { return known }
                let pinned = pins.first { identity.identity == "pipewire:\($0.key)" }?.value
                let id = pinned ?? CameraID("cam\(names.count + 1 + pins.count)")
                names[identity.identity] = id
                return id
            }
        }
    }
}

/// Records what a discovery reports.
final class DiscoveryLog: Sendable {
    enum Entry: Sendable, Equatable {
        case added(CameraID)
        case removed(CameraID)
    }
    let entries = Mutex<[Entry]>([])
    let cameras = Mutex<[CameraID: any Camera]>([:])
    let messages = Mutex<[String]>([])

    var onAdded: @Sendable (any Camera) -> Void {
        { [self] camera in
            entries.withLock { $0.append(.added(camera.id)) }
            cameras.withLock { $0[camera.id] = camera }
        }
    }
    var onRemoved: @Sendable (any Camera) -> Void {
        { [self] camera in
            entries.withLock { $0.append(.removed(camera.id)) }
            #expect(camera.state == .stopped, "onRemoved must get a stopped camera")
        }
    }
    var report: @Sendable (String) -> Void { { [self] line in messages.withLock { $0.append(line) } } }
    func camera(_ id: CameraID) -> PipeWireCamera? { cameras.withLock { $0[id] } as? PipeWireCamera }
}


private let program = CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30))

@Suite struct PipeWireFormatChoiceTests {
    typealias Offer = PipeWireVideoOffer

    @Test func prefers4x20AtTheSameSizeAndRate() {
        let offers = [
            Offer(spaFormat: PipeWireVideoFormats.spaFormat(for: .yuyv), name: "YUY2", sizes: .list([.init(width: 1280, height: 720)]), rates: .list([Rational(30)])),
            Offer(spaFormat: PipeWireVideoFormats.spaFormat(for: .nv12), name: "NV12", sizes: .list([.init(width: 1280, height: 720)]), rates: .list([Rational(30)])),
        ]
        #expect(PipeWireVideoFormats.choose(from: offers, wanted: program)?.pixelFormat == .nv12)
    }

    @Test func sizeAndRateClosestToTheProgramBeatFormatPreference() {
        let offers = [
            Offer(spaFormat: PipeWireVideoFormats.spaFormat(for: .nv12), name: "NV12",
                  sizes: .list([.init(width: 640, height: 480), .init(width: 320, height: 240)]), rates: .list([Rational(30), Rational(15)])),
            Offer(spaFormat: PipeWireVideoFormats.spaFormat(for: .yuyv), name: "YUY2",
                  sizes: .list([.init(width: 1280, height: 720), .init(width: 1920, height: 1080)]), rates: .list([Rational(24), Rational(60)])),
        ]
        let chosen = PipeWireVideoFormats.choose(from: offers, wanted: program)
        #expect(chosen == CameraFormat(pixelFormat: .yuyv, width: 1280, height: 720, frameRate: Rational(24)))
    }

    @Test func rangesClampToTheWantedFormat() {
        let offers = [Offer(spaFormat: PipeWireVideoFormats.spaFormat(for: .i420), name: "I420",
                            sizes: .range(default: .init(width: 320, height: 240), min: .init(width: 16, height: 16), max: .init(width: 1024, height: 768)),
                            rates: .range(default: Rational(15), min: Rational(1), max: Rational(25)))]
        #expect(PipeWireVideoFormats.choose(from: offers, wanted: program) == CameraFormat(pixelFormat: .i420, width: 1024, height: 720, frameRate: Rational(25)))
    }

    @Test func h264OnlyGivesNothing() {
        let offers = [Offer(spaFormat: 0, name: "H264", sizes: .list([.init(width: 1280, height: 720)]), rates: .list([Rational(30)]))]
        #expect(PipeWireVideoFormats.choose(from: offers, wanted: program) == nil)
        #expect(offers[0].modes == [CameraMode(format: "H264", width: 1280, height: 720, frameRates: [Rational(30)])])
    }

    @Test func mjpegOnlyIsAskedForAsMJPEGAndDecodedToI420() {
        let offers = [
            Offer(spaFormat: 0, name: "H264", sizes: .list([.init(width: 1280, height: 720)]), rates: .list([Rational(30)])),
            Offer(spaFormat: 0, name: "MJPG", sizes: .list([.init(width: 640, height: 480), .init(width: 1280, height: 720), .init(width: 1920, height: 1080)]),
                  rates: .list([Rational(30), Rational(60)])),
        ]
        let choice = PipeWireVideoFormats.select(from: offers, wanted: program)
        #expect(choice?.isMJPEG == true && choice?.wireName == "MJPG")
        #expect(choice?.format == CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30)))
        #expect(offers[1].modes.first == CameraMode(format: "MJPG", width: 640, height: 480, frameRates: [Rational(60), Rational(30)]))
    }

    /// A typical USB webcam: YUY2 up to 640x480, MJPEG at 720p. The picture first (the policy V4L2 cameras get too, `ModeRanking`): MJPEG at the program's size
    /// beats raw at a smaller one, which the switcher would scale up.
    @Test func mjpegAtTheProgramSizeBeatsRawAtASmallerSize() {
        let offers = [
            Offer(spaFormat: 0, name: "MJPG", sizes: .list([.init(width: 1280, height: 720)]), rates: .list([Rational(30)])),
            Offer(spaFormat: PipeWireVideoFormats.spaFormat(for: .yuyv), name: "YUY2", sizes: .list([.init(width: 640, height: 480)]), rates: .list([Rational(30)])),
        ]
        let choice = PipeWireVideoFormats.select(from: offers, wanted: program)
        #expect(choice?.isMJPEG == true && choice?.wireName == "MJPG")
        #expect(choice?.format == CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30)))
    }

    @Test func identityUsesNodeNameAndDeviceSerial() {
        #expect(PipeWireDiscovery.identity(ofNode: ["node.name": "v4l2_input.usb-cam"]) == "pipewire:v4l2_input.usb-cam")
        #expect(PipeWireDiscovery.identity(ofNode: ["node.name": "cam", "device.id": "40"], device: ["device.serial": "ABC"]) == "pipewire:cam#ABC")
    }
}

/// Everything that starts PipeWire daemons and producers, one test at a time (2 cores: several rigs at
/// once starve each other's audio).
@Suite(.serialized) enum PipeWireDaemonTests {}

/// Against a real private PipeWire daemon (deploy/pipewire-test.conf) and real producer processes.
extension PipeWireDaemonTests {
@Suite(.serialized) struct PipeWireRigTests {
    let rig: PipeWireRig

    init() throws {
        rig = try PipeWireRig()
        try rig.start()
    }

    private func startThreeCameras() throws {
        try rig.startCamera(node: "vcam-a", camera: "cam1", size: "640x480", rate: 30, format: "i420")
        try rig.startCamera(node: "vcam-b", camera: "cam2", size: "320x240", rate: 15, format: "nv12")
        try rig.startCamera(node: "vcam-c", camera: "cam3", size: "640x360", rate: 30, format: "yuy2")
    }

    @Test func enumeratesThreeCamerasWithTheirFormats() throws {
        try startThreeCameras()
        let namer = MemoryNamer(), log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: namer.namer, wanted: program, remote: rig.remote, report: log.report)
        discovery.start(onAdded: log.onAdded, onRemoved: log.onRemoved)
        defer { discovery.stop() }
        // Present cameras are reported before start returns.
        #expect(log.entries.withLock { $0 } == [.added("cam1"), .added("cam2"), .added("cam3")])
        let byNode = Dictionary(uniqueKeysWithValues: discovery.cameras.map { ($0.nodeName, $0) })
        let a = try #require(byNode["vcam-a"]), b = try #require(byNode["vcam-b"]), c = try #require(byNode["vcam-c"])
        #expect(a.offeredModes == [CameraMode(format: "I420", width: 640, height: 480, frameRates: [Rational(30)])])
        #expect(b.offeredModes == [CameraMode(format: "NV12", width: 320, height: 240, frameRates: [Rational(15)])])
        #expect(c.offeredModes == [CameraMode(format: "YUY2", width: 640, height: 360, frameRates: [Rational(30)])])
        #expect(c.requestedFormat == CameraFormat(pixelFormat: .yuyv, width: 640, height: 360, frameRate: Rational(30)))
        #expect(a.identity == "pipewire:vcam-a")
        #expect(a.backend == .pipewire)
        #expect(a.state == .stopped, "a discovery reports cameras not started")
        #expect(namer.requests.withLock { $0.map(\.backend) } == [.pipewire, .pipewire, .pipewire])
    }

    /// With the V4L2 backend on, PipeWire's views of /dev/video devices are left out (one webcam, one
    /// camera); without it they are PipeWire cameras like any other.
    @Test func v4l2BackedNodesAreLeftToTheV4L2BackendWhenAsked() throws {
        try rig.startCamera(node: "vcam-plain", camera: "cam1")
        try rig.startCamera(node: "vcam-usb", camera: "cam2", extraArguments: ["--object-path", "v4l2:/dev/video9"])
        let skipping = PipeWireDiscovery(namer: MemoryNamer().namer, wanted: program, remote: rig.remote, skipsV4L2Devices: true)
        skipping.start(onAdded: { _ in }, onRemoved: { _ in })
        let kept = skipping.cameras.map(\.nodeName)
        skipping.stop()
        let all = PipeWireDiscovery(namer: MemoryNamer().namer, wanted: program, remote: rig.remote)
        all.start(onAdded: { _ in }, onRemoved: { _ in })
        let everything = all.cameras.map(\.nodeName).sorted()
        all.stop()
        #expect(kept == ["vcam-plain"])
        #expect(everything == ["vcam-plain", "vcam-usb"])
        #expect(PipeWireDiscovery.isV4L2Device(node: ["api.v4l2.path": "/dev/video0"]))
        #expect(PipeWireDiscovery.isV4L2Device(node: ["node.name": "x"], device: ["device.api": "v4l2"]))
        #expect(!PipeWireDiscovery.isV4L2Device(node: ["device.api": "libcamera"]))
    }

    @Test func capturesFramesOfTheNegotiatedSizeFromEachCamera() throws {
        try startThreeCameras()
        let namer = MemoryNamer(), log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: namer.namer, wanted: program, remote: rig.remote, report: log.report)
        discovery.start(onAdded: log.onAdded, onRemoved: log.onRemoved)
        defer { discovery.stop() }
        let cameras = discovery.cameras
        try #require(cameras.count == 3)
        for camera in cameras { camera.start() }
        defer { for camera in cameras { camera.stop() } }
        #expect(waitUntil(seconds: 5) { cameras.allSatisfy { $0.state == .live } }, "\(cameras.map { "\($0.id): \($0.state) \($0.problem ?? "")" })")
        let before = cameras.map(\.statistics.framesCaptured)
        MonotonicClock.sleep(seconds: 1)
        let after = cameras.map(\.statistics.framesCaptured)
        let expected: [String: (PixelFormat, Int, Int, Double)] = [
            "vcam-a": (.i420, 640, 480, 30), "vcam-b": (.nv12, 320, 240, 15), "vcam-c": (.yuyv, 640, 360, 30),
        ]
        for (index, camera) in cameras.enumerated() {
            let (pixel, width, height, rate) = try #require(expected[camera.nodeName])
            #expect(camera.currentFormat == CameraFormat(pixelFormat: pixel, width: width, height: height, frameRate: Rational(Int32(rate))))
            let frame = try #require(camera.frames.latest().value)
            #expect(frame.format == pixel && frame.width == width && frame.height == height)
            // About one second of frames (a loaded machine may lose a few, never gain).
            let delivered = Double(after[index] - before[index])
            #expect(delivered >= rate * 0.6 && delivered <= rate * 1.3, "\(camera.nodeName): \(delivered) frames in 1 s at \(rate) fps")
            // The picture is that producer's: its ident colour (4:2:0 formats; the classifier reads those).
            if pixel != .yuyv {
                let producer: CameraID = camera.nodeName == "vcam-a" ? "cam1" : "cam2"
                #expect(TestPatternCamera.camera(in: frame, among: ["cam1", "cam2", "cam3"]) == producer)
            } else {
                // YUY2: the ident block of cam3 is blue: high U (Cb) in the left quarter.
                let row = frame.plane(0).assumingMemoryBound(to: UInt8.self) + (height / 2) * frame.planes[0].stride
                #expect(row[(width / 8) * 2 + 1] > 200, "cam3's blue ident block")
            }
        }
    }

    /// A node offering only MJPEG: asked for MJPEG, each JPEG decoded on the camera's thread to I420 at the
    /// node's size; every 4th frame is sent cut short and must be dropped and counted, not shown.
    @Test func anMJPEGOnlyCameraDeliversDecodedFramesAndCountsCorruptOnes() throws {
        try rig.startCamera(node: "vcam-mjpeg", camera: "cam2", size: "640x360", rate: 15, format: "mjpeg", extraArguments: ["--corrupt-every", "4"])
        let log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: MemoryNamer().namer, wanted: program, remote: rig.remote, report: log.report)
        let camera = try #require(PipeWireDiscoveryProbe.cameras(discovery, log).first)
        discovery.stop()
        #expect(camera.offeredModes == [CameraMode(format: "MJPG", width: 640, height: 360, frameRates: [Rational(15)])])
        #expect(camera.requestedWireFormat == "MJPG")
        #expect(camera.requestedFormat == CameraFormat(pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(15)))
        let started = MonotonicClock.now()
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 5) { camera.state == .live }, "\(camera.state) \(camera.problem ?? "")")
        #expect(waitUntil(seconds: 5) { camera.statistics.framesCaptured >= 12 && camera.statistics.framesCorrupt >= 3 }, "\(camera.statistics)")
        #expect(camera.currentFormat == CameraFormat(pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(15)))
        let frame = try #require(camera.frames.latest().value)
        #expect(frame.format == .i420 && frame.width == 640 && frame.height == 360)
        #expect(TestPatternCamera.camera(in: frame, among: ["cam1", "cam2", "cam3"]) == "cam2")
        // One in four sent is corrupt: those are counted, the good ones published (a frame replaced
        // before it was decoded is counted as dropped, not corrupt). The producer sends at most 15 a
        // second since the camera started, a quarter of them cut short; a loaded machine may lose some
        // of the others on the way, so the frames seen are no measure of the frames sent.
        let statistics = camera.statistics
        let sent = Double(statistics.framesCaptured + statistics.framesCorrupt + statistics.framesDropped)
        let ticks = Double(MonotonicClock.now() - started) / 1e9 * 15 + 2
        #expect(Double(statistics.framesCorrupt) <= ticks / 4 + 1, "\(statistics) in \(ticks) producer ticks at most")
        #expect(Double(statistics.framesCaptured) >= sent * 0.5, "\(statistics)")
        #expect(camera.state == .live)
    }

    @Test func aProducerKilledAndRestartedIsRemovedThenAddedWithTheSameName() throws {
        try startThreeCameras()
        let namer = MemoryNamer(), log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: namer.namer, wanted: program, remote: rig.remote, report: log.report)
        discovery.start(onAdded: log.onAdded, onRemoved: log.onRemoved)
        defer { discovery.stop() }
        let b = try #require(discovery.cameras.first { $0.nodeName == "vcam-b" })
        b.start()
        #expect(waitUntil(seconds: 5) { b.state == .live })
        rig.stopCamera(node: "vcam-b")
        #expect(waitUntil(seconds: 3) { log.entries.withLock { $0.last } == .removed(b.id) })
        #expect(b.state == .stopped)
        try rig.startCamera(node: "vcam-b", camera: "cam2", size: "320x240", rate: 15, format: "nv12")
        #expect(waitUntil(seconds: 3) { log.entries.withLock { $0.last } == .added(b.id) })
        let returned = try #require(log.camera(b.id))
        #expect(returned !== b && returned.identity == b.identity && returned.nodeName == "vcam-b")
        returned.start()
        defer { returned.stop() }
        #expect(waitUntil(seconds: 5) { returned.state == .live }, "\(returned.problem ?? "")")
        #expect(log.entries.withLock { $0 } == [.added("cam1"), .added("cam2"), .added("cam3"), .removed("cam2"), .added("cam2")])
    }

    @Test func aCameraWhoseNodeVanishesIsLostAndNeverShowsAnotherCamera() throws {
        try startThreeCameras()
        let namer = MemoryNamer(), log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: namer.namer, wanted: program, remote: rig.remote, report: log.report)
        // Not started: only the camera's own view of its node counts here.
        let a = try #require(PipeWireDiscoveryProbe.cameras(discovery, log).first { $0.nodeName == "vcam-a" })
        discovery.stop()
        a.start()
        defer { a.stop() }
        #expect(waitUntil(seconds: 5) { a.state == .live })
        rig.stopCamera(node: "vcam-a")
        // Within a frame interval or so (the daemon notices the client's socket closing first).
        #expect(waitUntil(seconds: 1) { a.state == .lost }, "\(a.state)")
        let frames = a.statistics.framesCaptured
        MonotonicClock.sleep(seconds: 0.5)
        #expect(a.statistics.framesCaptured == frames, "a lost camera delivers nothing")
        #expect(a.state == .lost)
    }

    @Test func microphoneDeliversTheTestToneAt48kHzStereo() throws {
        let chunks = Mutex<[AudioChunk]>([])
        let mic = PipeWireMicrophone(nodeName: "studio-test-mic", remote: rig.remote) { chunk in chunks.withLock { $0.append(chunk) } }
        let origin = MonotonicClock.now()
        mic.start(origin: origin)
        // Half a second of captured audio (a starved machine gets there later: no realtime priority here).
        #expect(waitUntil(seconds: 10) { mic.status.framesCaptured > 24_000 }, "\(mic.status); \(mic.diagnostics)")
        mic.stop()
        let all = chunks.withLock { $0 }
        // One gap-free timeline from sample 0, pts from the sample index.
        var next: Int64 = 0
        for chunk in all {
            #expect(chunk.firstSample == next && chunk.pts == MediaTime(count: next, rate: Rational(48_000)))
            #expect(chunk.format == .program)
            next += Int64(chunk.frameCount)
        }
        #expect(mic.status.node == nil || mic.status.node == "studio-test-mic")
        // What was captured is the tone: both channels equal, a 440 Hz sine (audiotestsrc's default),
        // measured over the sound only (the rest of the timeline is silence: before the link, dropouts).
        let samples = all.flatMap(\.samples)
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let right = stride(from: 1, to: samples.count, by: 2).map { samples[$0] }
        let tone = ToneAnalysis(samples: left)
        #expect(tone.level > 0.05, "tone level \(tone.level)")
        #expect(zip(left, right).allSatisfy { abs($0 - $1) < 1e-4 })
        #expect(abs(tone.frequency - 440) < 25, "tone at \(tone.frequency) Hz")
        #expect(tone.soundFraction * Double(left.count) > 24_000 * 0.6, "sound: \(tone.soundFraction * 100) % of \(left.count) samples")
    }

    @Test func aMicrophoneNodeThatGoesAndReturnsIsPickedUpAgain() throws {
        try rig.startBeeper(node: "vbeep")
        let mic = PipeWireMicrophone(nodeName: "vbeep", remote: rig.remote) { _ in }
        mic.start(origin: MonotonicClock.now())
        defer { mic.stop() }
        #expect(waitUntil(seconds: 3) { mic.status.connections == 1 && mic.status.framesCaptured > 4_800 }, "\(mic.status)")
        #expect(mic.status.node == "vbeep")
        rig.stopCamera(node: "vbeep")
        #expect(waitUntil(seconds: 2) { mic.status.node == nil })
        // What was captured before the loss still plays out of the jitter buffer (at most 0.25 s), then
        // only silence.
        let lostAt = mic.status.framesDelivered
        #expect(waitUntil(seconds: 20) { mic.status.framesDelivered > lostAt + 48_000 * 3 / 10 }, "\(mic.status)")
        let captured = mic.status.framesCaptured, timeline = mic.status.framesDelivered
        #expect(waitUntil(seconds: 20) { mic.status.framesDelivered - timeline > 48_000 / 4 }, "the clock goes on (silence)")
        #expect(mic.status.framesCaptured == captured, "nothing captured while the node is gone")
        try rig.startBeeper(node: "vbeep")
        #expect(waitUntil(seconds: 4) { mic.status.connections == 2 && mic.status.framesCaptured > captured + 4_800 }, "\(mic.status)")
        #expect(mic.status.node == "vbeep")
    }

    /// Without a node name the microphone follows the daemon's default.audio.source metadata (set here
    /// with pw-metadata, as a session manager would); without it, the rule (highest priority.session, then
    /// lowest id). A new default mid-show is followed with the timeline unbroken.
    @Test func theDefaultMicrophoneFollowsTheDefaultAudioSourceMetadata() throws {
        try rig.startBeeper(node: "vbeep")
        let chunks = Mutex<[AudioChunk]>([])
        let mic = PipeWireMicrophone(remote: rig.remote) { chunk in chunks.withLock { $0.append(chunk) } }
        mic.start(origin: MonotonicClock.now())
        defer { mic.stop() }
        // No metadata yet: the rule (no priority.session here: the lowest id, the daemon's own tone).
        #expect(waitUntil(seconds: 3) { mic.status.node == "studio-test-mic" && mic.status.framesCaptured > 4_800 }, "\(mic.status)")
        #expect(mic.status.defaultNode == nil)
        // The default becomes the beeper: the microphone moves to it.
        try rig.setDefaultMetadata("default.audio.source", to: #"{ "name": "vbeep" }"#)
        #expect(waitUntil(seconds: 3) { mic.status.node == "vbeep" && mic.status.connections == 2 }, "\(mic.status)")
        #expect(mic.status.defaultNode == "vbeep")
        let movedAt = chunks.withLock { $0.count }
        let movedAtSample = chunks.withLock { $0.last.map { $0.firstSample + Int64($0.frameCount) } ?? 0 }
        // 2.2 s of the timeline on the beeper: two beeps at least.
        #expect(waitUntil(seconds: 30) { mic.status.nextSample > movedAtSample + 48_000 * 22 / 10 }, "\(mic.status)")
        let backAt = chunks.withLock { $0.count }
        // And back; a default that is deleted, or names no node, leaves it where it is.
        try rig.setDefaultMetadata("default.audio.source", to: #"{ "name": "studio-test-mic" }"#)
        #expect(waitUntil(seconds: 3) { mic.status.node == "studio-test-mic" && mic.status.connections == 3 }, "\(mic.status)")
        try rig.setDefaultMetadata("default.audio.source", to: nil)
        #expect(waitUntil(seconds: 2) { mic.status.defaultNode == nil })
        try rig.setDefaultMetadata("default.audio.source", to: #"{ "name": "no-such-node" }"#)
        #expect(waitUntil(seconds: 2) { mic.status.defaultNode == "no-such-node" })
        MonotonicClock.sleep(seconds: 0.3)
        #expect(mic.status.node == "studio-test-mic" && mic.status.connections == 3, "\(mic.status)")
        mic.stop()

        let all = chunks.withLock { $0 }
        // One gap-free timeline across the moves.
        var next: Int64 = 0
        for chunk in all {
            #expect(chunk.firstSample == next)
            next += Int64(chunk.frameCount)
        }
        // While on the beeper the audio is its 1 kHz beep, not the 440 Hz tone.
        let samples = all[movedAt..<backAt].flatMap(\.samples)
        let beep = ToneAnalysis(samples: stride(from: 0, to: samples.count, by: 2).map { samples[$0] })
        #expect(beep.level > 0.05 && abs(beep.frequency - 1000) < 50, "level \(beep.level), \(beep.frequency) Hz")

        // A microphone started while the metadata names a node takes that one first.
        try rig.setDefaultMetadata("default.audio.source", to: #"{ "name": "vbeep" }"#)
        let second = PipeWireMicrophone(remote: rig.remote) { _ in }
        second.start(origin: MonotonicClock.now())
        defer { second.stop() }
        #expect(waitUntil(seconds: 3) { second.status.node == "vbeep" }, "\(second.status)")
        #expect(second.status.connections == 1 && second.status.defaultNode == "vbeep")
    }

    @Test func microphoneGoesSilentOnTheClockWhenItsNodeVanishesAndPicksItUpAgain() throws {
        let delivered = Mutex<Int64>(0)
        let messages = Mutex<[String]>([])
        let mic = PipeWireMicrophone(nodeName: "studio-test-mic", remote: rig.remote, retryInterval: 0.2,
                                     report: { line in messages.withLock { $0.append(line) } }) { chunk in
            delivered.withLock { $0 += Int64(chunk.frameCount) }
        }
        mic.start(origin: MonotonicClock.now())
        defer { mic.stop() }
        #expect(waitUntil(seconds: 3) { mic.status.connections == 1 && mic.status.framesCaptured > 4_800 })
        // The daemon (and with it the microphone) goes away: the clock goes on with silence.
        rig.killDaemon()
        #expect(waitUntil(seconds: 2) { mic.status.node == nil })
        // The jitter buffer plays out what was captured before (at most 0.25 s), then only silence.
        let lostAt = mic.status.framesDelivered
        #expect(waitUntil(seconds: 20) { mic.status.framesDelivered > lostAt + 48_000 * 3 / 10 }, "\(mic.status)")
        let captured = mic.status.framesCaptured, timeline = mic.status.framesDelivered
        #expect(waitUntil(seconds: 20) { mic.status.framesDelivered - timeline > 48_000 / 4 }, "silence keeps the timeline going")
        #expect(mic.status.framesCaptured == captured, "nothing captured without a daemon")
        try rig.start()
        #expect(waitUntil(seconds: 4) { mic.status.connections == 2 && mic.status.framesCaptured > captured + 4_800 }, "\(mic.status)")
        #expect(messages.withLock { $0 }.contains { $0.contains("went away") })
    }
}
}

/// Without a daemon: clear state, no hang, and the discovery connects when one appears.
extension PipeWireDaemonTests {
@Suite(.serialized) struct PipeWireNoDaemonTests {
    @Test func noDaemonSaysSoOnceAndPicksUpADaemonThatAppearsLater() throws {
        let rig = try PipeWireRig()
        let namer = MemoryNamer(), log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: namer.namer, wanted: program, remote: rig.remote, retryInterval: 0.3, report: log.report)
        let started = MonotonicClock.now()
        discovery.start(onAdded: log.onAdded, onRemoved: log.onRemoved)
        defer { discovery.stop() }
        #expect(MonotonicClock.now() - started < 2_000_000_000, "start must not hang without a daemon")
        #expect(!discovery.isConnected)
        #expect(discovery.cameras.isEmpty)
        MonotonicClock.sleep(seconds: 1)
        let messages = log.messages.withLock { $0 }
        #expect(messages.count == 1, "said once: \(messages)")
        #expect(messages.first?.contains(rig.remote) == true)
        // The daemon and a camera appear: picked up without a restart.
        try rig.start()
        try rig.startCamera(node: "vcam-late", camera: "cam4", size: "320x240", rate: 30)
        #expect(waitUntil(seconds: 4) { log.entries.withLock { $0 } == [.added("cam1")] })
        #expect(discovery.isConnected)
        // It goes away again: its cameras are removed.
        rig.killDaemon()
        #expect(waitUntil(seconds: 3) { log.entries.withLock { $0 } == [.added("cam1"), .removed("cam1")] })
        #expect(!discovery.isConnected)
    }

    /// On a manual clock: half a second of it delivers exactly half a second of silence, however busy
    /// the machine is.
    @Test func aMicrophoneWithoutDaemonDeliversSilenceOnTheClock() throws {
        let rig = try PipeWireRig()
        let chunks = Mutex<[AudioChunk]>([])
        let clock = ManualClock()
        let mic = PipeWireMicrophone(remote: rig.remote, clock: clock) { chunk in chunks.withLock { $0.append(chunk) } }
        mic.start(origin: clock.now())
        #expect(clock.waitForSleepers(1))
        #expect(clock.run(to: clock.now() + 500_000_000, step: 10_000_000))
        mic.stop()
        let all = chunks.withLock { $0 }
        let frames = all.reduce(0) { $0 + $1.frameCount }
        #expect(frames > 48_000 / 4 && frames < 48_000)
        #expect(all.allSatisfy { $0.samples.allSatisfy { $0 == 0 } })
        #expect(mic.status.node == nil && mic.status.framesCaptured == 0)
    }
}
}

/// Reads a discovery's first report without keeping its thread running.
enum PipeWireDiscoveryProbe {
    static func cameras(_ discovery: PipeWireDiscovery, _ log: DiscoveryLog) -> [PipeWireCamera] {
        discovery.start(onAdded: log.onAdded, onRemoved: log.onRemoved)
        return discovery.cameras
    }
}

/// The same rig with a session manager (WirePlumber on a private D-Bus bus). Under WirePlumber 0.4 a
/// stream without PW_STREAM_FLAG_DONT_RECONNECT was re-routed to another camera when its own vanished;
/// here a lost camera must stay lost and never deliver another camera's picture.
extension PipeWireDaemonTests {
@Suite(.serialized) struct PipeWireWirePlumberTests {
    @Test func aVanishedCameraStaysLostAndComesBackUnderItsNameWithWirePlumber() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try rig.startSessionManager()
        try rig.startCamera(node: "vcam-a", camera: "cam1", size: "320x240", rate: 30, format: "i420")
        try rig.startCamera(node: "vcam-b", camera: "cam2", size: "320x240", rate: 30, format: "i420")
        let namer = MemoryNamer(), log = DiscoveryLog()
        let discovery = PipeWireDiscovery(namer: namer.namer, wanted: program, remote: rig.remote, report: log.report)
        discovery.start(onAdded: log.onAdded, onRemoved: log.onRemoved)
        defer { discovery.stop() }
        let cameras = discovery.cameras
        try #require(cameras.count == 2)
        for camera in cameras { camera.start() }
        defer { for camera in cameras { camera.stop() } }
        #expect(waitUntil(seconds: 5) { cameras.allSatisfy { $0.state == .live } }, "\(cameras.map { "\($0.id): \($0.state) \($0.problem ?? "")" })")
        let a = try #require(cameras.first { $0.nodeName == "vcam-a" })
        let frame = try #require(a.frames.latest().value)
        #expect(TestPatternCamera.camera(in: frame, among: ["cam1", "cam2"]) == "cam1")

        // Watch every frame cam1's camera publishes from now on: none may show cam2.
        let foreign = Mutex(0)
        let watcher = NamedThread.start(name: "test.watch") {
            var version = a.frames.latest().version
            let end = MonotonicClock.now() + 2_000_000_000
            while MonotonicClock.now() < end {
                let next = a.frames.waitForNewer(than: version, timeoutSeconds: 0.1)
                if next.version > version, let frame = next.value,
                   TestPatternCamera.camera(in: frame, among: ["cam1", "cam2"]) != "cam1" { foreign.withLock { $0 += 1 } }
                version = next.version
            }
        }
        rig.stopCamera(node: "vcam-a")
        #expect(waitUntil(seconds: 3) { log.entries.withLock { $0.last } == .removed(a.id) })
        watcher.join()
        #expect(foreign.withLock { $0 } == 0, "cam1's camera delivered another camera's picture")
        #expect(a.state == .stopped)

        try rig.startCamera(node: "vcam-a", camera: "cam1", size: "320x240", rate: 30, format: "i420")
        #expect(waitUntil(seconds: 3) { log.entries.withLock { $0.last } == .added(a.id) })
        let returned = try #require(log.camera(a.id))
        returned.start()
        defer { returned.stop() }
        #expect(waitUntil(seconds: 5) { returned.state == .live }, "\(returned.problem ?? "")")
        let back = try #require(returned.frames.latest().value)
        #expect(TestPatternCamera.camera(in: back, among: ["cam1", "cam2"]) == "cam1")
        // The other camera went on undisturbed.
        let b = try #require(cameras.first { $0.nodeName == "vcam-b" })
        #expect(b.state == .live)
    }
}
}
