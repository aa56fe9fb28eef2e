#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import StudioCore
import StudioSystem
import MediaSupport
import Encoding
import Output
import Transcoding
import TestSupport

/// `Transcoder` on real files: a passthrough ISO as the server writes one (the recordings' Matroska
/// muxer, the camera's JPEG frames as keyframe packets on the program's frame grid, the program's AAC
/// audio), transcoded with real libavcodec and x264 and checked with ffprobe.
@Suite(.serialized) struct TranscoderTests {
    init() { FFmpegLogging.configure(verbose: false) }

    /// An ISO of `frames` JPEG frames at `rate` starting at program frame `firstFrame` (a camera that
    /// joined later), `gap` frames missing in the middle (frames its queue refused), with the program's
    /// AAC audio from program time 0; made with the same muxer as a recording (Matroska).
    static func writeIso(_ path: String, width: Int = 320, height: Int = 180, rate: Rational = Rational(30),
                         firstFrame: Int64 = 45, frames: Int = 60, gap: Range<Int64>? = 20..<23, audio: Bool = true) throws {
        var problem = ""
        let jpeg = try #require(JPEGEncoder(width: width, height: height, rate: rate, problem: &problem), "\(problem)")
        let video = StreamDescription(kind: .video, codec: .mjpeg, width: width, height: height, frameRate: rate, bitRate: 0,
                                      extradata: [], encoderName: "passthrough")
        let aac = try AACEncoder()
        let writer = try MediaFileWriter(path: path, format: "matroska", video: video, audio: audio ? aac.streamDescription : nil)
        let tick = MediaTime(count: 1, rate: rate)
        var audioSamples: Int64 = 0
        var written = 0
        var n = firstFrame
        while written < frames {
            defer { n += 1 }
            if let gap, gap.contains(n - firstFrame) { continue }
            let pts = MediaTime(count: n, rate: rate)
            // The program audio up to this frame's end.
            if audio {
                let until = (n + 1) * 48_000 * Int64(rate.denominator) / Int64(rate.numerator)
                for packet in try aac.encode(SyntheticMedia.audio(firstSample: audioSamples, count: Int(until - audioSamples))) {
                    try writer.write(packet)
                }
                audioSamples = until
            }
            let colour = [SyntheticMedia.red, SyntheticMedia.green, SyntheticMedia.blue][written % 3]
            let picture = SyntheticMedia.frame(width: width, height: height, yuv: colour, index: written)
            let bytes = try #require(jpeg.encode(picture))
            try writer.write(EncodedPacket(kind: .video, data: bytes, pts: pts, dts: pts, duration: tick, isKeyframe: true))
            written += 1
        }
        if audio { for packet in try aac.flush() { try writer.write(packet) } }
        try writer.finish()
    }

    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("transcode-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func anMJPEGIsoBecomesH264WithTheSameFramesAtTheSameTimes() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("session-3-cam1.mkv")
        try Self.writeIso(input.path)
        let output = Transcoder.outputPath(for: input.path, directory: nil, container: .mov)
        #expect(output == directory.appendingPathComponent("session-3-cam1.mov").path)

        var reports: [TranscodeProgress] = []
        let summary = try Transcoder().run(input: input.path, output: output, progress: { reports.append($0) })
        #expect(summary.frames == 60 && summary.framesRepeated == 0 && summary.audioPackets > 0, "\(summary)")

        let source = try MediaProbe.probe(input), result = try MediaProbe.probe(URL(fileURLWithPath: output))
        #expect(result.video?.codecName == "h264" && result.video?.width == 320 && result.video?.height == 180, "\(result.streams)")
        #expect(result.audio?.codecName == "aac", "the program audio is copied: \(result.streams)")
        #expect(result.formatName.contains("mov"), "\(result.formatName)")
        // Every frame decodes and keeps its time: the same first pts (program time 1.5 s), the same gap, the same
        // last. (Matroska stores whole milliseconds, MOV the grid itself in 1/16000 s: 1533 ms is 1533.3125 ms.)
        let before = try MediaProbe.videoFrames(input).map { $0.ptsMilliseconds ?? -1 }
        let after = try MediaProbe.videoFrames(URL(fileURLWithPath: output)).map { $0.ptsMilliseconds ?? -1 }
        #expect(before.count == 60 && after.count == before.count, "\(before.count) frames in, \(after.count) out")
        #expect(zip(before, after).allSatisfy { abs($0 - $1) < 1 }, "pts in \(before) out \(after)")
        #expect(abs((after.first ?? 0) - 1500) < 0.5, "starts at program time 1.5 s: \(after.first ?? -1)")
        // The audio packets keep their times too.
        let audioBefore = source.audioPackets.compactMap(\.ptsMilliseconds), audioAfter = result.audioPackets.compactMap(\.ptsMilliseconds)
        #expect(audioBefore.count == audioAfter.count && zip(audioBefore, audioAfter).allSatisfy { abs($0 - $1) < 0.5 },
                "audio pts in \(audioBefore.prefix(5))... out \(audioAfter.prefix(5))...")
        // A keyframe a second, no B-frames (every frame I or P).
        let pictures = try MediaProbe.videoFrames(URL(fileURLWithPath: output))
        #expect(pictures.filter(\.isKeyframe).count == 2 && pictures.allSatisfy { $0.pictureType != "B" },
                "\(pictures.map(\.pictureType).joined())")
        // The pictures are the ones sent: red, green, blue in turn.
        let colours = try MediaProbe.tinyFrames(URL(fileURLWithPath: output)).map(MediaProbe.averageColour)
        #expect(colours.count == 60 && colours[0].red > 150 && colours[1].green > 100 && colours[2].blue > 150, "\(colours.prefix(3))")

        // Progress: after every frame, growing, ending finished at 100 %.
        #expect(reports.count == 61 && reports.last?.finished == true && reports.last?.percent == 100, "\(reports.last.map(\.line) ?? "")")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.doneSeconds <= $1.doneSeconds && $0.frames <= $1.frames })
        #expect(reports.dropLast().allSatisfy { ($0.percent ?? -1) >= 0 && ($0.percent ?? 101) <= 100 })
        // No temporary file is left beside the output.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == ["session-3-cam1.mkv", "session-3-cam1.mov"], "\(left)")
    }

    @Test func allIntraAndMP4AndAFileWithoutAudio() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("cam2.mkv")
        try Self.writeIso(input.path, rate: Rational(25), firstFrame: 0, frames: 30, gap: nil, audio: false)
        let settings = TranscodeSettings(codec: .h264Intra, container: .mp4)
        let output = Transcoder.outputPath(for: input.path, directory: directory.path, container: .mp4)
        let summary = try Transcoder(settings: settings).run(input: input.path, output: output)
        #expect(summary.frames == 30 && summary.audioPackets == 0)
        let frames = try MediaProbe.videoFrames(URL(fileURLWithPath: output))
        #expect(frames.count == 30 && frames.allSatisfy(\.isKeyframe), "\(frames.map(\.pictureType).joined())")
        #expect(abs((frames.last?.ptsMilliseconds ?? 0) - 29 * 40) < 0.5)
        #expect(try MediaProbe.probe(URL(fileURLWithPath: output)).audio == nil)
    }

    @Test func badInputIsRefusedInTheOperatorsWordsAndLeavesNothing() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let transcoder = Transcoder()
        func refusal(_ input: String, _ output: String? = nil) -> TranscodeError? {
            do {
                _ = try transcoder.run(input: input, output: output ?? input + ".mov")
                return nil
            } catch { return error }
        }
        let missing = directory.appendingPathComponent("nothing.mkv").path
        #expect(refusal(missing) == .missing(missing))

        let text = directory.appendingPathComponent("notes.mkv")
        try "not a video\n".write(to: text, atomically: true, encoding: .utf8)
        guard case .unreadable(let path, let reason)? = refusal(text.path) else {
            Issue.record("a text file: \(String(describing: refusal(text.path)))"); return
        }
        #expect(path == text.path && !reason.isEmpty)

        // An encoded (H.264) ISO needs no transcode.
        let h264 = directory.appendingPathComponent("encoded.mkv")
        let encoder = try X264Encoder(settings: VideoEncoderSettings(width: 64, height: 36, frameRate: Rational(30), preset: "ultrafast"))
        let writer = try MediaFileWriter(path: h264.path, format: "matroska", video: encoder.streamDescription, audio: nil)
        for n in 0..<5 {
            let frame = SyntheticMedia.frame(width: 64, height: 36, yuv: SyntheticMedia.red, index: n)
            for packet in try encoder.encode(frame, pts: MediaTime(count: Int64(n), rate: Rational(30)), forceKeyframe: n == 0) {
                try writer.write(packet)
            }
        }
        for packet in try encoder.flush() { try writer.write(packet) }
        try writer.finish()
        let refused = refusal(h264.path)
        #expect(refused == .alreadyH264(h264.path))
        #expect(refused?.description.contains("already H.264: it needs no transcode") == true)

        // An output that exists is not overwritten; a directory that cannot be written is said so.
        let iso = directory.appendingPathComponent("session-1-cam1.mkv")
        try Self.writeIso(iso.path, frames: 10, gap: nil)
        let existing = directory.appendingPathComponent("taken.mov")
        try "mine".write(to: existing, atomically: true, encoding: .utf8)
        #expect(refusal(iso.path, existing.path) == .outputExists(existing.path))
        #expect(try String(contentsOf: existing, encoding: .utf8) == "mine")
        if getuid() != 0 {
            let locked = directory.appendingPathComponent("locked")
            try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o500])
            let into = locked.appendingPathComponent("x.mov").path
            #expect(refusal(iso.path, into) == .outputNotWritable(locked.path, reason: "Permission denied"))
        }
        let nowhere = directory.appendingPathComponent("no/such/dir/x.mov").path
        guard case .outputNotWritable? = refusal(iso.path, nowhere) else {
            Issue.record("no such directory: \(String(describing: refusal(iso.path, nowhere)))"); return
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "no partial files: \(left)")
    }

    @Test func cancellingRemovesThePartialFile() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("session-2-cam1.mkv")
        try Self.writeIso(input.path, frames: 60, gap: nil)
        let output = directory.appendingPathComponent("session-2-cam1.mov").path
        var frames = 0
        var sawPartial = false
        #expect(throws: TranscodeError.cancelled(output)) {
            _ = try Transcoder().run(input: input.path, output: output, progress: { progress in
                frames = progress.frames
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                if names.contains(where: { $0.hasPrefix(".session-2-cam1.mov.partial-") }) { sawPartial = true }
            }, isCancelled: { frames >= 30 })
        }
        #expect(sawPartial, "the output was being written beside the final name")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == ["session-2-cam1.mkv"], "only the input is left: \(names)")
    }

    /// A full disk (a real tmpfs too small for the output): a clear error, nothing left on it.
    @Test(.enabled(if: ScratchTmpfs.unavailableReason == nil, "needs root and permission to mount a tmpfs"))
    func aFullDiskIsSaidSoAndLeavesNothing() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("session-4-cam1.mkv")
        try Self.writeIso(input.path, width: 640, height: 360, frames: 60, gap: nil)
        let disk = try ScratchTmpfs(kibibytes: 64)
        defer { disk.unmount() }
        let output = disk.directory.appendingPathComponent("session-4-cam1.mov").path
        let settings = TranscodeSettings(codec: .h264Intra, quality: 0)
        #expect(throws: TranscodeError.diskFull(output)) { _ = try Transcoder(settings: settings).run(input: input.path, output: output) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.directory.path).isEmpty)
    }

    @Test func progressLinesAndBar() {
        var progress = TranscodeProgress(file: "session-1-cam1.mkv", frames: 120, doneSeconds: 4, totalSeconds: 10, elapsedSeconds: 2,
                                         finished: false)
        #expect(progress.line == "session-1-cam1.mkv 40% 120 frames 2.00x ETA 0:03")
        #expect(progress.bar(width: 10) == "session-1-cam1.mkv [####------]  40%  120 frames  2.00x  ETA 0:03")
        progress.totalSeconds = nil
        #expect(progress.line == "session-1-cam1.mkv ?% 120 frames 2.00x ETA ?")
        progress.finished = true
        progress.elapsedSeconds = 61
        #expect(progress.line.hasSuffix("100% 120 frames 0.07x done in 1:01"))
        #expect(TranscodeProgress.clock(3725) == "1:02:05")
    }
}
