import Foundation
import Testing
import Synchronization
import Capture
import StudioCore
import StudioSystem
import TestSupport

/// A player (`PlayerCamera`) on a `ManualClock`: clips made with ffmpeg whose every picture carries its
/// number and its item's tint (`NumberedClips`), played tick by tick at the program's 30 fps; what the
/// camera shows at each tick is read back from its pictures.
@Suite struct PlayerCameraTests {
    static let rate = Rational(30)

    /// A scratch directory with the clips `make` writes in it.
    static func withClips(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-player-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    /// A started player on a manual clock, cued (its first picture shown), and the events it wrote.
    final class Rig: Sendable {
        let clock = ManualClock()
        let camera: PlayerCamera
        let record = Record()

        /// What the player wrote: its events and its log lines.
        final class Record: Sendable {
            let events = Mutex<[StudioEvent]>([])
            let logs = Mutex<[String]>([])
        }

        init(_ spec: PlayerSpec, programOrigin: ProgramOrigin = ProgramOrigin()) throws {
            let record = record
            camera = PlayerCamera(spec: spec, id: spec.name, rate: PlayerCameraTests.rate, clock: clock, programOrigin: programOrigin,
                                  log: { line in record.logs.withLock { $0.append(line) } },
                                  emit: { event in record.events.withLock { $0.append(event) } })
            camera.start()
            let cued = waitUntil(seconds: 10, every: 0.01) { self.camera.frames.latest().value != nil }
            guard cued else { throw NumberedClipError("the player showed no cued picture") }
        }

        deinit { camera.stop() }

        /// Plays, then reads what the camera shows at each of `ticks` program ticks (nil: a picture that is
        /// none of the clips', e.g. black).
        func play(ticks: Int) -> [(number: Int, tint: Int)?] {
            let origin = clock.now()
            _ = camera.transport(.play(item: nil))
            let grid = FrameGrid(origin: origin, rate: PlayerCameraTests.rate)
            var shown: [(number: Int, tint: Int)?] = []
            for tick in 0..<Int64(ticks) {
                clock.advance(to: grid.time(ofFrame: tick))
                clock.waitForSleepers(1)
                shown.append(camera.frames.latest().value.flatMap(NumberedClips.read))
            }
            return shown
        }

        var eventSummary: [String] {
            record.events.withLock { $0.map { "\($0.kind.rawValue) \($0.details["item"] ?? "")" + ($0.details["how"].map { " \($0)" } ?? "") } }
        }
    }

    @Test func aClipAtTheProgramsRatePlaysEveryFrameOnceInOrderThenHoldsTheLast() throws {
        try Self.withClips { directory in
            let clip = directory.appendingPathComponent("count.mp4").path
            try NumberedClips.make(clip, frames: 60, tint: 90)
            let rig = try Rig(PlayerSpec(name: "intro", items: [clip]))
            #expect(rig.camera.player?.state == .cued)
            #expect(rig.camera.frames.latest().value.flatMap(NumberedClips.read)?.number == 0, "cued on the first frame")
            let shown = rig.play(ticks: 70)
            #expect(shown.map { $0?.number } == Array(0..<60) + Array(repeating: 59, count: 10), "\(shown.map { $0?.number })")
            let status = try #require(rig.camera.player)
            #expect(status.state == .ended && status.repeatedFrames == 0 && status.skippedFrames == 0, "\(status)")
            #expect(rig.eventSummary == ["clip_started count.mp4", "clip_ended count.mp4 end"])
            #expect(rig.record.events.withLock { $0.last?.details["duration_ms"] } == "2000")
        }
    }

    @Test func aClipAt24FramesPerSecondIsShownByTheClockSomePicturesTwice() throws {
        try Self.withClips { directory in
            let clip = directory.appendingPathComponent("film.mp4").path
            try NumberedClips.make(clip, frames: 48, rate: "24")
            let rig = try Rig(PlayerSpec(name: "film", items: [clip]))
            let shown = rig.play(ticks: 61)
            let expected = (0..<60).map { $0 * 24 / 30 } + [47]
            #expect(shown.map { $0?.number } == expected, "\(shown.map { $0?.number })")
            let status = try #require(rig.camera.player)
            #expect(status.repeatedFrames == 12 && status.skippedFrames == 0 && status.state == .ended, "\(status)")
        }
    }

    @Test func nextAndLoopShowNoFrameOfAnotherItemAndNoBlackBetween() throws {
        try Self.withClips { directory in
            let first = directory.appendingPathComponent("first.mp4").path, second = directory.appendingPathComponent("second.mkv").path
            try NumberedClips.make(first, frames: 20, tint: 90)
            try NumberedClips.make(second, frames: 15, tint: 170)
            let next = try Rig(PlayerSpec(name: "breaks", items: [first, second], end: .next))
            let played = next.play(ticks: 40)
            let tints = played.map { $0.map { $0.tint > 128 ? "second" : "first" } ?? "none" }
            #expect(played.map { $0?.number } == Array(0..<20) + Array(0..<15) + Array(repeating: 14, count: 5), "\(played.map { $0?.number })")
            #expect(tints == Array(repeating: "first", count: 20) + Array(repeating: "second", count: 20), "\(tints)")
            #expect(next.eventSummary == ["clip_started first.mp4", "clip_ended first.mp4 next", "clip_started second.mkv", "clip_ended second.mkv end"])

            let loop = try Rig(PlayerSpec(name: "loop", items: [first], end: .loop))
            let looped = loop.play(ticks: 65)
            #expect(looped.map { $0?.number } == (0..<65).map { $0 % 20 }, "\(looped.map { $0?.number })")
            #expect(loop.camera.player?.repeatedFrames == 0)
            #expect(loop.eventSummary.filter { $0.hasPrefix("clip_ended") } == Array(repeating: "clip_ended first.mp4 loop", count: 3))
        }
    }

    @Test func pauseStopAndCueMoveTheTransportAsAsked() throws {
        try Self.withClips { directory in
            let first = directory.appendingPathComponent("a.mp4").path, second = directory.appendingPathComponent("b.mp4").path
            try NumberedClips.make(first, frames: 30, tint: 90)
            try NumberedClips.make(second, frames: 30, tint: 170)
            let rig = try Rig(PlayerSpec(name: "deck", items: [first, second]))
            _ = rig.play(ticks: 10)
            var status = rig.camera.transport(.pause)
            #expect(status.state == .paused && status.positionMilliseconds == 300, "\(status)")
            // Paused: time goes on, the picture stays.
            rig.clock.advance(by: 500_000_000)
            rig.clock.waitForSleepers(1)
            #expect(rig.camera.frames.latest().value.flatMap(NumberedClips.read)?.number == 9)
            // Play goes on from the next picture.
            #expect(rig.play(ticks: 3).map { $0?.number } == [10, 11, 12])
            status = rig.camera.transport(.cue(item: 1))
            #expect(status.state == .cued && status.itemNumber == 2 && status.item == "b.mp4", "\(status)")
            rig.clock.waitForSleepers(1)
            #expect(rig.camera.frames.latest().value.flatMap(NumberedClips.read).map { [$0.number, $0.tint > 128 ? 1 : 0] } == [0, 1])
            status = rig.camera.transport(.stop)
            #expect(status.state == .cued && status.itemNumber == 1 && status.positionMilliseconds == 0, "\(status)")
            #expect(rig.eventSummary == ["clip_started a.mp4", "clip_ended a.mp4 cued"])
            // Next while playing: on to the next item's first picture, playing.
            #expect(rig.play(ticks: 2).map { $0?.number } == [0, 1])
            status = rig.camera.transport(.next)
            #expect(status.state == .playing && status.itemNumber == 2, "\(status)")
            #expect(rig.play(ticks: 2).map { $0.map { [$0.number, $0.tint > 128 ? 1 : 0] } } == [[0, 1], [1, 1]])
            #expect(rig.eventSummary.suffix(3) == ["clip_started a.mp4", "clip_ended a.mp4 next", "clip_started b.mp4"], "\(rig.eventSummary)")
        }
    }

    @Test func cueAtATimeAndSeekShowThePictureThereAndPlayOnFromIt() throws {
        try Self.withClips { directory in
            let clip = directory.appendingPathComponent("count.mp4").path
            try NumberedClips.make(clip, frames: 90, tint: 90)
            let rig = try Rig(PlayerSpec(name: "deck", items: [clip]))
            var status = rig.camera.transport(.cue(item: 0, at: 1_500_000_000))
            rig.clock.waitForSleepers(1)
            #expect(status.state == .cued && status.positionMilliseconds == 1500 && status.remainingMilliseconds == 1500, "\(status)")
            #expect(rig.camera.frames.latest().value.flatMap(NumberedClips.read)?.number == 45)
            #expect(rig.play(ticks: 3).map { $0?.number } == [45, 46, 47])
            // Playing: on from the time sought.
            status = rig.camera.transport(.seek(to: 500_000_000))
            #expect(status.state == .playing, "\(status)")
            #expect(rig.play(ticks: 2).map { $0?.number } == [15, 16])
            // Past its end: its last picture.
            status = rig.camera.transport(.cue(item: 0, at: 60_000_000_000))
            rig.clock.waitForSleepers(1)
            #expect(rig.camera.frames.latest().value.flatMap(NumberedClips.read)?.number == 89, "\(status)")
            #expect(rig.eventSummary.filter { $0.hasPrefix("clip_ended") } == ["clip_ended count.mp4 seek", "clip_ended count.mp4 cued"], "\(rig.eventSummary)")
        }
    }

    @Test func withTheProgramsOriginKnownEachPictureComesHalfAFrameBeforeTheProgramsTick() throws {
        try Self.withClips { directory in
            let clip = directory.appendingPathComponent("count.mp4").path
            try NumberedClips.make(clip, frames: 30)
            let programOrigin = ProgramOrigin()
            let rig = try Rig(PlayerSpec(name: "intro", items: [clip]), programOrigin: programOrigin)
            // The program ticks at 10 ms past the clock's time, then every 1/30 s.
            let start = rig.clock.now()
            programOrigin.set(start + 10_000_000)
            let program = FrameGrid(origin: start + 10_000_000, rate: Self.rate)
            _ = rig.camera.transport(.play(item: nil))
            rig.clock.waitForSleepers(1)
            func shown() -> Int? { rig.camera.frames.latest().value.flatMap(NumberedClips.read)?.number }
            #expect(shown() == 0)
            for tick in Int64(1)...5 {
                // A microsecond before half a frame before the program's tick: the picture before; a
                // microsecond after: this one.
                let due = program.time(ofFrame: tick) - 16_666_667
                rig.clock.advance(to: due - 1_000)
                rig.clock.waitForSleepers(1)
                #expect(shown() == Int(tick) - 1, "just before \(due)")
                rig.clock.advance(to: due + 1_000)
                rig.clock.waitForSleepers(1)
                #expect(shown() == Int(tick), "at \(due)")
            }
        }
    }

    @Test func aFileTruncatedMidwayHoldsItsLastGoodFrameAndSaysSoOnce() throws {
        try Self.withClips { directory in
            let whole = directory.appendingPathComponent("whole.mkv").path, cut = directory.appendingPathComponent("cut.mkv").path
            try NumberedClips.make(whole, frames: 90)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
            let rig = try Rig(PlayerSpec(name: "cut", items: [cut], end: .loop))
            let shown = rig.play(ticks: 90)
            let numbers = shown.compactMap { $0?.number }
            #expect(numbers.count == 90, "every tick shows a picture of the clip: \(shown.map { $0?.number })")
            let last = try #require(numbers.last)
            #expect(last > 10 && last < 80 && numbers.suffix(5).allSatisfy { $0 == last }, "\(numbers)")
            #expect(numbers == Array(0...last) + Array(repeating: last, count: 89 - last), "in order, then held: \(numbers)")
            #expect(rig.camera.player?.state == .ended)
            #expect(rig.eventSummary.last == "clip_ended cut.mkv truncated", "\(rig.eventSummary)")
            #expect(rig.record.logs.withLock { $0.filter { $0.contains("cut.mkv") }.count } == 1, "\(rig.record.logs.withLock { $0 })")
        }
    }
}

/// Stills, `end: black`, and files the player cannot play.
@Suite struct PlayerItemTests {
    @Test func aStillIsShownForItsSecondsThenTheNextItemFollows() throws {
        try PlayerCameraTests.withClips { directory in
            let still = directory.appendingPathComponent("card.png").path, clip = directory.appendingPathComponent("clip.mp4").path
            try NumberedClips.make(still, frames: 1, tint: 200)
            try NumberedClips.make(clip, frames: 10, tint: 90)
            let rig = try PlayerCameraTests.Rig(PlayerSpec(name: "breaks", items: [still, clip], end: .next, stillSeconds: 0.5))
            let shown = rig.play(ticks: 30)
            let described = shown.map { $0.map { "\($0.tint > 150 ? "card" : "clip") \($0.number)" } ?? "none" }
            #expect(described == Array(repeating: "card 0", count: 15) + (0..<10).map { "clip \($0)" } + Array(repeating: "clip 9", count: 5),
                    "\(described)")
            #expect(rig.eventSummary == ["clip_started card.png", "clip_ended card.png next", "clip_started clip.mp4", "clip_ended clip.mp4 end"])
        }
    }

    @Test func aJPEGStillLoopsWithoutAGap() throws {
        try PlayerCameraTests.withClips { directory in
            let still = directory.appendingPathComponent("slate.jpg").path
            try NumberedClips.make(still, frames: 1, tint: 60)
            let rig = try PlayerCameraTests.Rig(PlayerSpec(name: "slate", items: [still], end: .loop, stillSeconds: 0.2))
            let shown = rig.play(ticks: 31)
            #expect(shown.allSatisfy { $0?.number == 0 && abs(($0?.tint ?? 0) - 60) < 8 }, "\(shown.map { $0.map { "\($0)" } ?? "none" })")
            #expect(rig.eventSummary.filter { $0 == "clip_ended slate.jpg loop" }.count == 5, "\(rig.eventSummary)")
        }
    }

    @Test func endBlackShowsBlackAfterTheLastFrame() throws {
        try PlayerCameraTests.withClips { directory in
            let clip = directory.appendingPathComponent("sting.mp4").path
            try NumberedClips.make(clip, frames: 10, tint: 90)
            let rig = try PlayerCameraTests.Rig(PlayerSpec(name: "sting", items: [clip], end: .black))
            let shown = rig.play(ticks: 15)
            #expect(shown.prefix(10).map { $0?.number } == Array(0..<10))
            // Black: every bar dark and no tint (Cb 128).
            #expect(shown.suffix(5).allSatisfy { $0?.number == 0 && $0?.tint == 128 }, "\(shown.map { $0.map { "\($0)" } ?? "none" })")
            #expect(rig.camera.player?.state == .ended)
        }
    }

    @Test func aFileThatIsNoMediaOrIsMissingRefusesTheBackendNamingIt() throws {
        try PlayerCameraTests.withClips { directory in
            let junk = directory.appendingPathComponent("junk.mp4").path
            try Data("not a video".utf8).write(to: URL(fileURLWithPath: junk))
            let missing = directory.appendingPathComponent("gone.mov").path
            for path in [junk, missing] {
                let context = BackendContext(program: .default, namer: { CameraID($0.identity) }, log: { _ in }, enabled: [.player],
                                             players: [PlayerSpec(name: "intro", items: [path])])
                do {
                    _ = try PlayerBackend().makeDiscovery(context)
                    Issue.record("\(path) was accepted")
                } catch {
                    #expect("\(error)".contains(path), "\(error)")
                }
            }
        }
    }
}

/// Files a player cannot show are refused at start (and on reload: `PlayerBackend.checkItems`), named.
@Suite struct PlayerBadFileTests {
    /// A PNG whose header says `width`x`height` (its pixel data a few zero bytes, as a header is all a
    /// decoder reads before it refuses the size).
    static func pngHeader(_ path: String, width: UInt32, height: UInt32) throws {
        func crc(_ bytes: [UInt8]) -> UInt32 {
            var value: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                value ^= UInt32(byte)
                for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
            }
            return ~value
        }
        func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc(body))
        }
        // zlib: a stored block of 16 zero bytes.
        let deflated: [UInt8] = [0x78, 0x01, 0x01, 16, 0, 0xEF, 0xFF] + [UInt8](repeating: 0, count: 16) + [0x00, 0x10, 0x00, 0x01]
        let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", bigEndian(width) + bigEndian(height) + [8, 0, 0, 0, 0]) + chunk("IDAT", deflated) + chunk("IEND", [])
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func refusal(_ path: String) -> String? {
        let context = BackendContext(program: .default, namer: { CameraID($0.identity) }, log: { _ in }, enabled: [.player],
                                     players: [PlayerSpec(name: "intro", items: [path])])
        do {
            _ = try PlayerBackend().makeDiscovery(context)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aFileOfNoFramesAndAHugeStillAreRefusedNamingTheFile() throws {
        try PlayerCameraTests.withClips { directory in
            let empty = directory.appendingPathComponent("empty.mkv").path, huge = directory.appendingPathComponent("huge.png").path
            let made = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
                "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30", "-frames:v", "0", "-c:v", "libx264", "-y", empty,
            ])
            try #require(made.wait(timeout: 60) == .exited(0), "\(made.errorText())")
            try Self.pngHeader(huge, width: 20_000, height: 20_000)
            let noFrames = try #require(Self.refusal(empty), "a file of 0 frames was accepted")
            #expect(noFrames.contains(empty) && noFrames.contains("intro") && noFrames.contains("no picture (0 frames"), "\(noFrames)")
            let tooLarge = try #require(Self.refusal(huge), "a 20000x20000 still was accepted")
            #expect(tooLarge.contains(huge) && tooLarge.contains("cannot be decoded (too large"), "\(tooLarge)")
            // A good still passes.
            let good = directory.appendingPathComponent("good.png").path
            try NumberedClips.make(good, frames: 1)
            #expect(Self.refusal(good) == nil)
        }
    }
}

/// Sound in a player's items.
@Suite struct PlayerSoundTests {
    @Test func soundLongerThanThePicturesEndsWithThemAndTheLoopFollowsWithNoGap() throws {
        try PlayerCameraTests.withClips { directory in
            let clip = directory.appendingPathComponent("tail.mp4").path
            // 1 s of pictures, 3 s of sound.
            let bar = "geq=lum='if(bitand(N\\,pow(2\\,floor(X/40)))\\,235\\,16)':cb=128:cr=128"
            let made = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
                "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30,format=yuv420p,\(bar)",
                "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=3",
                "-frames:v", "30", "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-c:a", "aac", "-y", clip,
            ])
            try #require(made.wait(timeout: 60) == .exited(0), "\(made.errorText())")
            let rig = try PlayerCameraTests.Rig(PlayerSpec(name: "tail", items: [clip], end: .loop))
            let shown = rig.play(ticks: 65)
            #expect(shown.map { $0?.number } == (0..<65).map { $0 % 30 }, "\(shown.map { $0?.number })")
            #expect(rig.eventSummary.filter { $0.hasPrefix("clip_ended") } == ["clip_ended tail.mp4 loop", "clip_ended tail.mp4 loop"],
                    "\(rig.eventSummary)")
        }
    }
}
