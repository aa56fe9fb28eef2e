import Foundation
import Testing
import Synchronization
import Capture
import StudioCore
import TestSupport

/// Stingers from real clips made by ffmpeg here (`StingClips`), in each format with alpha (`StingerLoader`):
/// every picture grey with its luma telling its number, left half opaque, right half clear;
/// played over a 30 fps program as `StingerTests` checks (`checkStinger`). And the clips refused.
@Suite(.serialized) struct StingerClipTests {
    static func make(_ path: String, _ arguments: [String], seconds: Double = 1, size: String = "320x180") throws {
        try StingClips.make(path, arguments, seconds: seconds, size: size)
    }

    static func withDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-stinger-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    final class Lines: Sendable {
        let list = Mutex<[String]>([])
        func add(_ line: String) { list.withLock { $0.append(line) } }
        var all: [String] { list.withLock { $0 } }
    }

    static let formats = StingClips.formats

    @Test(arguments: formats.indices)
    func aClipWithAlphaPlaysOverTheProgramCuttingUnderneathAt400ms(_ index: Int) throws {
        let format = Self.formats[index]
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent(format.file).path
            try Self.make(path, format.arguments)
            let lines = Lines()
            let clip = try StingerLoader.load(path, width: 320, height: 180, log: lines.add)
            #expect(clip.pictures.count == 25 && clip.hasAlpha && lines.all.isEmpty, "\(format.file): \(clip.pictures.count) pictures, \(lines.all)")
            #expect(abs(clip.timing.length - 1_000_000_000) <= 1_000_000, "\(clip.timing.length)")
            try checkStinger(clip, frames: 30) { $0 * 25 / 30 }
        }
    }

    @Test func aClipWithoutAlphaIsAcceptedWithOneWarningAndCoversEverything() throws {
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent("opaque.mp4").path
            try Self.make(path, ["-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-crf", "10"])
            let lines = Lines()
            let clip = try StingerLoader.load(path, width: 320, height: 180, log: lines.add)
            #expect(!clip.hasAlpha && clip.pictures.count == 25)
            #expect(lines.all.count == 1 && lines.all[0].contains(path) && lines.all[0].contains("no alpha"), "\(lines.all)")
        }
    }

    @Test func missingEmptyTooLongClipsAndACutOutsideAreRefusedNamingTheFile() throws {
        try Self.withDirectory { directory in
            func refusal(_ specs: [TransitionSpec]) -> String? {
                do { _ = try StingerLoader.load(specs, width: 320, height: 180, log: { _ in }); return nil } catch { return error.description }
            }
            func sting(_ path: String, cut: Int = 400) -> TransitionSpec { TransitionSpec(kind: .stinger, clip: path, cutAtMilliseconds: cut) }
            let missing = directory.appendingPathComponent("nosuch.mov").path
            let gone = try #require(refusal([sting(missing)]), "a missing clip was accepted")
            #expect(gone.contains(missing) && gone.contains("stinger"), "\(gone)")

            let empty = directory.appendingPathComponent("empty.mkv").path
            let made = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
                "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30", "-frames:v", "0", "-c:v", "libx264", "-y", empty,
            ])
            try #require(made.wait(timeout: 60) == .exited(0))
            let noFrames = try #require(refusal([sting(empty)]), "a clip of 0 frames was accepted")
            #expect(noFrames.contains(empty) && noFrames.contains("0 frames"), "\(noFrames)")

            let long = directory.appendingPathComponent("long.mov").path
            try Self.make(long, ["-pix_fmt", "argb", "-c:v", "qtrle"], seconds: 11, size: "64x36")
            let tooLong = try #require(refusal([sting(long)]), "an 11 s stinger was accepted")
            #expect(tooLong.contains(long) && tooLong.contains("10 s"), "\(tooLong)")

            // Memory: a clip whose pictures would hold more than the bound (here 10 of them) is refused.
            let heavy = directory.appendingPathComponent("heavy.mov").path
            try Self.make(heavy, ["-pix_fmt", "argb", "-c:v", "qtrle"], size: "64x36")
            do {
                _ = try StingerLoader.load(heavy, width: 64, height: 36, maximumBytes: 10 * StingerClip.bytes(perPictureOf: 64, 36), log: { _ in })
                Issue.record("a stinger over its memory bound was accepted")
            } catch {
                #expect("\(error)".contains(heavy) && "\(error)".contains("more than 10 pictures at 64x36"), "\(error)")
            }

            let good = directory.appendingPathComponent("good.mov").path
            try Self.make(good, ["-pix_fmt", "argb", "-c:v", "qtrle"], size: "64x36")
            #expect(refusal([sting(good, cut: 999), TransitionSpec(kind: .mix)]) == nil)
            let outside = try #require(refusal([sting(good), sting(good, cut: 1000)]), "a cut past the clip was accepted")
            #expect(outside.contains(good) && outside.contains("cut_at_ms 1000") && outside.contains("1000 ms"), "\(outside)")
        }
    }

    /// Its sound decoded with it, at the program's format from its first picture on: a 1 kHz beep from
    /// picture 6 of a 30 fps clip starts on sample 6 / 30 s (9600) of the clip's sound, silence before;
    /// the sound lasts the clip. A clip without sound has none.
    @Test func aClipsSoundIsDecodedWithItFromItsFirstPictureAndAClipWithoutHasNone() throws {
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent("beep.mov").path
            try StingClips.make(path, ["-pix_fmt", "argb", "-c:v", "qtrle"], fps: 30, beep: 6)
            let clip = try StingerLoader.load(path, width: 320, height: 180, log: { _ in })
            let sound = try #require(clip.sound, "no sound decoded")
            let channels = AudioFormat.program.channels
            #expect(sound.count == 48_000 * channels, "\(sound.count) samples")
            let onset = try #require(sound.firstIndex { abs($0) > 0.05 }) / channels
            #expect(abs(onset - 9_600) <= 2, "the beep starts on frame \(onset) of the sound, not 9600")
            let silent = try StingerLoader.load(path.replacingOccurrences(of: "beep", with: "silent"), width: 320, height: 180, log: { _ in },
                                                making: { try StingClips.make($0, ["-pix_fmt", "argb", "-c:v", "qtrle"], fps: 30) })
            #expect(silent.sound == nil)
        }
    }
}

extension StingerLoader {
    /// `path` made by `making`, then loaded.
    static func load(_ path: String, width: Int, height: Int, log: (String) -> Void, making: (String) throws -> Void) throws -> StingerClip {
        try making(path)
        return try load(path, width: width, height: height, log: log)
    }
}
