import Foundation
import Testing
import Capture
import Control
import FrameDrawing
import StudioConfig
import StudioCore
import StudioServer
import StudioSystem
import TestSupport

/// Network cameras that send what a careful server must survive, each from a real ffmpeg over MPEG-TS
/// on UDP: mono 44.1 kHz sound (heard at its level on both channels), no sound at all (the picture
/// still cut to program), one picture a second with its sound (never taken for lost), and a picture
/// larger than the limit (refused with the reason, the studio running on); and a phone's FLV whose AVC
/// configuration is broken, through nginx-rtmp (every packet refused, said so, the studio running on).
@Suite(.serialized) struct NetworkBadInputTests {
    struct Run {
        let server: StudioServer
        let client: ControlClient
        let peer: ChildProcess
        let scratch: ScratchStudio
        func camera() -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "remote" } }
        func stop() {
            server.shutdown()
            _ = peer.stop()
            scratch.remove()
        }
    }

    static func run(video: String, audio: [String]) throws -> Run {
        let scratch = try ScratchStudio("odd")
        let directory = scratch.directory
        let port = try NginxRTMP.freePort()
        let peer = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: ["-v", "error", "-re", "-f", "lavfi", "-i", video] + audio + [
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p",
            "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316",
        ], outputDirectory: directory)
        var options = scratch.options()
        options.configuration.network.pulls = [NetworkPull(name: "remote", url: "udp://127.0.0.1:\(port)")]
        let server = try StudioServer(options: options)
        return Run(server: server, client: try ControlClient(socketPath: options.socketPath), peer: peer, scratch: scratch)
    }

    @Test func monoSoundAt44kIsHeardAtItsLevelOnBothChannels() throws {
        let run = try Self.run(video: "color=c=0xE614A0:s=320x180:r=30",
                               audio: ["-f", "lavfi", "-i", "aevalsrc=0.1*sin(2*PI*1000*t):s=44100:c=mono", "-c:a", "aac", "-ac", "1"])
        defer { run.stop() }
        var input: JSONValue?
        let heard = waitUntil(seconds: 30, every: 0.1) {
            input = (try? run.client.request("audio"))?["inputs"]?.arrayValue?.first { $0["name"] == "remote" }
            let peaks = input?["levels"]?["peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            return peaks.count == 2 && peaks.allSatisfy { abs($0 - 20 * log10(0.1)) < 1.5 }
        }
        #expect(heard, "\(input ?? .null); \(run.camera() ?? .null)")
        #expect(run.camera()?["network"]?["streams"]?.stringValue?.contains("44100 Hz 1 ch") == true, "\(run.camera() ?? .null)")
    }

    @Test func noSoundAtAllIsAPictureStill() throws {
        let run = try Self.run(video: "color=c=0xE614A0:s=320x180:r=30", audio: ["-an"])
        defer { run.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { run.camera()?["state"] == "live" }, "\(run.camera() ?? .null); \(run.peer.errorText())")
        let tiles = run.server.tiles
        #expect(tiles.subscribe("program"))
        _ = try run.client.request("switch", arguments: ["source": .string("remote")])
        let seen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: NetworkPullEndToEndTests.colour) < 30 }
        #expect(seen.map { $0.distance(to: NetworkPullEndToEndTests.colour) < 30 } == true, "\(seen.map { $0.description } ?? "no picture")")
        #expect(run.camera()?["network"]?["streams"]?.stringValue == "h264 320x180", "\(run.camera() ?? .null)")
    }

    @Test func onePictureASecondWithItsSoundIsNotTakenForLost() throws {
        let run = try Self.run(video: "color=c=0xE614A0:s=320x180:r=1",
                               audio: ["-f", "lavfi", "-i", "aevalsrc=0.1*sin(2*PI*1000*t):s=48000:c=stereo", "-c:a", "aac"])
        defer { run.stop() }
        // Its rhythm is learned from the gaps between its packets (the first gap, longer than the loss
        // timeout, may count as a loss): a few pictures in, it is live for good, its picture repeated.
        #expect(waitUntil(seconds: 30, every: 0.1) {
            run.camera()?["state"] == "live" && (run.camera()?["network"]?["pictures_in"]?.doubleValue ?? 0) >= 3
        }, "\(run.camera() ?? .null); \(run.peer.errorText())")
        // Five seconds of one picture a second: never lost, on the program's picture all along.
        let lost = waitUntil(seconds: 5, every: 0.05) { run.camera()?["state"] != "live" }
        #expect(!lost, "\(run.camera() ?? .null)")
        #expect((run.camera()?["network"]?["pictures_repeated"]?.doubleValue ?? 0) > 10, "\(run.camera() ?? .null)")
    }

    @Test func aPictureLargerThanTheLimitIsRefusedWithTheReason() throws {
        let run = try Self.run(video: "color=c=black:s=4200x2400:r=2", audio: ["-an"])
        defer { run.stop() }
        var network: JSONValue?
        let refused = waitUntil(seconds: 30, every: 0.1) {
            network = run.camera()?["network"]
            return network?["last_error"]?.stringValue?.contains("4200x2400, is larger than the limit") == true
        }
        #expect(refused, "\(network ?? .null); \(run.peer.errorText())")
        #expect(run.camera()?["state"] != "live")
        let cam1 = (try run.client.request("cameras"))["cameras"]?.arrayValue?.first { $0["name"] == "cam1" }
        #expect(cam1?["state"] == "live", "the studio runs on: \(cam1 ?? .null)")
    }
    /// A good FLV (H.264 from x264) whose AVC decoder configuration record is then broken: its NAL
    /// length size made 1 byte where the packets' lengths take 4, so libavcodec refuses every picture
    /// ("Invalid NAL unit size"), as from a phone whose encoder wrote a bad sequence header.
    static func flvWithBrokenAVCConfiguration(in directory: URL) throws -> URL {
        let good = directory.appendingPathComponent("good.flv"), broken = directory.appendingPathComponent("broken.flv")
        let encoder = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=30", "-t", "30",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", "-an", "-f", "flv", good.path,
        ], outputDirectory: directory.appendingPathComponent("encoder"))
        #expect(waitUntil(seconds: 60, every: 0.05) { encoder.hasExited }, "\(encoder.errorText())")
        var bytes = [UInt8](try Data(contentsOf: good))
        // FLV: a 9-byte header and a 4-byte size, then tags of 11 header bytes, the body and a 4-byte size.
        var tag = 13, record: Int?
        while tag + 11 <= bytes.count, record == nil {
            let size = Int(bytes[tag + 1]) << 16 | Int(bytes[tag + 2]) << 8 | Int(bytes[tag + 3]), body = tag + 11
            // A video tag (9) with AVCPacketType 0 carries the record, after 5 bytes (codec id, type, time).
            if bytes[tag] == 9, body + 1 < bytes.count, bytes[body + 1] == 0 { record = body + 5 }
            tag = body + size + 4
        }
        let start = try #require(record, "no AVC sequence header in \(good.path)")
        try #require(bytes[start] == 1 && bytes[start + 4] == 0xFF, "an AVC record with 4-byte lengths: \(bytes[start..<(start + 5)])")
        bytes[start + 4] = 0xFC
        try Data(bytes).write(to: broken)
        return broken
    }

    /// nginx-rtmp plays the file (its `play` directive: what a phone with that encoder would send).
    @Test func aBrokenAVCConfigurationIsSaidAndTheStudioRunsOn() throws {
        let scratch = try ScratchStudio("badavc")
        defer { scratch.remove() }
        let directory = scratch.directory
        let files = directory.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        _ = try Self.flvWithBrokenAVCConfiguration(in: files)
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        nginx.applicationDirectives = "play \(files.path);"
        try nginx.start()
        defer { nginx.stop() }
        var options = scratch.options()
        options.configuration.network.pulls = [NetworkPull(name: "phone1", url: nginx.url(stream: "broken.flv"))]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        func camera(_ name: String) -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == .string(name) } }

        var network: JSONValue?
        let said = waitUntil(seconds: 40, every: 0.1) {
            network = camera("phone1")?["network"]
            return network?["last_error"]?.stringValue?.contains("its video cannot be decoded") == true
        }
        #expect(said, "\(network ?? .null); nginx: \(nginx.log())")
        #expect(network?["last_error"]?.stringValue?.contains("Invalid data found") == true, "libavcodec's reason: \(network ?? .null)")
        #expect((network?["packets_undecodable"]?.doubleValue ?? 0) >= 60, "\(network ?? .null)")
        #expect((network?["pictures_in"]?.doubleValue ?? -1) == 0, "no picture came out: \(network ?? .null)")
        #expect(camera("phone1")?["state"] != "live", "\(camera("phone1") ?? .null)")
        let metrics = try client.request("metrics")["text"]?.stringValue ?? ""
        #expect(metrics.contains("studio_network_undecodable_packets_total{camera=\"phone1\"}"), "\(metrics.prefix(400))")
        #expect(camera("cam1")?["state"] == "live", "the studio runs on: \(camera("cam1") ?? .null)")
    }
}

/// A publisher whose pictures come in bursts (scripts/rig/udp-impair.py --burst-ms 400: everything sent
/// in 400 ms leaves together), with a jitter target longer than its bursts: its pictures are played
/// out evenly, nearly all shown, and it never goes lost.
@Suite(.serialized) struct NetworkBurstTests {
    @Test func aPublisherInBurstsIsPlayedOutEvenly() throws {
        let scratch = try ScratchStudio("bursts")
        defer { scratch.remove() }
        let directory = scratch.directory
        let port = try NginxRTMP.freePort(), relayPort = try NginxRTMP.freePort()
        let relay = try NetworkLossyLinkTests.relay(from: relayPort, to: port, ["--loss", "0", "--delay-ms", "0", "--jitter-ms", "0", "--burst-ms", "400"],
                                                    directory: directory)
        defer { _ = relay.stop() }
        let publisher = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=30",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-b:v", "300k", "-pix_fmt", "yuv420p",
            "-an", "-f", "mpegts", "udp://127.0.0.1:\(relayPort)?pkt_size=1316",
        ], outputDirectory: directory.appendingPathComponent("publisher"))
        defer { _ = publisher.stop() }
        var options = scratch.options()
        options.configuration.network.pulls = [NetworkPull(name: "remote", url: "udp://127.0.0.1:\(port)", latencyMilliseconds: 600)]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        func camera() -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "remote" } }
        #expect(waitUntil(seconds: 30, every: 0.1) { camera()?["state"] == "live" }, "\(camera() ?? .null); \(publisher.errorText())")
        _ = try client.request("switch", arguments: ["source": .string("remote")])
        // A few bursts to settle, then six seconds watched.
        #expect(waitUntil(seconds: 10, every: 0.1) { (camera()?["network"]?["pictures_in"]?.doubleValue ?? 0) >= 60 })
        func count(_ key: String) -> Double { camera()?["network"]?[key]?.doubleValue ?? -1 }
        let before = (inn: count("pictures_in"), shown: count("pictures_shown"), dropped: count("pictures_dropped"))
        var states: Set<String> = []
        _ = waitUntil(seconds: 6, every: 0.1) { states.insert(camera()?["state"]?.stringValue ?? "missing"); return false }
        let received = count("pictures_in") - before.inn, shown = count("pictures_shown") - before.shown
        let dropped = count("pictures_dropped") - before.dropped
        #expect(states == ["live"], "\(states)")
        #expect(received >= 150, "\(received) pictures in 6 s")
        #expect(shown >= 0.9 * received && dropped <= 0.1 * received, "in \(received), shown \(shown), dropped \(dropped): \(camera() ?? .null)")
    }
}
