import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `studio transcode` as the operator runs it: the real binary on real files (an MJPEG Matroska file
/// made by the ffmpeg CLI, starting at a program time like a camera that joined later), its exit codes,
/// its progress lines when stdout is not a terminal, and Ctrl-C.
@Suite struct TranscodeCommandTests {
    /// An MJPEG-in-Matroska file of `seconds` at 30 fps starting at program time 1.5 s, with AAC audio.
    static func mjpegFile(_ path: URL, seconds: Int, size: String = "320x180") throws {
        _ = try MediaProbe.run(MediaProbe.ffmpeg, [
            "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-t", String(seconds), "-c:v", "mjpeg", "-q:v", "3", "-c:a", "aac", "-output_ts_offset", "1.5", path.path,
        ])
    }

    /// The option string x264 writes into its first picture's SEI (`... options: cabac=1 ... subme=6 ...`).
    static func x264Options(_ file: URL) throws -> String {
        let bytes = try Data(contentsOf: file)
        guard let start = bytes.range(of: Data("options: ".utf8)) else { return "" }
        let tail = bytes[start.upperBound...].prefix(2000)
        return " " + String(decoding: tail.prefix { $0 != 0 }, as: UTF8.self) + " "
    }

    @Test func usageErrorsExit2AndFailuresExit1() throws {
        let studio = try StudioHarness()
        let none = try studio.run(["transcode"])
        #expect(none.status == 2 && none.error.contains("expected FILE... or --session N"), "\(none)")
        let codec = try studio.run(["transcode", "x.mkv", "--codec", "prores"])
        #expect(codec.status == 2 && codec.error.contains("--codec prores: no such codec; the codecs are h264, h264-intra"), "\(codec)")
        let crf = try studio.run(["transcode", "x.mkv", "--crf", "99"])
        #expect(crf.status == 2 && crf.error.contains("--crf 99"), "\(crf)")
        let preset = try studio.run(["transcode", "x.mkv", "--preset", "slowest"])
        #expect(preset.status == 2 && preset.error.contains("--preset slowest: expected an x264 preset (ultrafast, "), "\(preset)")
        let missing = studio.directory.appendingPathComponent("gone.mkv").path
        let result = try studio.run(["transcode", missing])
        #expect(result.status == 1 && result.error.contains("studio transcode: \(missing): no such file"), "\(result)")
        let nowhere = try studio.run(["transcode", missing, "--output", studio.directory.appendingPathComponent("nope").path])
        #expect(nowhere.status == 1 && nowhere.error.contains("no such directory"), "\(nowhere)")
        let help = try studio.run(["transcode", "--help"])
        #expect(help.status == 0 && help.output.contains("studio transcode [FILE]...") && help.output.contains("h264-intra"), "\(help.output)")
        #expect(try studio.run(["--help"]).output.contains("studio transcode"))
    }

    @Test func transcodesFilesPrintingProgressLinesWhenNotOnATerminal() throws {
        let studio = try StudioHarness()
        let input = studio.directory.appendingPathComponent("session-5-cam1.mkv")
        try Self.mjpegFile(input, seconds: 3)
        let out = studio.directory.appendingPathComponent("edit")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let result = try studio.run(["transcode", input.path, "--output", out.path])
        #expect(result.status == 0, "\(result)")
        let lines = result.output.split(separator: "\n").map(String.init)
        // `NAME P% N frames S.SSx ETA m:ss` at each tenth, then `... 100% N frames ... done in m:ss`, then what was written.
        let progress = lines.filter { $0.hasPrefix("session-5-cam1.mkv ") }
        let percents = progress.compactMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0.dropLast()) } }
        #expect(percents.count == progress.count && progress.count >= 3, "\(lines)")
        #expect(percents == percents.sorted() && percents.last == 100, "\(percents)")
        #expect(progress.last?.contains(" 90 frames ") == true && progress.last?.contains("done in") == true, "\(progress)")
        #expect(progress.dropLast().allSatisfy { $0.range(of: #" \d+ frames (\d+\.\d\dx|\?x) ETA (\d+:\d\d|\?)$"#, options: .regularExpression) != nil },
                "\(progress)")
        let output = out.appendingPathComponent("session-5-cam1.mov")
        #expect(lines.last == "wrote \(output.path): 90 frames, " + (lines.last?.components(separatedBy: "frames, ").last ?? ""), "\(lines)")
        let frames = try MediaProbe.videoFrames(output)
        #expect(frames.count == 90 && abs((frames.first?.ptsMilliseconds ?? 0) - 1500) < 1, "\(frames.first.map { "\($0)" } ?? "none")")
        #expect(try MediaProbe.probe(output).video?.codecName == "h264")
        // x264 writes its settings into the stream: the default preset, fast, searches subpixels at level 6.
        #expect(try Self.x264Options(output).contains(" subme=6 "))

        // Another preset, asked for: ultrafast's subme=0 in the file.
        let fastest = try studio.run(["transcode", input.path, "--output", studio.directory.path, "--preset", "ultrafast"])
        #expect(fastest.status == 0, "\(fastest)")
        #expect(try Self.x264Options(studio.directory.appendingPathComponent("session-5-cam1.mov")).contains(" subme=0 "))

        // Run again: the output exists and is kept; the H.264 file is refused, saying why.
        let again = try studio.run(["transcode", input.path, "--output", out.path])
        #expect(again.status == 1 && again.error.contains("already exists"), "\(again)")
        let h264 = try studio.run(["transcode", output.path, "--container", "mp4"])
        #expect(h264.status == 1 && h264.error.contains("already H.264: it needs no transcode"), "\(h264)")
    }

    @Test func interruptingRemovesThePartialFile() throws {
        let studio = try StudioHarness()
        let input = studio.directory.appendingPathComponent("session-6-cam1.mkv")
        try Self.mjpegFile(input, seconds: 40, size: "1280x720")
        let child = try ChildProcess(executable: StudioHarness.binary, arguments: ["transcode", input.path, "--codec", "h264-intra"],
                                     outputDirectory: studio.directory.appendingPathComponent("cli"))
        let partial = { (try? FileManager.default.contentsOfDirectory(atPath: studio.directory.path))?.contains { $0.contains(".partial-") } == true }
        let started = waitUntil(seconds: 60, every: 0.1) { partial() || child.hasExited }
        #expect(started && !child.hasExited, "the transcode was writing: \(child.outputText()) \(child.errorText())")
        child.terminate(signal: SIGINT)
        #expect(child.wait(timeout: 30) == .exited(130), "\(child.errorText())")
        #expect(child.errorText().contains("interrupted:") && child.errorText().contains("the partial file was removed"), "\(child.errorText())")
        let names = try FileManager.default.contentsOfDirectory(atPath: studio.directory.path)
        #expect(!names.contains { $0.contains(".partial-") || $0.hasSuffix(".mov") }, "\(names)")
    }
}
