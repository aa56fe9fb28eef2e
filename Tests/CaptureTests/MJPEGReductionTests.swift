import Testing
import Synchronization
@testable import Capture
import StudioCore
import StudioSystem
import TestSupport

/// MJPEG decoding at 1/2, 1/4 and 1/8 of the size (libavcodec's `lowres`) and the camera thread's
/// decoding by demand, on JPEGs made here by libavcodec's MJPEG encoder.
@Suite struct MJPEGReductionTests {
    /// A 4:2:0 JPEG of smooth, varied content: a horizontal luma ramp plus a vertical one, and a bright
    /// square, chroma ramps. Limited-range I420 values go in.
    static func makeJPEG(width: Int, height: Int) throws -> [UInt8] {
        var problem = ""
        let encoder = try #require(JPEGEncoder(width: width, height: height, rate: Rational(30), problem: &problem), "\(problem)")
        let picture = VideoFrame.allocate(format: .i420, width: width, height: height)
        for row in 0..<height {
            let line = picture.plane(0).assumingMemoryBound(to: UInt8.self) + row * picture.planes[0].stride
            for column in 0..<width {
                let inSquare = column >= width / 4 && column < width / 2 && row >= height / 4 && row < height / 2
                line[column] = inSquare ? 220 : UInt8(20 + column * 120 / width + row * 60 / height)
            }
        }
        for plane in 1...2 {
            for row in 0..<height / 2 {
                let line = picture.plane(plane).assumingMemoryBound(to: UInt8.self) + row * picture.planes[plane].stride
                for column in 0..<width / 2 { line[column] = UInt8(plane == 1 ? 90 + column * 70 / (width / 2) : 160 - row * 60 / (height / 2)) }
            }
        }
        return try #require(encoder.encode(picture))
    }

    static func luma(_ frame: VideoFrame, x: Int, y: Int) -> Int {
        Int(frame.plane(0).load(fromByteOffset: y * frame.planes[0].stride + x, as: UInt8.self))
    }

    /// The mean absolute luma difference between `reduced` and `full` averaged over reduction x reduction blocks.
    static func meanDifference(_ reduced: VideoFrame, _ full: VideoFrame, reduction: Int) -> Double {
        var total = 0.0
        for y in 0..<reduced.height {
            for x in 0..<reduced.width {
                var sum = 0
                for dy in 0..<reduction { for dx in 0..<reduction { sum += luma(full, x: x * reduction + dx, y: y * reduction + dy) } }
                total += abs(Double(luma(reduced, x: x, y: y)) - Double(sum) / Double(reduction * reduction))
            }
        }
        return total / Double(reduced.width * reduced.height)
    }

    @Test func aReducedDecodeIsTheFullPictureAtAFractionOfItsSize() throws {
        let jpeg = try Self.makeJPEG(width: 1280, height: 720)
        let full = try jpeg.withUnsafeBytes { try MJPEGDecoder().decode($0, captureTime: 5, sequence: 9) }
        #expect(full.width == 1280 && full.height == 720 && full.reduction == 1)
        for (reduction, width, height) in [(2, 640, 360), (4, 320, 180), (8, 160, 90)] {
            let decoder = try MJPEGDecoder(reduction: reduction)
            let frame = try jpeg.withUnsafeBytes { try decoder.decode($0, captureTime: 5, sequence: 9) }
            #expect(frame.format == .i420 && frame.width == width && frame.height == height, "1/\(reduction): \(frame.width)x\(frame.height)")
            #expect(frame.reduction == reduction && frame.captureTime == 5 && frame.sequence == 9)
            // The same picture: within a few levels of the full decode averaged over each block (the
            // square's edges fall on block edges: 1280/4 and 720/4 are multiples of 8).
            let difference = Self.meanDifference(frame, full, reduction: reduction)
            #expect(difference < 3, "1/\(reduction): mean luma difference \(difference)")
            #expect(abs(Self.luma(frame, x: width * 3 / 8, y: height * 3 / 8) - 220) <= 4, "the bright square")
        }
    }

    @Test func oddSidesAreCutToEvenAndTheSmallestSufficientReductionIsChosen() throws {
        // 1920x1080 at 1/8 is 240x135 in libavcodec: I420 gets 240x134.
        #expect(MJPEGDecoder.reducedSide(1080, by: 8) == 134 && MJPEGDecoder.reducedSide(1920, by: 8) == 240)
        let jpeg = try Self.makeJPEG(width: 1920, height: 1080)
        let frame = try jpeg.withUnsafeBytes { try MJPEGDecoder(reduction: 8).decode($0) }
        #expect(frame.width == 240 && frame.height == 134)
        // The tiles are 320 wide: 1280 -> 1/4 (320), 1920 -> 1/4 (480; 1/8 would be 240), 640 -> 1/2.
        #expect(MJPEGDecoder.reduction(width: 1280, atLeast: 320) == 4)
        #expect(MJPEGDecoder.reduction(width: 1920, atLeast: 320) == 4)
        #expect(MJPEGDecoder.reduction(width: 640, atLeast: 320) == 2)
        #expect(MJPEGDecoder.reduction(width: 1280, atLeast: 160) == 8)
        #expect(MJPEGDecoder.reduction(width: 400, atLeast: 320) == 1)
        #expect(throws: CaptureError.self) { try MJPEGDecoder(reduction: 3) }
    }

    final class Wakes: Sendable { let count = Atomic<Int>(0) }

    /// The camera thread's steps, on made-up times (a 30 fps camera): nothing decoded while nobody needs
    /// the camera; reduced at most once per tile period while only the tiles do; and the kept newest JPEG
    /// decoded as needed as soon as the demand rises.
    @Test func decodingFollowsTheDemandAndCatchesUpAtOnce() throws {
        let jpeg = try Self.makeJPEG(width: 1280, height: 720)
        let wakes = Wakes()
        let demand = CameraDemand(wake: { wakes.count.add(1, ordering: .relaxed) })
        // Needed at full size until whoever shows the camera says otherwise.
        #expect(demand.demand == .full && demand.currentReasons == .seen)
        demand.set(.seen, false)
        #expect(demand.demand == .idle && wakes.count.load(ordering: .relaxed) == 0)
        demand.setReducedTarget(width: 320, interval: 100_000_000)
        let decoding = DemandDecoding()
        let frameInterval: UInt64 = 33_333_333
        var decoded: [(Int, UInt64)] = [], skipped = 0
        func step(fresh: Bool, at time: UInt64) -> DemandDecoding.Outcome {
            let outcome = decoding.step(fresh: fresh, newest: jpeg, captureTime: time, sequence: 0, demand: demand, width: 1280, now: time)
            switch outcome {
            case .decoded(let frame): decoded.append((frame.reduction, time))
            case .skipped: skipped += 1
            default: break
            }
            return outcome
        }
        // A second of frames, nobody needs the camera: none decoded, each counted as skipped.
        for index in 0..<30 { _ = step(fresh: true, at: UInt64(index) * frameInterval) }
        #expect(decoded.isEmpty && skipped == 30)
        if case .idle = step(fresh: false, at: 30 * frameInterval) {} else { Issue.record("an idle step without a new frame did something") }

        // The tiles are watched: the newest JPEG (no new frame yet) at 1/4 size at once, once.
        demand.set(.tiles, true)
        #expect(demand.demand == .reduced && wakes.count.load(ordering: .relaxed) == 1)
        guard case .decoded(let first) = step(fresh: false, at: 30 * frameInterval + 1_000_000) else {
            Issue.record("no reduced decode when the tiles were watched")
            return
        }
        #expect(first.width == 320 && first.height == 180 && first.reduction == 4)
        if case .idle = step(fresh: false, at: 30 * frameInterval + 2_000_000) {} else { Issue.record("decoded the same JPEG twice") }
        decoded.removeAll()
        skipped = 0
        // Three seconds of frames, only the tiles need the camera: 1/4 size (320x180), about 10 a second.
        for index in 31..<121 { _ = step(fresh: true, at: UInt64(index) * frameInterval) }
        #expect(decoded.allSatisfy { $0.0 == 4 })
        #expect((28...32).contains(decoded.count), "\(decoded.count) reduced decodes in 3 s")
        #expect(decoded.count + skipped == 90)
        #expect(zip(decoded, decoded.dropFirst()).allSatisfy { $1.1 - $0.1 >= 75_000_000 }, "never faster than the tiles want")
        // Nothing new: nothing to do, even when the last new frame was passed over (the timed-out waits of
        // the camera thread must not decode it after all).
        for tick in 1...3 {
            if case .idle = step(fresh: false, at: 120 * frameInterval + UInt64(tick) * 50_000_000) {} else {
                Issue.record("a step without a new frame did something")
            }
        }

        // Put on preview: the newest JPEG (no new frame yet) is decoded at full size at once, once.
        demand.set(.seen, true)
        #expect(wakes.count.load(ordering: .relaxed) == 2)
        guard case .decoded(let caughtUp) = step(fresh: false, at: 121 * frameInterval + 1_000_000) else {
            Issue.record("no full-size decode when the demand turned full")
            return
        }
        #expect(caughtUp.width == 1280 && caughtUp.height == 720 && caughtUp.reduction == 1)
        if case .idle = step(fresh: false, at: 121 * frameInterval + 2_000_000) {} else { Issue.record("decoded the same JPEG twice") }
        // Every new frame while seen, at full size.
        let before = decoded.count
        for index in 122..<131 { _ = step(fresh: true, at: UInt64(index) * frameInterval) }
        #expect(decoded.count - before == 9 && decoded.suffix(9).allSatisfy { $0.0 == 1 })
        // Another reason while already full wakes nobody; off preview, reduced again (the tiles).
        demand.set(.recorded, true)
        demand.set(.recorded, false)
        #expect(wakes.count.load(ordering: .relaxed) == 2)
        demand.set(.seen, false)
        #expect(demand.demand == .reduced)
        guard case .decoded(let small) = step(fresh: true, at: 131 * frameInterval) else {
            Issue.record("no reduced decode after the demand dropped")
            return
        }
        #expect(small.width == 320 && small.reduction == 4)
        // Nobody watches the tiles any more: idle, nothing decoded.
        demand.set(.tiles, false)
        #expect(demand.demand == .idle)
        if case .skipped = step(fresh: true, at: 135 * frameInterval) {} else { Issue.record("an idle camera decoded") }
    }

    /// A camera's `CompressedCapture` times its reduced decodes on the clock it is given: on a manual
    /// clock, a JPEG that comes before a tile interval has passed on that clock is skipped, however long
    /// the machine took, and the first one after it is decoded.
    @Test func reducedDecodesAreTimedOnTheInjectedClock() throws {
        let jpeg = try Self.makeJPEG(width: 1280, height: 720)
        let clock = ManualClock()
        let compressed = CompressedCapture(tap: CompressedFrameTap(), clock: clock)
        compressed.demand.set(.seen, false)
        compressed.demand.set(.tiles, true)
        compressed.demand.setReducedTarget(width: 320, interval: 100_000_000)
        #expect(compressed.demand.demand == .reduced)
        let decoding = DemandDecoding()
        var newest = CompressedFrame()
        func deliver() -> DemandDecoding.Outcome {
            let now = clock.now()
            _ = jpeg.withUnsafeBytes { compressed.take($0, captureTime: now, arrived: now, width: 1280, height: 720) }
            return compressed.decodeNewest(decoding, newest: &newest, width: 1280)
        }
        guard case .decoded(let first) = deliver() else { Issue.record("the first JPEG was not decoded"); return }
        #expect(first.reduction == 4)
        clock.advance(by: 33_333_333)
        if case .skipped = deliver() {} else { Issue.record("a JPEG a frame later was decoded: the clock is not the one given") }
        clock.advance(by: 33_333_333)
        if case .skipped = deliver() {} else { Issue.record("a JPEG two frames later was decoded") }
        clock.advance(by: 33_333_334)
        guard case .decoded(let next) = deliver() else { Issue.record("a JPEG a tile interval later was not decoded"); return }
        #expect(next.reduction == 4)
    }

    /// Only a full-size picture published after the demand last turned full counts (a take waits for it).
    @Test func aFullPictureCountsOnlyAfterTheDemandTurnedFull() {
        let demand = CameraDemand()
        demand.noteFullPicture()
        #expect(demand.hasFullPicture, "needed at full size from the start, and a full picture published")
        demand.set(.seen, false)
        #expect(!demand.hasFullPicture && demand.demand == .idle)
        demand.set(.standby, true)
        #expect(demand.demand == .reduced && !demand.hasFullPicture)
        demand.set(.seen, true)
        #expect(!demand.hasFullPicture, "the picture from before the demand dropped no longer counts")
        demand.noteFullPicture()
        #expect(demand.hasFullPicture)
        // Another reason for full while full keeps the picture.
        demand.set(.recorded, true)
        #expect(demand.hasFullPicture)
    }

    @Test func aCorruptJPEGIsReportedAndNotRetried() throws {
        let demand = CameraDemand()
        demand.set(.forced, true)
        let decoding = DemandDecoding()
        let garbage = [UInt8](repeating: 0x55, count: 4000)
        if case .corrupt = decoding.step(fresh: true, newest: garbage, captureTime: 0, sequence: 0, demand: demand, width: 1280, now: 0) {} else {
            Issue.record("garbage decoded")
        }
        if case .idle = decoding.step(fresh: false, newest: garbage, captureTime: 0, sequence: 0, demand: demand, width: 1280, now: 1) {} else {
            Issue.record("the corrupt frame was tried again")
        }
    }
}
