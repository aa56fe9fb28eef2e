import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A network camera's ISO is the publisher's own H.264 copied into the file (issue 30, item 4): a real
/// `studio serve` recording, a real publisher (ffmpeg sending a file it encoded with x264 and AAC, `-c
/// copy`: every packet it sends is known) to studio's SRT listener (MPEG-TS, Annex B) or through
/// nginx-rtmp (FLV, avcC). After the show the ISO holds the publisher's packets, NAL unit for NAL unit,
/// a run of them from a keyframe with none missing, at the publisher's size and with their spacing, from
/// the program time the camera came on air to the program's end, with the program's AAC as its first
/// audio track and the publisher's own AAC packets as its second; `studio export
/// --iso` points the camera's clip at that file, inside what it holds. Real time: in the serialized set.
@Suite(.serialized) struct NetworkIsoEndToEndTests {
    /// Encodes the publisher's stream once: 640x360 at 30 fps, a keyframe every 30 frames, 20 s, x264 (or
    /// the `video` encoder asked for) and AAC in MPEG-TS.
    static func source(in directory: URL, size: String = "640x360", video: [String] = ["-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency"]) throws -> URL {
        let file = directory.appendingPathComponent("source-\(size).ts")
        let encoder = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-f", "lavfi", "-i", "testsrc2=s=\(size):r=30:d=20",
            "-f", "lavfi", "-i", "sine=f=1000:r=48000:d=20",
            ] + video + ["-g", "30", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "96k", "-f", "mpegts", file.path,
        ], outputDirectory: directory.appendingPathComponent("encode"))
        #expect(encoder.wait(timeout: 60) == .exited(0), "\(encoder.errorText())")
        return file
    }

    /// A packet's NAL units without their framing (Annex B start codes, or 4-byte lengths).
    static func nalUnits(_ bytes: [UInt8]) -> [[UInt8]] {
        if bytes.count > 4, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 || (bytes[2] == 0 && bytes[3] == 1) {
            var units: [[UInt8]] = [], start: Int?, index = 0
            while index + 2 < bytes.count {
                if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                    if let start { units.append(trimmed(Array(bytes[start..<index]))) }
                    index += 3
                    start = index
                } else { index += 1 }
            }
            if let start { units.append(Array(bytes[start...])) }
            return units
        }
        var units: [[UInt8]] = [], index = 0
        while index + 4 <= bytes.count {
            let length = Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard index + 4 + length <= bytes.count else { break }
            units.append(Array(bytes[(index + 4)..<(index + 4 + length)]))
            index += 4 + length
        }
        return units
    }

    /// What libavcodec says decoding the file's video (empty: it decodes without an error).
    static func decodingErrors(_ path: String) throws -> String {
        let decoder = try ChildProcess(executable: MediaProbe.ffprobe, arguments: ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts",
                                                                                 "-of", "csv", path],
                                       outputDirectory: URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("decode-\(UUID().uuidString.prefix(4))"))
        #expect(decoder.wait(timeout: 60) == .exited(0))
        return decoder.errorText()
    }

    /// The file's audio tracks as ffprobe reads them: codec, title, whether it is the default.
    static func audioTracks(_ path: String) throws -> [(codec: String, title: String?, isDefault: Bool)] {
        let probe = try ChildProcess(executable: MediaProbe.ffprobe, arguments: [
            "-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name:stream_tags=title:stream_disposition=default", "-of", "json", path,
        ], outputDirectory: URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("probe-\(UUID().uuidString.prefix(4))"))
        #expect(probe.wait(timeout: 30) == .exited(0))
        return (try JSONValue(parsing: probe.outputText())["streams"]?.arrayValue ?? []).map {
            ($0["codec_name"]?.stringValue ?? "", $0["tags"]?["title"]?.stringValue, $0["disposition"]?["default"]?.intValue == 1)
        }
    }

    /// A start code's leading zero belongs to the next unit's framing (4-byte start codes).
    private static func trimmed(_ unit: [UInt8]) -> [UInt8] { unit.last == 0 ? Array(unit.dropLast()) : unit }

    /// Records `camera` while `publish` sends `source`, cut to program, then checks the ISO against it.
    static func recordAndCheck(camera: String, codec: String = "h264", config: String, extraArguments: [String] = [], source: URL, studio: StudioHarness,
                               publish: () throws -> ChildProcess) throws {
        let recordings = studio.directory.appendingPathComponent("recordings")
        let configFile = studio.directory.appendingPathComponent("studio.yaml")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        try studio.serve(["--config", configFile.path, "--record", recordings.path, "--cameras", "1", "--camera-size", "320x180"]
                         + extraArguments + EndToEndTests.smallProgram)
        let session = try #require(try studio.status()["session"]?.intValue)
        func programMs() -> Int { (try? studio.status())?["program"]?["program_ms"]?.intValue ?? -1 }
        func state() -> String? { ((try? studio.json(["cameras"]))?["cameras"]?.arrayValue ?? []).first { $0["name"]?.stringValue == camera }?["state"]?.stringValue }
        func feed() -> JSONValue? { ((try? studio.status())?["iso"]?.arrayValue ?? []).first { $0["camera"]?.stringValue == camera } }

        let publisher = try publish()
        defer { _ = publisher.stop() }
        #expect(waitUntil(seconds: 30, every: 0.05) { state() == "live" }, "\(camera): \(state() ?? "missing"); \(publisher.errorText())")
        let onAir = programMs()
        #expect(waitUntil(seconds: 30, every: 0.1) { (feed()?["frames_encoded"]?.intValue ?? 0) > 60 }, "\(feed() ?? .null)")
        let cut = try #require(try studio.json(["switch", camera])["program_ms"]?.intValue)
        #expect(waitUntil(seconds: 30, every: 0.1) { programMs() > cut + 3000 }, "the program runs on after the cut")
        let status = feed()
        #expect(status?["mode"] == "passthrough" && status?["codec"]?.stringValue == codec && status?["encoder"] == "none (passthrough)"
                && status?["size"] == "640x360", "\(status ?? .null)")
        // Nothing refused; set aside only what came before the first keyframe (a stream joined between keyframes).
        let skipped = status?["frames_skipped"]?.intValue ?? -1
        #expect(skipped >= 0 && skipped < 30, "the copy kept up and started at the first keyframe: \(status ?? .null)")
        // Its own sound copied too (about 47 AAC packets a second), counted in the status.
        #expect((status?["sound_packets"]?.intValue ?? 0) > 100, "\(status ?? .null)")
        #expect(studio.stopServer() == .exited(0))

        // The ISO file of the camera, and the program's.
        let rows = try JSONValue(parsing: try studio.run(["recordings", String(session), "--json", "--db", studio.database]).output)
        let isoPath = try #require((rows["recordings"]?.arrayValue ?? []).first { $0["kind"] == "iso" && $0["camera"]?.stringValue == camera }?["path"]?.stringValue,
                                   "\(rows)")
        let iso = try DemuxedPackets(path: isoPath)
        let sent = try DemuxedPackets(path: source.path)
        #expect(iso.video?.codecName == codec && iso.video?.width == 640 && iso.video?.height == 360, "\(iso.streams)")
        #expect(iso.readError == nil, "\(iso.readError ?? "")")

        // Two AAC tracks: the program's sound (the default), then the camera's own, the publisher's packets
        // as it sent them (from MPEG-TS without their ADTS headers), a run of them with none missing.
        let tracks = try Self.audioTracks(isoPath)
        #expect(tracks.map(\.codec) == ["aac", "aac"] && tracks.map(\.isDefault) == [true, false]
                && tracks.last?.title == "the camera's own sound", "\(tracks)")
        let sentSound = try #require(sent.streams.firstIndex { !$0.isVideo && $0.codecName == "aac" })
        let sound = iso.packets.filter { $0.streamIndex == 2 }.map(\.bytes)
        let sentPayloads = sent.packets.filter { $0.streamIndex == sentSound }.map { Array($0.bytes.dropFirst($0.bytes[1] & 1 == 1 ? 7 : 9)) }
        try #require(sound.count > 100, "\(sound.count) packets of the camera's own sound")
        let soundStart = try #require(sentPayloads.firstIndex(of: sound[0]), "the sound's first packet is not one the publisher sent")
        let soundMismatched = sound.indices.filter { soundStart + $0 >= sentPayloads.count || sound[$0] != sentPayloads[soundStart + $0] }
        #expect(soundMismatched.isEmpty, "\(soundMismatched.count) of \(sound.count) sound packets differ from the publisher's")

        let errors = try Self.decodingErrors(isoPath)
        #expect(errors == "", "the ISO decodes cleanly: \(errors)")

        // The publisher's own packets, from a keyframe, none missing, none changed.
        let copied = iso.videoPackets, original = sent.videoPackets
        try #require(copied.count > 90, "\(copied.count) packets")
        #expect(copied.first?.isKeyframe == true)
        let units = original.map { nalUnits($0.bytes) }
        let first = try #require(units.firstIndex(of: nalUnits(copied[0].bytes)), "the ISO's first packet is not one the publisher sent")
        // (The last one may be cut short: the one arriving when the server stopped, which the demuxer gave as it was.)
        let mismatched = copied.indices.dropLast().filter { first + $0 >= units.count || nalUnits(copied[$0].bytes) != units[first + $0] }
        #expect(mismatched.isEmpty, "\(mismatched.count) of \(copied.count) packets differ from the publisher's, the first at \(mismatched.first ?? -1)")
        #expect(zip(copied, original[first...]).allSatisfy { $0.isKeyframe == $1.isKeyframe })

        // Their spacing is the publisher's within each group of pictures (to the millisecond the file keeps);
        // between groups the mapping to program time moves at keyframes only, as the jitter buffer's does (a
        // few ms on an idle machine).
        let copiedPts = copied.compactMap(\.ptsMilliseconds), sentPts = original[first...].compactMap(\.ptsMilliseconds)
        try #require(copiedPts.count == copied.count)
        let withinGroups = copied.indices.dropFirst().filter { !copied[$0].isKeyframe }
            .map { abs((copiedPts[$0] - copiedPts[$0 - 1]) - (sentPts[$0] - sentPts[$0 - 1])) }.max() ?? 0
        #expect(withinGroups <= 1.5, "within a group the copy's spacing strays \(withinGroups) ms from the publisher's")
        let deviation = zip(copiedPts, sentPts).map { abs(($0 - copiedPts[0]) - ($1 - sentPts[0])) }.max() ?? .infinity
        #expect(deviation <= 500, "the copy's times stray \(deviation) ms from the publisher's")

        // The sound keeps the sync it came with: on the pictures' mapping (within the mapping's moves).
        let soundPts = iso.packets.filter { $0.streamIndex == 2 }.compactMap(\.ptsMilliseconds)
        let sentSoundPts = sent.packets.filter { $0.streamIndex == sentSound }.compactMap(\.ptsMilliseconds)
        let sync = (soundPts[0] - sentSoundPts[soundStart]) - (copiedPts[0] - sentPts[0])
        #expect(abs(sync) <= deviation + 2, "the camera's own sound is \(sync) ms off its pictures in the ISO")

        // On the program's timeline: from when the camera came on air to the program's last frame.
        let programLast = try DemuxedPackets(path: recordings.appendingPathComponent("session-\(session)-program.mkv").path)
            .videoPackets.compactMap(\.ptsMilliseconds).max() ?? -1
        let isoFirst = copiedPts.min() ?? -1, isoLast = copiedPts.max() ?? -1
        #expect(abs(isoFirst - Double(onAir)) < 500, "the ISO starts at \(isoFirst) ms, the camera came on air at \(onAir) ms")
        #expect(isoLast >= programLast - 100, "the ISO ends at \(isoLast) ms, the program at \(programLast) ms")
        #expect(abs((isoLast - isoFirst) - (programLast - Double(onAir))) < 600,
                "on air \(programLast - Double(onAir)) ms, the ISO holds \(isoLast - isoFirst) ms")

        // The cut list: the camera's clip starts at the cut, in its ISO file, which holds it.
        let rate = 30
        func frame(_ milliseconds: Double) -> Int { Int((milliseconds * Double(rate) / 1000).rounded()) }
        let exported = try studio.run(["export", String(session), "--format", "edl", "--iso", "--db", studio.database])
        try #require(exported.status == 0, "\(exported)")
        let edl = try CMX3600(parsing: exported.output, base: rate)
        let line = try #require(edl.lines.first { $0.reel == camera.uppercased() }, "\(edl.lines)")
        // Source times on the file's timecode (its TIMECODE tag): program times moved by the same frames.
        let moved = try IsoTimecode.shift(ofFile: isoPath, firstMilliseconds: isoFirst, rate: rate)
        #expect(line.recordIn == frame(Double(cut)) && line.sourceIn == line.recordIn + moved, "\(line), the file's timecode \(moved) frames on")
        #expect(edl.comments[line.number]?.contains("SOURCE FILE: \(isoPath)") == true, "\(edl.comments[line.number] ?? [])")
        #expect(line.sourceIn - moved >= frame(isoFirst) && line.sourceOut - moved - 1 <= frame(isoLast) + 1, "\(line) against \(isoFirst)-\(isoLast) ms")
        print("\(camera)'s ISO: \(copied.count) packets copied from the publisher's #\(first) (\(skipped) set aside before it), \(isoFirst)-\(isoLast) ms "
              + "(on air at \(onAir), program to \(programLast)); spacing within \(withinGroups) ms in a group, \(deviation) ms overall; "
              + "\(sound.count) sound packets from the publisher's #\(soundStart), \(sync) ms off the pictures")
    }

    @Test func anSRTCallersIsoIsItsOwnH264() throws {
        let studio = try StudioHarness()
        let source = try Self.source(in: studio.directory)
        let port = try NginxRTMP.freePort()
        let config = "network:\n  srt:\n    listen: 127.0.0.1:\(port)\n    callers: [anna]\n"
        try Self.recordAndCheck(camera: "anna", config: config, source: source, studio: studio) {
            try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
                "-v", "error", "-re", "-i", source.path, "-c", "copy", "-f", "mpegts",
                "srt://127.0.0.1:\(port)?streamid=anna&latency=120000&pkt_size=1316",
            ], outputDirectory: studio.directory.appendingPathComponent("caller"))
        }
    }

    @Test func aPhonesIsoThroughNginxIsItsOwnH264() throws {
        let studio = try StudioHarness()
        let source = try Self.source(in: studio.directory)
        let nginx = try NginxRTMP(prefix: studio.directory.appendingPathComponent("nginx"))
        let httpPort = try NginxRTMP.freePort()
        let callback = "http://127.0.0.1:\(httpPort)/api/v1/ingest/rtmp"
        nginx.applicationDirectives = "on_publish \(callback);\n on_publish_done \(callback);"
        try nginx.start()
        defer { nginx.stop() }
        let key = "7c1e2a9b5d3f"
        let config = "network:\n  rtmp:\n    server: rtmp://127.0.0.1:\(nginx.port)/live\n    keys: { phone1: \(key) }\n"
        try Self.recordAndCheck(camera: "phone1", config: config, extraArguments: ["--http", "127.0.0.1:\(httpPort)"], source: source,
                                studio: studio) {
            try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: ["-v", "error", "-re", "-i", source.path, "-c", "copy", "-f", "flv", nginx.url(stream: key)],
                             outputDirectory: studio.directory.appendingPathComponent("phone"))
        }
    }

    /// A caller that goes away and calls again (its timestamps from the start again: a new connection,
    /// a new epoch): the ISO goes on in the same file from the new stream's first keyframe, after a gap
    /// (the time it was away); its times only grow and it decodes without an error.
    @Test func aCallerThatRestartsGoesOnInTheSameFileFromAKeyframe() throws {
        let studio = try StudioHarness()
        let source = try Self.source(in: studio.directory)
        let port = try NginxRTMP.freePort()
        let configFile = studio.directory.appendingPathComponent("studio.yaml")
        try "network:\n  srt:\n    listen: 127.0.0.1:\(port)\n    callers: [anna]\n".write(to: configFile, atomically: true, encoding: .utf8)
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--config", configFile.path, "--record", recordings.path, "--cameras", "1", "--camera-size", "320x180"] + EndToEndTests.smallProgram)
        func state() -> String? { ((try? studio.json(["cameras"]))?["cameras"]?.arrayValue ?? []).first { $0["name"] == "anna" }?["state"]?.stringValue }
        func copied() -> Int { ((try? studio.status())?["iso"]?.arrayValue ?? []).first { $0["camera"] == "anna" }?["frames_encoded"]?.intValue ?? 0 }
        func call(_ name: String) throws -> ChildProcess {
            try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
                "-v", "error", "-re", "-i", source.path, "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)?streamid=anna&latency=120000&pkt_size=1316",
            ], outputDirectory: studio.directory.appendingPathComponent(name))
        }
        let first = try call("first")
        defer { _ = first.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { copied() > 60 }, "\(state() ?? "missing"); \(first.errorText())")
        _ = first.stop()
        #expect(waitUntil(seconds: 10, every: 0.05) { state() == "lost" }, "\(state() ?? "missing")")
        let before = copied()
        let second = try call("second")
        defer { _ = second.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { copied() > before + 60 }, "\(state() ?? "missing"); \(second.errorText())")
        #expect(studio.stopServer() == .exited(0))

        let path = recordings.appendingPathComponent("session-1-anna.mkv").path
        #expect(!FileManager.default.fileExists(atPath: recordings.appendingPathComponent("session-1-anna-g1.mkv").path), "one file: the stream did not change")
        let errors = try Self.decodingErrors(path)
        #expect(errors == "", "the ISO decodes cleanly: \(errors)")
        let packets = try MediaProbe.probe(URL(fileURLWithPath: path)).videoPackets
        let dts = packets.compactMap(\.dtsMilliseconds)
        #expect(dts.count == packets.count && zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 }, "the times only grow")
        // Two runs, each from a keyframe, with a gap of at least the time away between them.
        let gaps = zip(packets, packets.dropFirst()).enumerated().filter { ($1.1.ptsMilliseconds ?? 0) - ($1.0.ptsMilliseconds ?? 0) > 500 }
        #expect(gaps.count == 1, "\(gaps.map { ($0.element.0.ptsMilliseconds ?? -1, $0.element.1.ptsMilliseconds ?? -1) })")
        if let gap = gaps.first {
            #expect(packets[0].isKeyframe && gap.element.1.isKeyframe, "each run starts at a keyframe")
            print("anna restarted: \(gap.offset + 1) packets, a gap \(gap.element.0.ptsMilliseconds ?? -1)-\(gap.element.1.ptsMilliseconds ?? -1) ms, then \(packets.count - gap.offset - 1)")
        }
    }

    /// The same for an SRT caller sending HEVC (x265): copied as it came, `hevc` in the file.
    @Test func anSRTCallersHEVCIsCopiedToo() throws {
        let studio = try StudioHarness()
        let source = try Self.source(in: studio.directory, video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:bframes=0"])
        let port = try NginxRTMP.freePort()
        let config = "network:\n  srt:\n    listen: 127.0.0.1:\(port)\n    callers: [anna]\n"
        try Self.recordAndCheck(camera: "anna", codec: "hevc", config: config, source: source, studio: studio) {
            try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
                "-v", "error", "-re", "-i", source.path, "-c", "copy", "-f", "mpegts",
                "srt://127.0.0.1:\(port)?streamid=anna&latency=120000&pkt_size=1316",
            ], outputDirectory: studio.directory.appendingPathComponent("caller"))
        }
    }

    /// A caller whose video cannot be copied (MPEG-2, with AAC): its ISO encodes its pictures with H.264 instead.
    @Test func aStreamThatCannotBeCopiedIsEncoded() throws {
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        let configFile = studio.directory.appendingPathComponent("studio.yaml")
        try "network:\n  srt:\n    listen: 127.0.0.1:\(port)\n    callers: [anna]\n".write(to: configFile, atomically: true, encoding: .utf8)
        try studio.serve(["--config", configFile.path, "--record", studio.directory.appendingPathComponent("recordings").path,
                          "--cameras", "1", "--camera-size", "320x180"] + EndToEndTests.smallProgram)
        func feed() -> JSONValue? { ((try? studio.status())?["iso"]?.arrayValue ?? []).first { $0["camera"] == "anna" } }
        let caller = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=30", "-f", "lavfi", "-i", "sine=f=1000:r=48000",
            "-c:v", "mpeg2video", "-g", "30", "-c:a", "aac", "-f", "mpegts",
            "srt://127.0.0.1:\(port)?streamid=anna&latency=120000&pkt_size=1316",
        ], outputDirectory: studio.directory.appendingPathComponent("caller"))
        defer { _ = caller.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { feed()?["mode"] == "encode" && (feed()?["frames_encoded"]?.intValue ?? 0) > 30 },
                "\(feed() ?? .null); \(caller.errorText())")
        #expect(feed()?["codec"] == "h264" && feed()?["size"] == "640x360", "\(feed() ?? .null)")
    }

    /// A caller that calls again at another size (a new connection, new codec parameters): the ISO's
    /// next file, `-g1.mkv`, holds the new stream from its first keyframe; both files decode cleanly.
    @Test func aCallerBackAtAnotherSizeGoesOnInTheNextFile() throws {
        let studio = try StudioHarness()
        let large = try Self.source(in: studio.directory), small = try Self.source(in: studio.directory, size: "480x270")
        let port = try NginxRTMP.freePort()
        let configFile = studio.directory.appendingPathComponent("studio.yaml")
        try "network:\n  srt:\n    listen: 127.0.0.1:\(port)\n    callers: [anna]\n".write(to: configFile, atomically: true, encoding: .utf8)
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--config", configFile.path, "--record", recordings.path, "--cameras", "1", "--camera-size", "320x180"] + EndToEndTests.smallProgram)
        func feed() -> JSONValue? { ((try? studio.status())?["iso"]?.arrayValue ?? []).first { $0["camera"] == "anna" } }
        func call(_ source: URL) throws -> ChildProcess {
            try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
                "-v", "error", "-re", "-i", source.path, "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)?streamid=anna&latency=120000&pkt_size=1316",
            ], outputDirectory: studio.directory.appendingPathComponent("caller-\(UUID().uuidString.prefix(4))"))
        }
        let first = try call(large)
        defer { _ = first.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { (feed()?["frames_encoded"]?.intValue ?? 0) > 60 }, "\(feed() ?? .null); \(first.errorText())")
        _ = first.stop()
        let second = try call(small)
        defer { _ = second.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { feed()?["size"] == "480x270" && feed()?["generation"] == 1 && (feed()?["frames_encoded"]?.intValue ?? 0) > 150 },
                "\(feed() ?? .null); \(second.errorText())")
        #expect(studio.stopServer() == .exited(0))

        for (name, width) in [("session-1-anna.mkv", 640), ("session-1-anna-g1.mkv", 480)] {
            let path = recordings.appendingPathComponent(name).path
            let file = try DemuxedPackets(path: path)
            #expect(file.video?.codecName == "h264" && file.video?.width == width && file.videoPackets.first?.isKeyframe == true, "\(name): \(file.streams)")
            #expect(file.videoPackets.count > 30, "\(name): \(file.videoPackets.count) packets")
            let errors = try Self.decodingErrors(path)
            #expect(errors == "", "\(name) decodes cleanly: \(errors)")
        }
    }
}
