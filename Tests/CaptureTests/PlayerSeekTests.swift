import Foundation
import Testing
@testable import Capture
import StudioCore
import StudioSystem
import TestSupport

/// `cue --at` and `seek` by libavformat's seek to the keyframe before the time (then decoded on to the
/// picture there): a 100-hour file, a truncated file sought into its missing part. Players on a
/// `ManualClock` (`PlayerCameraTests.Rig`).
@Suite struct PlayerSeekTests {
    static let hour: Int64 = 3_600_000_000_000

    /// The picture a player shows: its number (bars) and whether it is of the clip's tint.
    static func shown(_ rig: PlayerCameraTests.Rig) -> Int? {
        rig.clock.waitForSleepers(1)
        return rig.camera.frames.latest().value.flatMap(NumberedClips.read)?.number
    }

    /// 100 hours in 6000 pictures, one a minute (a keyframe an hour): accepted, its length right in the
    /// status, 99:00:00 cued at once (read from a keyframe near it, not the 5940 pictures before it), and the
    /// position and remaining time right to the millisecond there, playing.
    @Test func aHundredHourFileIsCuedNearItsEndAtOnceAndCountsItsTimeExactly() throws {
        try PlayerCameraTests.withClips { directory in
            let path = directory.appendingPathComponent("long.mp4").path
            try NumberedClips.make(path, frames: 6000, rate: "1/60", width: 160, height: 90, tint: 90, extra: ["-g", "60"])
            let probed = try MediaProbe.probe(URL(fileURLWithPath: path))
            #expect(probed.durationSeconds.map { abs($0 - 360_000) < 1 } == true, "ffprobe: \(String(describing: probed.durationSeconds)) s")
            try PlayerBackend.checkItems([PlayerSpec(name: "long", items: [path])])

            let rig = try PlayerCameraTests.Rig(PlayerSpec(name: "long", items: [path]))
            var status = try #require(rig.camera.player)
            #expect(status.positionMilliseconds == 0 && status.remainingMilliseconds == 360_000_000, "\(status)")

            // Picture 5940 is 99:00:00's (its bars: 5940 mod 256); the time as `cue --at 99:00:00` reads it.
            let at = try #require(PlayerSpec.milliseconds(at: "99:00:00"))
            // Counted from when the player's first read-ahead is counted (it sleeps on the clock after it).
            #expect(rig.clock.waitForSleepers(1, timeoutSeconds: 120), "the player did not settle")
            let decodedBefore = rig.camera.statistics.framesDecodedFull
            _ = rig.camera.transport(.cue(item: 0, at: at * 1_000_000))
            #expect(rig.clock.waitForSleepers(1, timeoutSeconds: 120), "the player did not take the cue")
            status = try #require(rig.camera.player)
            // Sought: from the keyframe at or before 99:00 (one at least every 60 pictures: `-g 60`; x264 adds
            // some at scene cuts), the pictures up to it and the read-ahead behind it decoded (12 here); read
            // forward instead, the 5940 pictures before it would be.
            let decoded = rig.camera.statistics.framesDecodedFull - decodedBefore
            #expect(decoded >= 1 && decoded <= UInt64(60 + PlayerCamera.queuedPictures), "cue --at 99:00:00 decoded \(decoded) pictures")
            #expect(status.state == .cued && status.positionMilliseconds == 356_400_000 && status.remainingMilliseconds == 3_600_000, "\(status)")
            #expect(Self.shown(rig) == 5940 % 256)

            // Playing: three ticks of 1/30 s on from there, to the millisecond (each picture lasts a minute).
            #expect(rig.play(ticks: 3).map { $0?.number } == Array(repeating: 5940 % 256, count: 3))
            status = try #require(rig.camera.player)
            let within = 99 * Self.hour + 2 * 1_000_000_000 / 30
            #expect(status.state == .playing && status.positionMilliseconds == Int(within / 1_000_000)
                    && status.remainingMilliseconds == Int((100 * Self.hour - within) / 1_000_000), "\(status)")

            // Seek to 99:59:30: the last picture (99:59:00), half a minute left.
            status = rig.camera.transport(.seek(to: 100 * Self.hour - 30_000_000_000))
            #expect(status.positionMilliseconds == 359_970_000 && status.remainingMilliseconds == 30_000, "\(status)")
            #expect(rig.play(ticks: 1).first??.number == 5999 % 256)
            #expect(rig.record.logs.withLock { $0.isEmpty }, "\(rig.record.logs.withLock { $0 })")
        }
    }

    /// Sought into the part a truncated file lost: the last good picture is held (the file read on to
    /// its break), and the log says so once, naming the file. An MKV (no index: libavformat's seek reads
    /// on to the break) and an MP4 whose index lists pictures that are not there (the seek finds
    /// nothing: read from the start instead).
    @Test func aSeekIntoATruncatedFilesMissingPartHoldsItsLastGoodFrameNamingTheFile() throws {
        try PlayerCameraTests.withClips { directory in
            for (name, extra) in [("cut.mkv", [String]()), ("cut.mp4", ["-movflags", "+faststart"])] {
                let whole = directory.appendingPathComponent("whole-" + name).path, cut = directory.appendingPathComponent(name).path
                try NumberedClips.make(whole, frames: 90, extra: extra)
                let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
                try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
                // Its last good picture: where playing it from the start stops.
                let played = try PlayerCameraTests.Rig(PlayerSpec(name: "cut", items: [cut]))
                let numbers = played.play(ticks: 90).compactMap { $0?.number }
                let last = try #require(numbers.last)
                #expect(last > 10 && last < 80, "\(name): \(last)")

                let rig = try PlayerCameraTests.Rig(PlayerSpec(name: "cut", items: [cut]))
                let status = rig.camera.transport(.cue(item: 0, at: 2_500_000_000))
                #expect(status.state == .cued, "\(name): \(status)")
                #expect(Self.shown(rig) == last, "\(name)")
                // Each said once, naming the file: the seek that found nothing (the MP4), the break.
                let logs = rig.record.logs.withLock { $0 }
                #expect(!logs.isEmpty && Set(logs).count == logs.count && logs.allSatisfy { $0.contains(cut) }, "\(name): \(logs)")
                #expect(logs.last?.contains("holding its last") == true, "\(name): \(logs)")
                // Played from there: it ends (truncated) on that picture.
                #expect(rig.play(ticks: 3).map { $0?.number } == [last, last, last], "\(name)")
                #expect(rig.camera.player?.state == .ended, "\(name)")
            }
        }
    }

    /// Seeking lands on the exact picture whichever side of a keyframe the time is (the index is by
    /// decoding time; x264's B-frames put a keyframe's picture after its decoding), in MP4 and MKV.
    @Test func aSeekLandsOnThePictureAtTheTimeAroundKeyframes() throws {
        try PlayerCameraTests.withClips { directory in
            for name in ["count.mp4", "count.mkv"] {
                let clip = directory.appendingPathComponent(name).path
                try NumberedClips.make(clip, frames: 150, tint: 90)
                let rig = try PlayerCameraTests.Rig(PlayerSpec(name: "deck", items: [clip]))
                // Either side of each keyframe (as ffprobe lists them; x264 places them about every 30), and between.
                let keyframes = try MediaProbe.probe(URL(fileURLWithPath: clip)).videoPackets.filter(\.isKeyframe)
                    .compactMap { $0.ptsMilliseconds.map { Int(($0 * 30 / 1000).rounded()) } }.filter { $0 > 0 }
                #expect(keyframes.count >= 3, "\(keyframes)")
                for number in keyframes.flatMap({ [$0 - 1, $0, $0 + 1] }) + [135] {
                    let status = rig.camera.transport(.cue(item: 0, at: Int64(number) * 1_000_000_000 / 30))
                    // MKV's times are in milliseconds: the picture's own (967 ms for 966.7) is within one.
                    #expect(Self.shown(rig) == number && abs(status.positionMilliseconds - number * 1000 / 30) <= 1, "\(name) \(number): \(status)")
                }
                #expect(rig.record.logs.withLock { $0.isEmpty }, "\(name): \(rig.record.logs.withLock { $0 })")
            }
        }
    }
}

/// The reader sought (`PlayerReader.seek`) gives the pictures and the sound from the keyframe before
/// the time; the deck drops what comes before the time and cuts the span across it there, so the sound
/// starts with the picture shown.
@Suite struct PlayerSeekSoundTests {
    @Test func aSeekGivesTheSoundFromTheKeyframeOnAndItIsCutAtTheTime() throws {
        try PlayerCameraTests.withClips { directory in
            let clip = directory.appendingPathComponent("tone.mp4").path
            try NumberedClips.make(clip, frames: 90, audio: true)
            let reader = PlayerReader(spec: PlayerSpec(name: "deck", items: [clip]), log: { _ in })
            reader.restart(at: 0)
            let time: Int64 = 1_500_000_000
            #expect(reader.seek(to: time))
            var entries: [PlayerEntry] = []
            func pictures() -> [Int64] { entries.compactMap { if case .picture = $0.content { $0.time } else { nil } } }
            while pictures().count < 20, !reader.isFinished { entries += reader.readMore() }
            // From the keyframe at or before 1.5 s (as ffprobe lists the packets) on.
            let keyframe = try MediaProbe.probe(URL(fileURLWithPath: clip)).videoPackets
                .filter { $0.isKeyframe }.compactMap(\.ptsMilliseconds).filter { $0 <= 1500 }.max() ?? 0
            #expect(keyframe > 0 && pictures().first.map { abs(Double($0) / 1e6 - keyframe) < 1 } == true, "\(keyframe): \(pictures())")
            let format = AudioFormat.program
            func end(_ entry: PlayerEntry) -> Int64 {
                guard case .audio(let samples) = entry.content else { return entry.time }
                return entry.time + Int64(samples.count / format.channels) * 1_000_000_000 / Int64(format.sampleRate)
            }
            let sounds = entries.filter { if case .audio = $0.content { true } else { false } }
            #expect(sounds.first.map { Double($0.time) / 1e6 <= keyframe + 50 } == true, "the sound from about the keyframe: \(sounds.map(\.time))")
            let across = try #require(sounds.first { $0.time < time && end($0) > time }, "a span across 1.5 s: \(sounds.map(\.time))")
            let cut = try #require(across.soundHeard(from: time, format: format))
            guard case .audio(let whole) = across.content, case .audio(let heard) = cut.content else { return }
            #expect(cut.time == time && whole.count - heard.count == Int((time - across.time) * 48_000 / 1_000_000_000) * format.channels,
                    "\(whole.count) -> \(heard.count)")
        }
    }
}

/// A file whose video codec this libavcodec cannot decode is refused at start (and on reload, which
/// checks the files the same way: `PlayerBackend.checkItems`), naming the file and the codec.
@Suite struct PlayerCodecTests {
    @Test func aCodecTheDecoderLacksIsRefusedNamingTheFileAndTheCodec() throws {
        try PlayerCameraTests.withClips { directory in
            let path = directory.appendingPathComponent("sting.avi").path
            try NumberedClips.makeUndecodable(path)
            let refusal = try #require(PlayerBadFileTests.refusal(path), "a file of a codec with no decoder was accepted")
            #expect(refusal.contains(path) && refusal.contains("intro") && refusal.contains("no avs2 decoder"), "\(refusal)")
            #expect(throws: CaptureError.self) { try PlayerBackend.checkItems([PlayerSpec(name: "intro", items: [path])]) }
        }
    }
}
