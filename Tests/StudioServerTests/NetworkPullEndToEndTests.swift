import Foundation
import Testing
import Capture
import Control
import HTTPConsole
import FrameDrawing
import StudioConfig
import StudioCore
@testable import StudioServer
import StudioSystem
import TestSupport

/// A phone pushing FLV to nginx-rtmp (ffmpeg as the phone: H.264 + AAC), pulled by studio as a camera
/// from `network.pull`: named by its entry, cut to program (its colour seen there), its sound mixed as
/// an input named like it; the publisher killed: the camera is lost (the slate on program); the
/// publisher back: the camera is back by itself, with its own picture again.
@Suite(.serialized) struct NetworkPullEndToEndTests {
    static let colour = YUVColor(red: 230, green: 20, blue: 160)

    /// ffmpeg publishing 320x180 frames of `colour` at 30 fps and a 1 kHz stereo sine of amplitude 0.1
    /// (peaks at -20 dBFS) at 44.1 kHz, as a phone would (H.264 baseline, AAC), in real time.
    static func publish(to url: String, directory: URL) throws -> ChildProcess {
        try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re",
            "-f", "lavfi", "-i", "color=c=0xE614A0:s=320x180:r=30",
            "-f", "lavfi", "-i", "aevalsrc=0.1*sin(2*PI*1000*t)|0.1*sin(2*PI*1000*t):s=44100",
            "-c:v", "libx264", "-profile:v", "baseline", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "96k", "-f", "flv", url,
        ], outputDirectory: directory)
    }

    @Test func aPhoneOnRTMPIsPulledCutToProgramMixedLostAndBack() throws {
        let scratch = try ScratchStudio("pull")
        defer { scratch.remove() }
        let directory = scratch.directory
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        try nginx.start()
        defer { nginx.stop() }
        let url = nginx.url(stream: "phone1")
        var publisher = try Self.publish(to: url, directory: directory)
        defer { _ = publisher.stop() }

        var options = scratch.options(cameraSize: (640, 360))
        options.configuration.network.pulls = [NetworkPull(name: "phone1", url: url, latencyMilliseconds: 200)]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)

        // Listed under its entry's name, from the network backend, its URL's key masked.
        let cameras = try client.request("cameras")["cameras"]?.arrayValue ?? []
        let phone = try #require(cameras.first { $0["name"] == "phone1" }, "\(cameras)")
        #expect(phone["backend"] == "network" && phone["identity"] == "network:phone1", "\(phone)")
        #expect(phone["display_name"]?.stringValue?.contains("phone1") == false, "the stream key is masked: \(phone)")

        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        let live = waitUntil(seconds: 30, every: 0.1) {
            let listed = (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "phone1" }
            return listed?["state"] == "live"
        }
        #expect(live, "the pulled camera never went live; publisher: \(publisher.errorText()) nginx: \(nginx.log())")
        _ = try client.request("switch", arguments: ["source": .string("phone1")])
        let seen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: Self.colour) < 30 }
        #expect(seen.map { $0.distance(to: Self.colour) < 30 } == true, "program after the cut: \(seen.map { $0.description } ?? "no picture")")

        // Its sound, resampled from 44.1 kHz, mixed at the sine's level as an input named like it.
        var input: JSONValue?
        let heard = waitUntil(seconds: 20, every: 0.1) {
            input = (try? client.request("audio"))?["inputs"]?.arrayValue?.first { $0["name"] == "phone1" }
            let peaks = input?["levels"]?["peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            return peaks.count == 2 && peaks.allSatisfy { abs($0 - 20 * log10(0.1)) < 1.5 }
        }
        #expect(heard, "the phone's sound in the mixer: \(input ?? .null)")

        // Seen and measured: the protocol, what the stream carries, the buffer at its target.
        var network: JSONValue = .null
        let flowing = waitUntil(seconds: 10, every: 0.1) {
            network = (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "phone1" }?["network"] ?? .null
            return (network["pictures_shown"]?.doubleValue ?? 0) > 30
        }
        #expect(flowing, "\(network)")
        #expect(network["protocol"] == "rtmp" && network["connected"] == .bool(true), "\(network)")
        #expect(network["streams"]?.stringValue?.contains("h264 320x180") == true, "\(network)")
        #expect(network["streams"]?.stringValue?.contains("aac 44100 Hz 2 ch") == true, "\(network)")
        #expect((network["bit_rate"]?.doubleValue ?? 0) > 0 && network["last_packet_age_ms"]?.doubleValue != nil, "\(network)")
        let buffer = network["buffer_ms"]?.doubleValue ?? -1
        #expect(buffer >= 0 && buffer <= 200, "\(network)")
        let metrics = try client.request("metrics")["text"]?.stringValue ?? ""
        #expect(metrics.contains("studio_network_connected{camera=\"phone1\"} 1"), "\(metrics.split(separator: "\n").filter { $0.contains("network") })")
        #expect(metrics.contains("studio_network_buffer_target_seconds{camera=\"phone1\"} 0.2"))

        // The phone stops: lost, the slate on program (not its last picture).
        publisher.terminate(signal: SIGKILL)
        _ = publisher.wait(timeout: 10)
        let lost = waitUntil(seconds: 20, every: 0.1) {
            let events = (try? client.request("log"))?["events"]?.arrayValue ?? []
            return events.contains { $0["kind"] == "camera_lost" && $0["camera"] == "phone1" }
        }
        #expect(lost, "no camera_lost for phone1")
        let slate = SolidColourBackendTests.programColour(tiles) { $0.distance(to: Self.colour) > 60 }
        #expect(slate.map { $0.distance(to: Self.colour) > 60 } == true, "program while the phone is away: \(slate.map { $0.description } ?? "no picture")")

        // The phone comes back: the camera is back by itself and its picture is on program again.
        publisher = try Self.publish(to: url, directory: directory)
        let back = waitUntil(seconds: 40, every: 0.2) {
            let events = (try? client.request("log"))?["events"]?.arrayValue ?? []
            return events.contains { $0["kind"] == "camera_returned" && $0["camera"] == "phone1" }
        }
        #expect(back, "no camera_returned for phone1; publisher: \(publisher.errorText())")
        let again = SolidColourBackendTests.programColour(tiles) { $0.distance(to: Self.colour) < 30 }
        #expect(again.map { $0.distance(to: Self.colour) < 30 } == true, "program after the phone came back: \(again.map { $0.description } ?? "no picture")")
    }

    /// The ways in besides RTMP, each from a real peer: an IP camera (gst-rtsp-server, 48 kHz AAC over
    /// RTP), an SRT listener (ffmpeg, MPEG-TS; studio calls it), MPEG-TS over UDP (ffmpeg sends, studio
    /// receives). Each is cut to program (its colour seen there) and heard in the mixer at its level.
    @Test(arguments: ["rtsp", "srt", "udp"])
    func aCameraIsPulledOver(_ protocolName: String) throws {
        let scratch = try ScratchStudio("pull")
        defer { scratch.remove() }
        let directory = scratch.directory
        let port = try NginxRTMP.freePort()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let mpegts = ["-v", "error", "-re", "-f", "lavfi", "-i", "color=c=0xE614A0:s=320x180:r=30",
                      "-f", "lavfi", "-i", "aevalsrc=0.1*sin(2*PI*1000*t)|0.1*sin(2*PI*1000*t):s=48000",
                      "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p",
                      "-c:a", "aac", "-b:a", "96k", "-f", "mpegts"]
        let url: String
        let peer: ChildProcess
        switch protocolName {
        case "rtsp":
            peer = try ChildProcess(executable: "/usr/bin/python3", arguments: [root.appendingPathComponent("scripts/rig/rtsp-camera.py").path, String(port), "E614A0"],
                                    outputDirectory: directory)
            url = "rtsp://127.0.0.1:\(port)/stream1"
            #expect(waitUntil(seconds: 20, every: 0.05) { NginxRTMP.accepts(port: port) || peer.hasExited }, "rtsp-camera: \(peer.errorText())")
        case "srt":
            peer = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: mpegts + ["srt://127.0.0.1:\(port)?mode=listener&latency=120000"],
                                    outputDirectory: directory)
            url = "srt://127.0.0.1:\(port)?latency=120000"
        default:
            peer = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: mpegts + ["udp://127.0.0.1:\(port)?pkt_size=1316"], outputDirectory: directory)
            url = "udp://127.0.0.1:\(port)"
        }
        defer { _ = peer.stop() }

        var options = scratch.options()
        options.configuration.network.pulls = [NetworkPull(name: "remote", url: url)]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        var listed: JSONValue?
        let live = waitUntil(seconds: 30, every: 0.1) {
            listed = (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "remote" }
            return listed?["state"] == "live"
        }
        #expect(live, "\(listed ?? .null); peer: \(peer.errorText())")
        #expect(listed?["network"]?["protocol"]?.stringValue == protocolName, "\(listed ?? .null)")
        _ = try client.request("switch", arguments: ["source": .string("remote")])
        let seen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: Self.colour) < 30 }
        #expect(seen.map { $0.distance(to: Self.colour) < 30 } == true, "program after the cut: \(seen.map { $0.description } ?? "no picture")")
        var input: JSONValue?
        let heard = waitUntil(seconds: 20, every: 0.1) {
            input = (try? client.request("audio"))?["inputs"]?.arrayValue?.first { $0["name"] == "remote" }
            let peaks = input?["levels"]?["peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            return peaks.count == 2 && peaks.allSatisfy { abs($0 - 20 * log10(0.1)) < 1.5 }
        }
        #expect(heard, "the remote camera's sound in the mixer: \(input ?? .null)")
    }

    /// A pull whose server is not there: listed, lost, tried again and again with the reason in its
    /// status; the rest of the studio runs on.
    @Test func aPullWithNobodyThereIsListedLostAndTriedAgain() throws {
        let scratch = try ScratchStudio("pull")
        defer { scratch.remove() }
        let port = try NginxRTMP.freePort()
        var options = scratch.options()
        options.configuration.network.pulls = [NetworkPull(name: "ptz1", url: "rtsp://127.0.0.1:\(port)/stream1")]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        var ptz: JSONValue?
        let retried = waitUntil(seconds: 20, every: 0.1) {
            ptz = (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "ptz1" }
            return (ptz?["network"]?["attempts"]?.doubleValue ?? 0) >= 2 && ptz?["state"] == "lost"
        }
        #expect(retried, "\(ptz ?? .null)")
        let network = ptz?["network"]
        #expect(network?["connected"] == .bool(false) && network?["protocol"] == "rtsp", "\(network ?? .null)")
        #expect(network?["last_error"]?.stringValue?.contains("Connection refused") == true, "\(network ?? .null)")
        #expect(network?["next_try_ms"]?.doubleValue != nil, "\(network ?? .null)")
        // The studio runs on: the program goes on, the test camera is live.
        let cam1 = try client.request("cameras")["cameras"]?.arrayValue?.first { $0["name"] == "cam1" }
        #expect(cam1?["state"] == "live", "\(cam1 ?? .null)")
        let frames = try client.request("status")["program"]?["frames"]?.doubleValue ?? 0
        #expect(waitUntil(seconds: 10, every: 0.1) { ((try? client.request("status"))?["program"]?["frames"]?.doubleValue ?? 0) > frames + 10 })
    }
}

/// docs/config.md's table of pull protocols is `PullKind.all`: names, schemes, default latencies.
@Suite struct PullKindTableTests {
    @Test func theConfigReferenceListsEveryPullKind() throws {
        #expect(try DocumentTables.firstCells(of: "docs/config.md", section: "Network cameras") == PullKind.all.map(\.name))
        let schemes = try DocumentTables.cells(of: "docs/config.md", section: "Network cameras", column: 1)
        #expect(schemes.map { $0.components(separatedBy: ", ") } == PullKind.all.map(\.schemes))
        let latencies = try DocumentTables.cells(of: "docs/config.md", section: "Network cameras", column: 2)
        #expect(latencies == PullKind.all.map { String($0.defaultLatencyMilliseconds) })
    }
}
