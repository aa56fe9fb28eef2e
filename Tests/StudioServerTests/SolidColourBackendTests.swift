import Foundation
import Synchronization
import Testing
import Capture
import Control
import FrameDrawing
import LivePictures
import StudioConfig
import StudioCore
import StudioServer
import StudioSystem
import TestSupport

/// Adding a source backend is one declaration: this file declares a backend (one camera giving frames
/// of a solid colour and a tone as its own sound), hands a real server the standard table plus it, and
/// sees the colour cut to program and the tone mixed as an input named like the camera; with
/// `audio.source: microphones`, its microphone of its own is found, named `mic1` and mixed like a
/// PipeWire one. Nothing else in the code knows this backend.
@Suite struct SolidColourBackendTests {
    @Test func aBackendDeclaredInOneFileIsNamedListedAndCutToProgram() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-solid-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (640, 360)
        options.configuration.http.enabled = false
        let colour = YUVColor(red: 230, green: 20, blue: 160)
        options.backends = SourceBackends.standard + [SolidColourBackend(colour: colour)]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }

        // Named like any device (after the test pattern's cam1, whose backend comes first in the table).
        let client = try ControlClient(socketPath: options.socketPath)
        let cameras = try client.request("cameras")["cameras"]?.arrayValue ?? []
        let solid = try #require(cameras.first { $0["backend"]?.stringValue == "solid" }, "\(cameras)")
        #expect(solid["name"]?.stringValue == "cam2" && solid["identity"]?.stringValue == "solid:1")
        #expect(solid["display_name"]?.stringValue == "Solid colour")

        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        // The program opens on cam1 (the test pattern): the colour is not there before the cut.
        let before = try #require(Self.programColour(tiles, until: { _ in true }))
        #expect(before.distance(to: colour) > 60, "program before the cut: \(before)")

        _ = try client.request("switch", arguments: ["source": .string("cam2")])
        let after = Self.programColour(tiles) { $0.distance(to: colour) < 30 }
        #expect(after.map { $0.distance(to: colour) < 30 } == true, "program after the cut: \(after.map { $0.description } ?? "no picture"), wanted \(colour)")

        // Its sound: an input named like the camera, found, mixed at the tone's level (a 0.1 sine
        // peaks at -20 dBFS), on its clock (the backend pushes on its own frame grid).
        var input: JSONValue?
        let heard = waitUntil(seconds: 20, every: 0.1) {
            input = (try? client.request("audio"))?["inputs"]?.arrayValue?.first { $0["name"] == "cam2" }
            let peaks = input?["levels"]?["peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            return peaks.count == 2 && peaks.allSatisfy { abs($0 - SolidColourCamera.tonePeakDBFS) < 1.5 }
        }
        #expect(heard, "the solid camera's tone in the mixer: \(input ?? .null)")
        #expect(input?["state"]?.stringValue != "lost" && input?["source"]?.stringValue == "solid tone", "\(input ?? .null)")
        let found = try client.request("log")["events"]?.arrayValue?.filter { $0["kind"] == "audio_input_found" } ?? []
        #expect(found.compactMap { $0["details"]?["input"]?.stringValue } == ["cam2"], "\(found)")
        // In the pipeline's graph (`topology`): the camera, and its sound an input it feeds, mixed with the others.
        let graph = try client.call(StatusSignatures.Topology.self, NoArguments()).value
        #expect(graph.nodes.first { $0.name == "cap.cam2" }?.what == "solid camera", "\(graph.nodes)")
        let edges = graph.edges.map { "\($0.from) -> \($0.to)" }
        #expect(edges.contains("cap.cam2 -> cam2") && edges.contains("cam2 -> cap.audio"), "\(edges)")
    }

    @Test func aBackendsOwnMicrophoneIsFoundNamedAndMixed() throws {
        let scratch = try ScratchStudio("solid-mic")
        defer { scratch.remove() }
        var options = scratch.options()
        options.configuration.audio.source = .microphones
        // Without PipeWire's discovery, so what this machine's desktop has does not count.
        options.backends = SourceBackends.standard.filter { $0.name != .pipewire } + [SolidColourBackend(colour: YUVColor(red: 0, green: 0, blue: 255))]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)

        // The one microphone found is the default one, so `microphones` starts it up: heard at the tone's -20 dBFS.
        var input: JSONValue?
        let heard = waitUntil(seconds: 20, every: 0.1) {
            input = (try? client.request("audio"))?["inputs"]?.arrayValue?.first { $0["name"] == "mic1" }
            let peaks = input?["levels"]?["peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            return peaks.count == 2 && peaks.allSatisfy { abs($0 + 20) < 1.5 }
        }
        #expect(heard, "the solid backend's microphone in the mixer: \(input ?? .null)")
        #expect(input?["source"]?.stringValue == "solid:desk" && input?["identity"]?.stringValue == "solid:mic:1" && input?["muted"] == false,
                "\(input ?? .null)")
        let found = try client.request("log")["events"]?.arrayValue?.filter { $0["kind"] == "audio_input_found" } ?? []
        // Said once, as for a PipeWire microphone (the camera's own sound, cam2, is its own input).
        #expect(found.filter { $0["details"]?["input"] == "mic1" }.compactMap { $0["details"]?["identity"]?.stringValue } == ["solid:mic:1"], "\(found)")
        #expect(try client.request("audio")["silence_reason"] == .null)
    }

    /// The average colour of the middle of the program tile, from the first picture `accept` takes
    /// (within 20 s); the last one seen (or nil) when none does.
    static func programColour(_ tiles: TilePictures, until accept: (YUVColor) -> Bool) -> YUVColor? {
        var sequence: UInt64 = 0
        var seen: YUVColor?
        let deadline = MonotonicClock.now() + 20_000_000_000
        while MonotonicClock.now() < deadline {
            guard let picture = tiles.waitForNewer("program", than: sequence, timeoutSeconds: 1) else { continue }
            sequence = picture.sequence
            guard let frame = try? picture.jpeg.withUnsafeBytes({ try MJPEGDecoder().decode($0) }) else { continue }
            seen = frame.averageColor(in: RelativeRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5))
            if let seen, accept(seen) { return seen }
        }
        return seen
    }
}

/// The backend: not selectable (always on in a server whose table has it), one camera with its tone.
struct SolidColourBackend: SourceBackend {
    let colour: YUVColor
    var name: BackendName { "solid" }
    var summary: String { "one camera of a solid colour" }
    var isSelectable: Bool { false }

    func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        let identity = CameraIdentity(backend: name, identity: "solid:1", displayName: "Solid colour")
        return SolidColourDiscovery(camera: SolidColourCamera(id: try context.namer(identity), identity: identity, colour: colour))
    }

    func makeMicrophoneDiscovery(log: @escaping @Sendable (String) -> Void) -> (any MicrophoneDiscovery)? { SolidMicrophones() }
}

/// One microphone of its own, the desk's, always there: a 1 kHz tone at -20 dBFS.
final class SolidMicrophones: MicrophoneDiscovery {
    static let desk = FoundMicrophone(identity: "solid:mic:1", displayName: "Desk", label: "solid:desk", node: "desk")
    var finder: String { "the solid backend" }
    var microphones: [FoundMicrophone] { [Self.desk] }
    var defaultIdentity: String? { Self.desk.identity }
    var unreachable: String? { nil }
    func watch(onFound: @escaping @Sendable (FoundMicrophone) -> Void, onLost: @escaping @Sendable (FoundMicrophone) -> Void) { onFound(Self.desk) }
    func stop() {}
    func microphone(named node: String?) -> FoundMicrophone { Self.desk }
    func makeInput(for microphone: FoundMicrophone, format: AudioFormat, report: @escaping @Sendable (String) -> Void) -> any ClockedAudioInput {
        ToneInput(.standard)
    }
}

/// Reports its one camera at start; it never goes away.
final class SolidColourDiscovery: CameraDiscovery {
    let camera: SolidColourCamera
    init(camera: SolidColourCamera) { self.camera = camera }
    func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) { onAdded(camera) }
    func stop() {}
}

/// 320x180 I420 frames of one colour at 30 fps, on its own thread (`cap.NAME`), paced by a frame grid.
final class SolidColourCamera: Camera {
    static let format = CameraFormat(pixelFormat: .i420, width: 320, height: 180, frameRate: Rational(30))
    let id: CameraID
    let backend: BackendName
    let identity: String
    let displayName: String
    let frames = LatestValue<VideoFrame>()
    let colour: YUVColor
    /// Its sound: a 1 kHz sine of amplitude 0.1, one frame's worth pushed at each frame.
    static let tonePeakDBFS = 20 * log10(0.1)
    let tone = TimedAudioInput("solid tone")
    var audio: (any ClockedAudioInput)? { tone }
    private let shared = Mutex((state: CameraState.stopped, statistics: CaptureStatistics()))
    private let worker = WorkerThread()

    init(id: CameraID, identity: CameraIdentity, colour: YUVColor) {
        self.id = id
        backend = identity.backend
        self.identity = identity.identity
        displayName = identity.displayName
        self.colour = colour
    }

    deinit { worker.requestStop() }

    var state: CameraState { shared.withLock { $0.state } }
    var currentFormat: CameraFormat? { state == .live ? Self.format : nil }
    var statistics: CaptureStatistics { shared.withLock { $0.statistics } }

    func start() {
        worker.start(name: "cap.\(id.name)", prepare: { shared.withLock { $0.state = .starting } }) { [self] in run() }
    }

    func stop() {
        worker.stop()
        shared.withLock { $0.state = .stopped }
    }

    private func run() {
        let clock = MonotonicClock()
        let grid = FrameGrid(origin: clock.now(), rate: Self.format.frameRate)
        var tick: Int64 = 0
        let rate = AudioFormat.program.sampleRate, channels = AudioFormat.program.channels
        let perFrame = rate / 30
        var samples = [Float](repeating: 0, count: perFrame * channels)
        var sampleIndex = 0
        tone.newStream()
        tone.connected("solid")
        while clock.sleep(until: grid.time(ofFrame: tick), unless: { worker.isStopRequested }) {
            let now = clock.now()
            let frame = VideoFrame.allocate(format: .i420, width: Self.format.width, height: Self.format.height,
                                            captureTime: now, sequence: UInt64(tick))
            _ = frame.fill(with: colour)
            shared.withLock {
                $0.statistics.framesCaptured += 1
                $0.statistics.lastFrameTime = now
                $0.state = .live
            }
            frames.publish(frame)
            // One frame's sound per frame, stamped like the frame: fixed-size chunks on the camera's clock.
            for index in 0..<perFrame {
                let value = Float(0.1 * sin(2 * Double.pi * 1000 * Double(sampleIndex + index) / Double(rate)))
                for channel in 0..<channels { samples[index * channels + channel] = value }
            }
            sampleIndex += perFrame
            tone.push(samples, capturedAt: now)
            tick = max(tick + 1, grid.frame(at: now) + 1)
        }
    }
}
