import CV4L2
import Foundation
import Synchronization
import Testing
@testable import Capture
import StudioCore
import StudioSystem
import TestSupport

/// The vivid virtual cameras, when this runs where they exist: inside the VM that
/// `scripts/vm/test-v4l2.sh` boots (`modprobe vivid n_devs=2 node_types=0x1,0x1 ...`). The host kernel
/// has no V4L2, so on the host these suites are skipped (not passed).
enum Vivid {
    static let nodes = V4L2Discovery.captureNodes().filter { $0.capabilities.driver == "vivid" }
    static var isLoaded: Bool { nodes.count >= 2 }
    static let skipReason: Comment = "needs two vivid /dev/video nodes: runs inside the VM (scripts/vm/test-v4l2.sh)"

    /// A log that keeps its lines, to check what the camera said.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var log: CaptureLog { { [self] line in lines.withLock { $0.append(line) } } }
    }
}

/// All suites that use the vivid devices, one at a time (they share two devices; `.serialized` applies
/// to the nested suites too).
@Suite(.serialized, .enabled(if: Vivid.isLoaded, Vivid.skipReason))
struct VividTests {}

extension VividTests {
@Suite struct Enumeration {
    @Test func bothCamerasAreListedWithFormatsSizesAndRates() throws {
        #expect(Vivid.nodes.count == 2)
        var identities = Set<String>()
        for (path, capabilities) in Vivid.nodes {
            #expect(capabilities.isVideoCapture)
            let device = try V4L2Device(path: path)
            let formats = try device.formats().map(\.fourcc)
            for wanted in [FourCC.yuyv, .nv12, .yu12, .uyvy, .rgb24] { #expect(formats.contains(wanted), "\(path) lacks \(wanted)") }
            #expect(formats.count > 20)
            let sizes = try device.frameSizes(of: .yuyv)
            #expect(sizes.contains(.discrete(width: 640, height: 360)))
            #expect(sizes.contains(.discrete(width: 1280, height: 720)))
            let rates = try device.frameRates(of: .yuyv, width: 640, height: 360)
            guard case .discrete(let list) = rates else { Issue.record("no discrete rates: \(rates)"); continue }
            #expect(list.contains(Rational(30)) && list.contains(Rational(5)))
            #expect(list.first!.doubleValue >= list.last!.doubleValue, "fastest first")
            identities.insert(V4L2Discovery.identity(path: path, capabilities: capabilities))
            let camera = try V4L2Camera(id: "camX", path: path, program: ProgramFormat(width: 640, height: 360, frameRate: Rational(30)))
            #expect(camera.offeredModes.contains { $0.format == "NV12" && $0.width == 640 && $0.height == 360 && $0.frameRates.contains(Rational(30)) })
            // The program's size and rate are offered, so that is what it picks (raw 4:2:0 first).
            #expect(camera.wantedMode == V4L2ModeChoice.Choice(fourcc: .yu12, width: 640, height: 360, frameRate: Rational(30)))
        }
        #expect(identities.count == 2, "each vivid instance has its own identity: \(identities)")
        #expect(identities.allSatisfy { $0.hasPrefix("v4l2:platform:vivid-00") })
    }

    @Test func discoveryNamesBothCamerasThroughTheNamer() throws {
        let asked = Mutex<[CameraIdentity]>([])
        let discovery = V4L2Discovery(namer: { identity in
            asked.withLock { list in
                if let index = list.firstIndex(of: identity) { return CameraID("cam\(index + 1)") }
                list.append(identity)
                return CameraID("cam\(list.count)")
            }
        })
        let added = Mutex<[any Camera]>([])
        discovery.start(onAdded: { camera in added.withLock { $0.append(camera) } }, onRemoved: { _ in })
        defer { discovery.stop() }
        let cameras = added.withLock { $0 }
        #expect(cameras.map(\.id).sorted() == ["cam1", "cam2"])
        #expect(cameras.allSatisfy { $0.backend == .v4l2 && $0.state == .stopped && !$0.offeredModes.isEmpty })
        #expect(asked.withLock { $0.allSatisfy { $0.backend == .v4l2 && $0.displayName == "vivid" } })
    }
}

}

extension VividTests {
@Suite struct Capturing {
    static let program = ProgramFormat(width: 640, height: 360, frameRate: Rational(30))

    @Test func capturesAtTheChosenSizeAndRateAndChangesModeWhileRunning() throws {
        let camera = try V4L2Camera(id: "cam1", path: Vivid.nodes[0].path, program: Self.program)
        // vivid starts at 5 fps: the rate must be set.
        let granted = try camera.setMode(CameraModeRequest(width: 640, height: 360, frameRate: Rational(30)))
        #expect(granted == CameraFormat(pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(30)))
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 5, every: 0.02) { camera.state == .live })
        let before = camera.statistics.framesCaptured
        MonotonicClock.sleep(seconds: 2)
        let counted = camera.statistics.framesCaptured - before
        // 60 frames are due in 2 s; the VM runs vivid in real time, so most must be there.
        #expect(counted >= 40 && counted <= 66, "\(counted) frames in 2 s at 30 fps")
        let frame = try #require(camera.frames.latest().value)
        #expect(frame.format == .i420 && frame.width == 640 && frame.height == 360)
        #expect(camera.currentFormat == granted)
        #expect(camera.statistics.framesCorrupt == 0)

        // Size and rate while running: the stream restarts with what the device grants.
        let bigger = try camera.setMode(CameraModeRequest(width: 1280, height: 720, frameRate: Rational(10)))
        #expect(bigger.width == 1280 && bigger.height == 720 && bigger.frameRate == Rational(10))
        let version = camera.frames.latest().version
        let next = camera.frames.waitForNewer(than: version, timeoutSeconds: 3).value
        #expect(next?.width == 1280 && next?.height == 720)
        // A rate the device does not offer at this size: the nearest it offers is granted and reported.
        let faster = try camera.setMode(CameraModeRequest(frameRate: Rational(60)))
        #expect(faster.width == 1280 && faster.frameRate == Rational(25, 2))
        #expect(camera.streamFormat?.frameRate == Rational(25, 2))
    }

    @Test(arguments: [FourCC.yuyv, .nv12, .yu12, .uyvy, .rgb24])
    func rawFormatsArriveWithTheirLayout(fourcc: FourCC) throws {
        let device = try V4L2Device(path: Vivid.nodes[1].path)
        _ = try device.setControl("test_pattern", to: "75% Colorbar")  // whatever an earlier test left
        let stream = try V4L2Stream(device: device, choice: V4L2ModeChoice.Choice(fourcc: fourcc, width: 640, height: 360, frameRate: Rational(30)))
        defer { stream.stop() }
        #expect(stream.format.fourcc == fourcc && stream.format.width == 640 && stream.format.height == 360)
        var descriptor = pollfd(fd: device.fd, events: Int16(POLLIN), revents: 0)
        var buffer: v4l2_buffer?
        for _ in 0..<20 {
            _ = poll(&descriptor, 1, 500)
            buffer = try device.dequeueBuffer()
            if buffer != nil { break }
        }
        let dequeued = try #require(buffer)
        let frame = try #require(stream.copyFrame(stream.bytes(of: dequeued), captureTime: 1, sequence: 0))
        #expect(frame.format == fourcc.publishedFormat && frame.width == 640 && frame.height == 360)
        // vivid's default pattern is 75% colour bars: the first bar is 75% white, the last 0% (black).
        let row = frame.plane(0) + 180 * frame.planes[0].stride
        func luma(at x: Int) -> Int {
            switch frame.format {
            case .i420, .nv12: Int(row.load(fromByteOffset: x, as: UInt8.self))
            case .yuyv: Int(row.load(fromByteOffset: x * 2, as: UInt8.self))
            case .uyvy: Int(row.load(fromByteOffset: x * 2 + 1, as: UInt8.self))
            default: Int(row.load(fromByteOffset: x * 3 + 1, as: UInt8.self))  // green of RGB
            }
        }
        #expect(luma(at: 20) > 150, "white bar of \(fourcc)")
        #expect(luma(at: 620) < 40, "black bar of \(fourcc)")
        try device.queueBuffer(Int(dequeued.index))
    }

    @Test func damagedBuffersAreDroppedAndCounted() throws {
        let camera = try V4L2Camera(id: "cam2", path: Vivid.nodes[1].path, program: Self.program)
        try camera.setMode(CameraModeRequest(frameRate: Rational(30)))
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 5, every: 0.02) { camera.statistics.framesCaptured > 5 })
        // vivid marks the next buffer with V4L2_BUF_FLAG_ERROR.
        try camera.setControl("inject_v4l2_buf_flag_error", to: "1")
        #expect(waitUntil(seconds: 3, every: 0.02) { camera.statistics.framesCorrupt == 1 })
        let captured = camera.statistics.framesCaptured
        #expect(waitUntil(seconds: 3, every: 0.02) { camera.statistics.framesCaptured > captured + 5 }, "capture goes on")
        #expect(camera.state == .live)
    }

    @Test func streamOnWithoutRoomOnTheBusFallsBackToALighterMode() throws {
        let lines = Vivid.Lines()
        let camera = try V4L2Camera(id: "cam1", path: Vivid.nodes[0].path, program: ProgramFormat(width: 1280, height: 720, frameRate: Rational(10)), log: lines.log)
        #expect(camera.wantedMode.width == 1280)
        // As a USB 2 bus full of cameras answers: STREAMON fails with ENOSPC (vivid has no MJPEG, so a smaller size).
        camera.injectStreamOnFailures(errno: ENOSPC, count: 1)
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 5, every: 0.02) { camera.state == .live })
        let format = try #require(camera.currentFormat)
        #expect(format.width * format.height < 1280 * 720)
        #expect(lines.all.contains { $0.contains("No space left on device") })
        #expect(lines.all.contains { $0.contains("instead of") })
    }
}

}

extension VividTests {
@Suite struct Controls {
    @Test func listsControlsWithRangesMenusAndValues() throws {
        let camera = try V4L2Camera(id: "cam1", path: Vivid.nodes[0].path)
        let controls = try camera.controls()
        let brightness = try #require(controls.first { $0.name == "brightness" })
        #expect(brightness.kind == .integer && brightness.minimum == 0 && brightness.maximum == 255 && brightness.value != nil)
        let pattern = try #require(controls.first { $0.name == "test_pattern" })
        #expect(pattern.kind == .menu && pattern.menu.first?.name == "75% Colorbar" && pattern.menu.count == 22)
        let menu = try #require(controls.first { $0.name == "menu" })
        #expect(menu.menu.map(\.index) == [1, 3, 4], "menus with holes keep their indices")
        #expect(controls.first { $0.name == "integer_menu" }?.menu.contains { $0.name == "42" } == true)
        #expect(controls.first { $0.name == "gain" }?.isInactive == true)
        #expect(controls.first { $0.name == "read_only_integer_32_bits" }?.isReadOnly == true)
        #expect(controls.first { $0.name == "disconnect" }?.kind == .button)
        #expect(!controls.contains { $0.name == "area" }, "compound controls are left out")
    }

    @Test func setsAndReadsBackControls() throws {
        let camera = try V4L2Camera(id: "cam1", path: Vivid.nodes[0].path)
        let brightness = try camera.setControl("brightness", to: "200")
        #expect(brightness.value == 200)
        #expect(try camera.controls().first { $0.name == "brightness" }?.value == 200)
        let pattern = try camera.setControl("test_pattern", to: "100% Red")
        #expect(pattern.value == 7 && pattern.valueText == "100% Red")
        #expect(try camera.setControl("test_pattern", to: "0").valueText == "75% Colorbar")
        #expect(try camera.setControl("horizontal_flip", to: "on").value == 1)
        #expect(try camera.setControl("horizontal_flip", to: "false").value == 0)
        #expect(try camera.setControl("integer_64_bits", to: "-9000000000").value == -9_000_000_000)
        try camera.setControl("brightness", to: "128")
    }

    @Test func badControlRequestsGetClearErrors() throws {
        let camera = try V4L2Camera(id: "cam1", path: Vivid.nodes[0].path)
        func message(_ name: String, _ value: String) -> String {
            do {
                try camera.setControl(name, to: value)
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(message("focus_absolute", "10").contains("unknown control 'focus_absolute'"))
        #expect(message("brightness", "999").contains("out of range for 'brightness': 0...255"))
        #expect(message("brightness", "bright").contains("takes a whole number"))
        #expect(message("horizontal_flip", "maybe").contains("is a boolean"))
        #expect(message("test_pattern", "Plaid").contains("not in the menu"))
        #expect(message("menu", "2").contains("not in the menu"))
        #expect(message("read_only_integer_32_bits", "1").contains("read-only"))
        #expect(message("gain", "50").contains("inactive"))
        #expect(message("brightness", "999").hasPrefix("cam1: "))
        // Nothing changed by the refused requests.
        #expect(try camera.controls().first { $0.name == "brightness" }?.value == 128)
    }

    /// vivid has no region of interest, no autofocus and no exposure menu (its camera-like controls are
    /// gain and automatic gain): focusing on a point answers `none`, says so, and changes nothing.
    @Test func focusOnAPointSaysTheDeviceHasNoFocusControls() throws {
        let camera = try V4L2Camera(id: "cam1", path: Vivid.nodes[0].path)
        let before = try camera.controls()
        #expect(!before.contains { $0.name.hasPrefix("focus") || $0.name.hasPrefix("auto_exposure") || $0.name.contains("region_of_interest") },
                "vivid gained focus controls: test the roi/autofocus path here (\(before.map(\.name)))")
        let outcome = try camera.focus(at: FocusPoint(x: 0.25, y: 0.75)!)
        #expect(outcome.method == .none && outcome.exposure == nil && outcome.region == nil)
        #expect(outcome.reason == "the device has no region-of-interest, autofocus or automatic exposure control")
        // (Inactive and read-only controls left out: vivid's gain follows the clock while automatic gain is on.)
        func settable(_ controls: [CameraControl]) -> [String: Int64?] {
            Dictionary(controls.filter { !$0.isReadOnly && !$0.isInactive }.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        }
        #expect(settable(try camera.controls()) == settable(before), "nothing was set")
    }
}

}

extension VividTests {
@Suite struct HotPlug {
    /// A namer that remembers identities, as the server's does in SQLite.
    final class Namer: Sendable {
        private let known = Mutex<[String]>([])
        var namer: CameraNamer {
            { [self] identity in
                known.withLock { list in
                    if let index = list.firstIndex(of: identity.identity) { return CameraID("cam\(index + 1)") }
                    list.append(identity.identity)
                    return CameraID("cam\(list.count)")
                }
            }
        }
    }

    final class Events: Sendable {
        let added = Mutex<[any Camera]>([])
        let removed = Mutex<[any Camera]>([])
        func addedCount(_ id: CameraID) -> Int { added.withLock { $0.filter { $0.id == id }.count } }
        func removedCount(_ id: CameraID) -> Int { removed.withLock { $0.filter { $0.id == id }.count } }
        func newest(_ id: CameraID) -> (any Camera)? { added.withLock { $0.last { $0.id == id } } }
    }

    @Test func disconnectAndUnbindRemoveCamerasAndTheyComeBackUnderTheirNames() throws {
        let events = Events()
        let lines = Vivid.Lines()
        let discovery = V4L2Discovery(namer: Namer().namer, program: ProgramFormat(width: 640, height: 360, frameRate: Rational(30)), log: lines.log)
        discovery.start(onAdded: { camera in
            events.added.withLock { $0.append(camera) }
            camera.start()   // as the server does
        }, onRemoved: { camera in events.removed.withLock { $0.append(camera) } })
        defer {
            discovery.stop()
            for camera in events.added.withLock({ $0 }) { camera.stop() }
        }
        #expect(events.addedCount("cam1") == 1 && events.addedCount("cam2") == 1)
        let cam1 = try #require(events.newest("cam1") as? V4L2Camera)
        #expect(waitUntil(seconds: 5, every: 0.02) { cam1.state == .live })

        // 1. vivid's disconnect control: the streaming device fails (ENODEV) while its node stays.
        #expect(try VividRig.run(["v4l2-ctl", "-d", cam1.path, "-c", "disconnect=1"]) == 0)
        #expect(waitUntil(seconds: 5, every: 0.02) { events.removedCount("cam1") == 1 }, "cam1 reported removed")
        #expect(cam1.state == .lost)
        #expect(cam1.lossReason?.contains("QUERYCAP") == true, "\(cam1.lossReason ?? "nil")")
        // Once closed, vivid connects the device again: it comes back as cam1, a new object, and captures.
        #expect(waitUntil(seconds: 5, every: 0.02) { events.addedCount("cam1") == 2 }, "cam1 returned")
        let cam1Again = try #require(events.newest("cam1") as? V4L2Camera)
        #expect(cam1Again !== cam1 && cam1Again.identity == cam1.identity)
        #expect(waitUntil(seconds: 5, every: 0.02) { cam1Again.state == .live && cam1Again.statistics.framesCaptured > 3 })
        #expect(events.removedCount("cam2") == 0, "cam2 untouched")

        // 2. Unbinding the driver removes every vivid node at once (a USB unplug of both); bind brings them back.
        try VividRig.unbind()
        #expect(waitUntil(seconds: 5, every: 0.02) { events.removedCount("cam1") == 2 && events.removedCount("cam2") == 1 })
        #expect(V4L2Discovery.captureNodes().isEmpty)
        try VividRig.bind()
        #expect(waitUntil(seconds: 6, every: 0.02) { events.addedCount("cam1") == 3 && events.addedCount("cam2") == 2 })
        let cam2Back = try #require(events.newest("cam2") as? V4L2Camera)
        #expect(waitUntil(seconds: 5, every: 0.02) { cam2Back.state == .live && cam2Back.statistics.framesCaptured > 3 })
        #expect(discovery.cameras.map(\.id) == ["cam1", "cam2"])
        #expect(lines.all.contains { $0.contains("cam1: capture ended") })
    }
}
}

/// Inside the VM the vivid suites must run, not skip: `scripts/vm/test-v4l2.sh` sets STUDIO_REQUIRE_VIVID.
@Suite struct VividPresenceTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["STUDIO_REQUIRE_VIVID"] == "1"))
    func vividIsLoadedWhereItIsRequired() {
        #expect(Vivid.isLoaded, "STUDIO_REQUIRE_VIVID=1 but no vivid capture nodes: \(V4L2Discovery.captureNodes().map(\.path))")
    }
}
