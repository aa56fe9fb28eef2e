import Testing
import Synchronization
import Capture
import FrameDrawing
import StudioCore
import StudioSystem
import Switcher
import TestSupport

// MARK: Helpers

/// Records every event.
/// What the program showed in one delivered frame (judged in the deliver callback, so no frame is kept).
private struct Delivery: Sendable {
    var pts: MediaTime
    var camera: CameraID?
    var isSlate: Bool
    var format: PixelFormat
    var width: Int
    var height: Int
    /// Identity of the storage; only meaningful while the test keeps that storage alive (freed objects'
    /// identifiers are reused).
    var storage: ObjectIdentifier
    var sequence: UInt64
    var captureTime: UInt64
    var deliveredAt: UInt64
}

private final class DeliveryLog: Sendable {
    let candidates: [CameraID]
    /// The switcher's clock (deliveries are stamped on it).
    let clock: any Clock
    private let entries = Mutex<[Delivery]>([])
    private let onDelivery: (@Sendable (Int, VideoFrame) -> Void)?

    init(candidates: [CameraID], clock: any Clock = .monotonic, onDelivery: (@Sendable (Int, VideoFrame) -> Void)? = nil) {
        self.candidates = candidates
        self.clock = clock
        self.onDelivery = onDelivery
    }

    var all: [Delivery] { entries.withLock { $0 } }

    func record(_ frame: VideoFrame, _ pts: MediaTime) {
        let entry = Delivery(pts: pts, camera: TestPatternCamera.camera(in: frame, among: candidates), isSlate: isSlate(frame),
                             format: frame.format, width: frame.width, height: frame.height,
                             storage: ObjectIdentifier(frame.storage), sequence: frame.sequence, captureTime: frame.captureTime,
                             deliveredAt: clock.now())
        let index = entries.withLock { $0.append(entry); return $0.count - 1 }
        onDelivery?(index, frame)
    }

    /// Waits until `condition` holds for the log, up to `timeout` seconds (real time: generous, it only
    /// bounds a test that fails).
    func wait(timeout: Double = 20, until condition: ([Delivery]) -> Bool) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        while MonotonicClock.now() < deadline {
            if condition(all) { return true }
            MonotonicClock.sleep(seconds: 0.01)
        }
        return condition(all)
    }
}

/// A slate: its plain top band has the documented slate grey (cameras show their ident block and bars there).
private func isSlate(_ frame: VideoFrame) -> Bool {
    guard let color = frame.averageColor(in: ProgramSwitcher.slateBackgroundRegion) else { return false }
    return color.distance(to: ProgramSwitcher.slateColor) < 12
}

private let small = ProgramFormat(width: 320, height: 180, frameRate: Rational(30))

private func camera(_ id: CameraID, _ pixelFormat: PixelFormat = .i420, width: Int = 320, height: Int = 180, rate: Int32 = 30,
                    clock: any Clock = .monotonic) throws -> TestPatternCamera {
    try TestPatternCamera(id: id, format: CameraFormat(pixelFormat: pixelFormat, width: width, height: height, frameRate: Rational(rate)),
                          clock: clock)
}

/// Lets `seconds` of manual time pass in 5 ms steps, the `sleepers` threads on `clock` (camera and
/// program clock) doing what is due after each step, as they would in real time without the load.
private func play(_ clock: ManualClock, seconds: Double, sleepers: Int = 2) {
    #expect(clock.waitForSleepers(sleepers), "the threads on the clock never slept")
    #expect(clock.run(to: clock.now() + UInt64(seconds * 1e9), step: 5_000_000, sleepers: sleepers), "a thread did not keep up")
}

/// Lets manual time pass in 5 ms steps until `condition` holds (at most `limit` seconds of it).
private func play(_ clock: ManualClock, sleepers: Int = 2, limit: Double = 10, until condition: () -> Bool) -> Bool {
    let end = clock.now() + UInt64(limit * 1e9)
    guard clock.waitForSleepers(sleepers) else { return false }
    while !condition() {
        guard clock.now() < end, clock.run(to: clock.now() + 5_000_000, step: 5_000_000, sleepers: sleepers) else { return condition() }
    }
    return true
}

/// Frame number of a pts on the grid of `rate` (nil if the pts is off the grid).
private func frameNumber(of pts: MediaTime, rate: Rational) -> Int64? {
    let n = (pts.microseconds * Int64(rate.numerator) + Int64(rate.denominator) * 500_000) / (Int64(rate.denominator) * 1_000_000)
    return MediaTime(count: n, rate: rate) == pts ? n : nil
}

/// Waits for a value set from another thread.
private final class Box<Value: Sendable>: Sendable {
    private let slot = LatestValue<Value>()
    func set(_ value: Value) { slot.publish(value) }
    func wait(timeout: Double = 20) -> Value? { slot.waitForNewer(than: 0, timeoutSeconds: timeout).value }
}

// MARK: Tests

@Suite(.serialized) struct ProgramSwitcherTests {
    @Test func deliversAtTheProgramRateWithPtsOnTheGrid() throws {
        let clock = ManualClock()
        let cam = try camera("cam1", clock: clock)
        cam.start()
        defer { cam.stop() }
        let log = DeliveryLog(candidates: ["cam1"], clock: clock)
        let switcher = ProgramSwitcher(format: small, clock: clock, events: DiscardingEventSink()) { log.record($0, $1) }
        switcher.addSource("cam1", frames: cam.frames)
        _ = cam.frames.waitForNewer(than: 0, timeoutSeconds: 20)
        let origin = clock.now()
        switcher.start(origin: origin)
        #expect(switcher.origin == origin)
        play(clock, seconds: 1.2)
        let status = switcher.status
        switcher.stop()
        let elapsed = Double(clock.now() - origin) / 1e9

        let deliveries = log.all
        let numbers = deliveries.compactMap { frameNumber(of: $0.pts, rate: small.frameRate) }
        #expect(numbers.count == deliveries.count, "a pts off the 30 fps grid")
        #expect(numbers.first == 0)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 })
        // Every tick was delivered or counted as late (load only moves frames from one column to the other).
        let last = try #require(numbers.last)
        #expect(Int64(deliveries.count) + switcher.status.lateTicks == last + 1)
        // It kept producing: a handful of frames at least, and no tick beyond the time that passed.
        #expect(deliveries.count >= 5, "\(deliveries.count) frames in \(elapsed) s")
        #expect(Double(last) <= elapsed * 30 + 0.001, "frame \(last) is not due before \(elapsed) s")
        // Each frame is delivered no earlier than its tick.
        for (delivery, n) in zip(deliveries, numbers) {
            #expect(delivery.deliveredAt >= origin + UInt64(n) * 1_000_000_000 / 30)
        }
        #expect(status.deliveredFPS > 0, "the rate meter measured deliveries")
        #expect(status.isRunning && !switcher.status.isRunning)
        #expect(switcher.status.framesDelivered == Int64(deliveries.count))
        #expect(switcher.status.frameNumber == last)
        #expect(deliveries.allSatisfy { $0.camera == "cam1" && !$0.isSlate && $0.format == .i420 && $0.width == 320 })
        #expect(switcher.status.programSource == "cam1")
    }

    @Test func slowerCameraFramesAreRepeatedNotQueued() throws {
        let clock = ManualClock()
        let cam = try camera("cam1", rate: 10, clock: clock)
        cam.start()
        defer { cam.stop() }
        let log = DeliveryLog(candidates: ["cam1"], clock: clock)
        let switcher = ProgramSwitcher(format: small, clock: clock, events: DiscardingEventSink()) { log.record($0, $1) }
        switcher.addSource("cam1", frames: cam.frames)
        _ = cam.frames.waitForNewer(than: 0, timeoutSeconds: 20)
        switcher.start()
        play(clock, seconds: 1.0)
        switcher.stop()
        let deliveries = log.all
        // Passed-through frames keep the camera's sequence numbers.
        let distinct = Set(deliveries.map(\.sequence)).count
        // 30 program frames a second from a 10 fps camera: camera frames are shown several times each
        // (repeated), always the newest one (the sequence never goes back), never more distinct frames
        // than the camera made. No bound depends on how loaded the machine is.
        #expect(deliveries.count >= 10)
        #expect(distinct < deliveries.count, "\(distinct) distinct frames in \(deliveries.count): nothing was repeated")
        #expect(distinct <= Int(cam.statistics.framesCaptured))
        #expect(zip(deliveries, deliveries.dropFirst()).allSatisfy { $0.sequence <= $1.sequence })
        #expect(deliveries.allSatisfy { $0.camera == "cam1" && !$0.isSlate })
    }

    @Test func cutShowsTheNewCameraOnTheNextFrameWithTheReportedPts() throws {
        let cam1 = try camera("cam1"), cam2 = try camera("cam2")
        cam1.start()
        cam2.start()
        defer {
            cam1.stop()
            cam2.stop()
        }
        _ = cam1.frames.waitForNewer(than: 0, timeoutSeconds: 2)
        _ = cam2.frames.waitForNewer(than: 0, timeoutSeconds: 2)
        let events = RecordedEvents()
        let outcome = Box<Result<SwitchOutcome, SwitchError>>()
        let cutRequestedDuring = Box<Int>()
        let switcherSlot = Mutex<ProgramSwitcher?>(nil)
        // The cut is requested from inside the delivery of frame index 10, so "the very next frame" is exact.
        let log = DeliveryLog(candidates: ["cam1", "cam2"]) { index, _ in
            guard index == 10, let switcher = switcherSlot.withLock({ $0 }) else { return }
            cutRequestedDuring.set(index)
            switcher.switchProgram(to: "cam2") { outcome.set($0) }
        }
        let switcher = ProgramSwitcher(format: small, events: events) { log.record($0, $1) }
        switcherSlot.withLock { $0 = switcher }
        switcher.addSource("cam1", frames: cam1.frames)
        switcher.addSource("cam2", frames: cam2.frames)
        switcher.start()
        let result = try #require(outcome.wait(), "the cut never completed")
        #expect(log.wait { $0.count >= 16 })
        switcher.stop()
        switcherSlot.withLock { $0 = nil }

        let cut = try result.get()
        let deliveries = log.all
        #expect(cutRequestedDuring.wait() == 10)
        #expect(cut.camera == "cam2" && cut.previous == .camera("cam1"))
        #expect(cut.programTime == MediaTime(count: cut.frameNumber, rate: small.frameRate))
        let firstCam2 = try #require(deliveries.firstIndex { $0.camera == "cam2" })
        #expect(firstCam2 == 11, "cam2 first shown in delivery \(firstCam2)")
        #expect(deliveries[firstCam2].pts == cut.programTime)
        #expect(deliveries[..<firstCam2].allSatisfy { $0.camera == "cam1" })
        #expect(deliveries[firstCam2...].allSatisfy { $0.camera == "cam2" })

        let switches = events.all.filter { $0.kind == .switchProgram }
        #expect(switches.count == 2)  // cam1 chosen as first source, then the cut
        #expect(switches.first?.camera == "cam1" && switches.first?.programTime == .zero)
        let event = try #require(switches.last)
        #expect(event.camera == "cam2")
        #expect(event.programTime == cut.programTime)
        #expect(event.details["from"] == "cam1")
        #expect(switcher.status.programSource == "cam2")
    }

    @Test func unknownCameraFailsAndListsTheAvailableOnes() throws {
        let events = RecordedEvents()
        let switcher = ProgramSwitcher(format: small, events: events) { _, _ in }
        switcher.addSource("cam2", frames: LatestValue())
        switcher.addSource("cam10", frames: LatestValue())
        switcher.addSource("cam1", frames: LatestValue())
        let result = Box<Result<SwitchOutcome, SwitchError>>()
        switcher.switchProgram(to: "cam9") { result.set($0) }
        let answer = try #require(result.wait(timeout: 0.1), "unknown camera must fail at once")
        #expect(throws: SwitchError.unknownCamera("cam9", available: ["cam1", "cam2", "cam10"])) { try answer.get() }
        if case let .failure(error) = answer {
            #expect(error.description.contains("cam9"))
            #expect(error.description.contains("cam1, cam2, cam10"))
        }
        #expect(events.all.isEmpty)
    }

    @Test func cutsPendingAtStopFail() throws {
        let switcher = ProgramSwitcher(format: small, events: DiscardingEventSink()) { _, _ in }
        switcher.addSource("cam1", frames: LatestValue())
        let result = Box<Result<SwitchOutcome, SwitchError>>()
        switcher.switchProgram(to: "cam1") { result.set($0) }
        switcher.stop()
        let answer = try #require(result.wait(timeout: 0.1))
        #expect(throws: SwitchError.stopped("cam1")) { try answer.get() }
    }

    @Test func lostCameraShowsASlateWithinTheTimeoutAndComesBack() throws {
        let clock = ManualClock()
        let cam = try camera("cam1", clock: clock)
        cam.start()
        defer { cam.stop() }
        _ = cam.frames.waitForNewer(than: 0, timeoutSeconds: 20)
        let events = RecordedEvents()
        let log = DeliveryLog(candidates: ["cam1"], clock: clock)
        let timeout = 0.2
        let switcher = ProgramSwitcher(format: small, configuration: .init(lossTimeout: timeout, emitsLossEvents: true), clock: clock,
                                       events: events) { log.record($0, $1) }
        switcher.addSource("cam1", frames: cam.frames)
        switcher.start()
        #expect(play(clock) { log.all.count >= 5 })
        let pausedAt = clock.now()
        cam.pause()
        #expect(play(clock) { log.all.last?.isSlate == true }, "no slate after the camera stopped")
        #expect(switcher.status.slate == "CAMERA LOST cam1")
        let lostStatus = switcher.status
        play(clock, seconds: 0.2)
        cam.resume()
        #expect(play(clock) { log.all.last?.camera == "cam1" }, "the camera did not come back on program")
        play(clock, seconds: 0.1)
        switcher.stop()

        let deliveries = log.all
        let firstSlate = try #require(deliveries.firstIndex { $0.isSlate })
        let slateDelay = Double(deliveries[firstSlate].deliveredAt - pausedAt) / 1e9
        // Not before the timeout (the last frame is at most one camera frame older than the pause) and
        // soon after it.
        #expect(slateDelay >= timeout - 0.04, "slate after \(slateDelay) s")
        #expect(slateDelay <= timeout + 0.3, "slate after \(slateDelay) s")
        #expect(deliveries[..<firstSlate].allSatisfy { $0.camera == "cam1" })
        let back = try #require(deliveries[firstSlate...].firstIndex { !$0.isSlate })
        #expect(deliveries[firstSlate..<back].allSatisfy { $0.isSlate && $0.camera == nil })
        #expect(deliveries[back...].allSatisfy { $0.camera == "cam1" })
        #expect(lostStatus.slateFrames >= 1 && lostStatus.programSource == "cam1")
        #expect(switcher.status.slate == nil)
        // The feed kept its rate: no frame number missing that is not counted as late.
        let numbers = deliveries.compactMap { frameNumber(of: $0.pts, rate: small.frameRate) }
        #expect(Int64(numbers.count) + switcher.status.lateTicks == (numbers.last ?? -1) + 1)

        let lost = events.all.filter { $0.kind == .cameraLost }
        let returned = events.all.filter { $0.kind == .cameraReturned }
        #expect(lost.count == 1 && lost.first?.camera == "cam1" && lost.first?.programTime == deliveries[firstSlate].pts)
        #expect(returned.count == 1 && returned.first?.programTime == deliveries[back].pts)
    }

    @Test func silentNewSourceWaitsAndRemovedProgramSourceIsLost() throws {
        let events = RecordedEvents()
        let log = DeliveryLog(candidates: ["cam1", "cam2"])
        let switcher = ProgramSwitcher(format: small, configuration: .init(emitsLossEvents: true), events: events) {
            log.record($0, $1)
        }
        let silent = LatestValue<VideoFrame>()
        switcher.addSource("cam1", frames: silent)
        switcher.start()
        #expect(log.wait { $0.count >= 3 })
        #expect(switcher.status.slate == "WAITING FOR cam1")
        #expect(!events.all.contains { $0.kind == .cameraLost })

        let cam = try camera("cam1")
        cam.start()
        defer { cam.stop() }
        _ = cam.frames.waitForNewer(than: 0, timeoutSeconds: 2)
        switcher.addSource("cam1", frames: cam.frames)  // replaces the slot, as a replugged camera would
        #expect(log.wait { $0.last?.camera == "cam1" })
        switcher.removeSource("cam1")
        #expect(log.wait { $0.last?.isSlate == true })
        // The status follows the delivered frame (a loaded machine may read it in between).
        #expect(waitUntil { switcher.status.slate == "CAMERA LOST cam1" }, "\(String(describing: switcher.status.slate))")
        #expect(switcher.status.sources.isEmpty && switcher.status.programSource == "cam1")
        switcher.stop()
        #expect(events.all.filter { $0.kind == .cameraLost }.count == 1)
    }

    @Test func aRemovedCameraIsNamedAsRemovedUntilItIsAddedAgain() throws {
        let switcher = ProgramSwitcher(format: small, events: RecordedEvents()) { _, _ in }
        switcher.addSource("cam1", frames: LatestValue())
        switcher.addSource("cam2", frames: LatestValue())
        switcher.removeSource("cam2")
        let result = Box<Result<SwitchOutcome, SwitchError>>()
        switcher.switchProgram(to: "cam2") { result.set($0) }
        let answer = try #require(result.wait(timeout: 0.1), "a removed camera fails at once")
        #expect(throws: SwitchError.removedCamera("cam2", available: ["cam1"])) { try answer.get() }
        #expect(throws: SwitchError.removedCamera("cam2", available: ["cam1"])) { try switcher.source(named: "cam2") }
        #expect(SwitchError.removedCamera("cam2", available: ["cam1"]).description
                == "camera 'cam2' was removed from the show; it is no source until it is added again; available cameras: cam1")
        // A name never added is still unknown; the removed one added again is a source.
        #expect(throws: SwitchError.unknownCamera("cam9", available: ["cam1"])) { try switcher.source(named: "cam9") }
        switcher.addSource("cam2", frames: LatestValue())
        #expect(try switcher.source(named: "cam2") == .camera("cam2"))
    }

    @Test func noCameraShowsTheNoCameraSlateUntilOneIsAdded() throws {
        let events = RecordedEvents()
        let brightest = Mutex<UInt8>(0)
        let log = DeliveryLog(candidates: ["cam3"]) { _, frame in
            // Slate text: white ink in the middle band.
            let rect = RelativeRect(x: 0, y: 0.3, width: 1, height: 0.4).pixelRect(width: frame.width, height: frame.height)
            let base = frame.plane(0).assumingMemoryBound(to: UInt8.self)
            var maximum: UInt8 = 0
            for row in rect.y..<rect.maxY {
                for column in rect.x..<rect.maxX { maximum = max(maximum, base[row * frame.planes[0].stride + column]) }
            }
            brightest.withLock { $0 = max($0, maximum) }
        }
        let switcher = ProgramSwitcher(format: small, events: events) { log.record($0, $1) }
        switcher.start()
        #expect(log.wait { $0.count >= 8 })
        #expect(switcher.status.slate == "NO CAMERA")
        #expect(switcher.status.programSource == nil)
        #expect(log.all.allSatisfy { $0.isSlate && $0.format == .i420 && $0.width == 320 && $0.height == 180 })
        #expect(brightest.withLock { $0 } > 200)

        let cam = try camera("cam3")
        cam.start()
        defer { cam.stop() }
        _ = cam.frames.waitForNewer(than: 0, timeoutSeconds: 2)
        let before = log.all.count
        switcher.addSource("cam3", frames: cam.frames)
        #expect(log.wait { $0.last?.camera == "cam3" })
        switcher.stop()
        let deliveries = log.all
        let firstCamera = try #require(deliveries.firstIndex { $0.camera == "cam3" })
        #expect(firstCamera >= before)
        #expect(deliveries[firstCamera...].allSatisfy { !$0.isSlate })
        #expect(switcher.status.slateFrames == Int64(firstCamera))
        let event = try #require(events.all.first { $0.kind == .switchProgram })
        #expect(event.camera == "cam3" && event.programTime == deliveries[firstCamera].pts)
        #expect(event.details["from"] == "none")
    }

    @Test func scalesNV12ToProgramI420KeepingTheIdentColourInPlace() throws {
        let cam = try camera("cam3", .nv12, width: 640, height: 360)
        cam.start()
        defer { cam.stop() }
        _ = cam.frames.waitForNewer(than: 0, timeoutSeconds: 2)
        let program = ProgramFormat(width: 1280, height: 720, frameRate: Rational(30))
        let colours = Mutex<[(ident: YUVColor, rightOfIdent: YUVColor)]>([])
        // Whether a delivered frame is the camera's own buffer, judged while both are alive (an
        // ObjectIdentifier kept for later could name a new buffer at a freed one's address).
        let sharedBuffers = Mutex(0)
        let log = DeliveryLog(candidates: ["cam1", "cam2", "cam3", "cam4"]) { _, frame in
            if let newest = cam.frames.latest().value, newest.storage === frame.storage { sharedBuffers.withLock { $0 += 1 } }
            guard let ident = frame.averageColor(in: TestPatternCamera.identRegion.centre(0.8)),
                  let right = frame.averageColor(in: RelativeRect(x: 0.27, y: 0.1, width: 0.06, height: 0.3)) else { return }
            colours.withLock { $0.append((ident, right)) }
        }
        let switcher = ProgramSwitcher(format: program, events: DiscardingEventSink()) { log.record($0, $1) }
        switcher.addSource("cam3", frames: cam.frames)
        switcher.start()
        #expect(log.wait { $0.count >= 5 })
        switcher.stop()

        let deliveries = log.all
        #expect(deliveries.allSatisfy { $0.format == .i420 && $0.width == 1280 && $0.height == 720 })
        #expect(deliveries.allSatisfy { $0.camera == "cam3" })
        #expect(sharedBuffers.withLock { $0 } == 0, "the camera's buffer is converted, never passed on")
        for sample in colours.withLock({ $0 }) {
            let blue = sample.ident.rgb
            #expect(blue.blue > 220 && blue.red < 30 && blue.green < 30, "ident \(sample.ident)")
            // Just right of the block: the first (75 % white) bar, not the ident colour.
            #expect(sample.rightOfIdent.distance(to: YUVColor.grey(191)) < 20, "bar \(sample.rightOfIdent)")
        }
        #expect(switcher.status.scaledFrames == Int64(deliveries.count))
        #expect(switcher.status.passThroughFrames == 0)
    }

    @Test func sameSizeI420IsPassedThroughWithoutACopy() throws {
        let frames = LatestValue<VideoFrame>()
        let original = VideoFrame.allocate(format: .i420, width: 320, height: 180, captureTime: MonotonicClock.now())
        original.fill(with: TestPatternCamera.identColor(for: "cam1"))
        frames.publish(original)
        let log = DeliveryLog(candidates: ["cam1"])
        let switcher = ProgramSwitcher(format: small, configuration: .init(lossTimeout: 30), events: DiscardingEventSink()) {
            log.record($0, $1)
        }
        switcher.addSource("cam1", frames: frames)
        switcher.start()
        #expect(log.wait { $0.count >= 3 })
        // A frame of another size must be converted: new storage.
        let other = VideoFrame.allocate(format: .i420, width: 160, height: 90, captureTime: MonotonicClock.now())
        other.fill(with: TestPatternCamera.identColor(for: "cam1"))
        frames.publish(other)
        let passedThrough = log.all.count
        #expect(log.wait { $0.count >= passedThrough + 3 })
        switcher.stop()

        let deliveries = log.all
        let originalID = ObjectIdentifier(original.storage), otherID = ObjectIdentifier(other.storage)
        #expect(deliveries[..<passedThrough].allSatisfy { $0.storage == originalID })
        #expect(deliveries.last?.storage != otherID && deliveries.last?.storage != originalID)
        #expect(deliveries.last?.camera == "cam1" && deliveries.last?.width == 320)
        #expect(switcher.status.passThroughFrames >= Int64(passedThrough) && switcher.status.scaledFrames >= 1)
    }

    @Test func lateTicksSkipFrameNumbersAndKeepTheGrid() throws {
        let clock = ManualClock()
        let cam = try camera("cam1", clock: clock)
        cam.start()
        defer { cam.stop() }
        _ = cam.frames.waitForNewer(than: 0, timeoutSeconds: 20)
        // A consumer that blocks once for 150 ms (it must not, but the clock must survive it): 150 ms
        // pass while the program thread is inside it.
        let log = DeliveryLog(candidates: ["cam1"], clock: clock) { index, _ in
            if index == 5 { clock.advance(by: 150_000_000) }
        }
        let switcher = ProgramSwitcher(format: small, clock: clock, events: DiscardingEventSink()) { log.record($0, $1) }
        switcher.addSource("cam1", frames: cam.frames)
        switcher.start()
        #expect(play(clock) { log.all.count >= 15 })
        switcher.stop()
        let numbers = log.all.compactMap { frameNumber(of: $0.pts, rate: small.frameRate) }
        #expect(numbers.count == log.all.count)
        let jump = numbers[6] - numbers[5]
        #expect(jump >= 4, "frame numbers \(numbers[4...7]) should skip the blocked ticks")
        #expect(switcher.status.lateTicks >= jump - 1)
        #expect(Int64(numbers.count) + switcher.status.lateTicks == (numbers.last ?? -1) + 1)
    }
}
