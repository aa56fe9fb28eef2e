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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-pull-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        try nginx.start()
        defer { nginx.stop() }
        let url = nginx.url(stream: "phone1")
        var publisher = try Self.publish(to: url, directory: directory)
        defer { _ = publisher.stop() }

        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (640, 360)
        options.configuration.http.enabled = false
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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-pull-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
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

        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (320, 180)
        options.configuration.http.enabled = false
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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-pull-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try NginxRTMP.freePort()
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (320, 180)
        options.configuration.http.enabled = false
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

/// A phone publishing to nginx-rtmp, which asks studio (`on_publish` to `/api/v1/ingest/rtmp`): its key
/// accepted, its camera connects and is cut to program; a wrong key refused by nginx on studio's 403
/// (no camera, `ingest_refused` without the key); the phone stops: its camera is lost at once
/// (`on_publish_done`) and waits without retrying; it publishes again: back.
@Suite(.serialized) struct RTMPIngestEndToEndTests {
    @Test func aPhoneWithItsKeyIsTakenAndAWrongKeyRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-ingest-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        let key = "7c1e2a9b5d3f"
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (320, 180)
        options.configuration.http.listen = ListenAddress(host: "127.0.0.1", port: 0)
        options.configuration.network.rtmp = RTMPIngestSettings(server: "rtmp://127.0.0.1:\(nginx.port)/live", keys: [("phone1", key)])
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let callback = "http://127.0.0.1:\(try #require(server.http).port)/api/v1/ingest/rtmp"
        nginx.applicationDirectives = "on_publish \(callback);\n on_publish_done \(callback);"
        try nginx.start()
        defer { nginx.stop() }
        let client = try ControlClient(socketPath: options.socketPath)
        func phone() -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "phone1" } }
        func events(_ kind: String) -> [JSONValue] { ((try? client.request("log"))?["events"]?.arrayValue ?? []).filter { $0["kind"]?.stringValue == kind } }

        // Before anyone publishes: listed, waiting, not trying.
        #expect(phone()?["network"]?["publishing"] == .bool(false), "\(phone() ?? .null)")
        let attemptsBefore = phone()?["network"]?["attempts"]?.doubleValue

        // A wrong key: nginx refuses it on studio's answer; ffmpeg fails.
        let intruder = try NetworkPullEndToEndTests.publish(to: nginx.url(stream: "not-the-key"), directory: directory)
        #expect(intruder.wait(timeout: 20) != nil, "nginx let a wrong key publish")
        #expect(waitUntil(seconds: 10, every: 0.1) { !events("ingest_refused").isEmpty }, "no ingest_refused")
        let refused = events("ingest_refused").first
        #expect(refused?["details"]?["reason"] == "unknown stream key" && "\(refused ?? .null)".contains("not-the-key") == false, "\(refused ?? .null)")
        #expect(phone()?["network"]?["attempts"]?.doubleValue == attemptsBefore, "a refused key made no connection")

        // The phone with its key: taken, live, cut to program.
        var publisher = try NetworkPullEndToEndTests.publish(to: nginx.url(stream: key), directory: directory)
        defer { _ = publisher.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { phone()?["state"] == "live" }, "\(phone() ?? .null); \(publisher.errorText()) \(nginx.log())")
        #expect(phone()?["network"]?["publishing"] == .bool(true))
        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        _ = try client.request("switch", arguments: ["source": .string("phone1")])
        let seen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: NetworkPullEndToEndTests.colour) < 30 }
        #expect(seen.map { $0.distance(to: NetworkPullEndToEndTests.colour) < 30 } == true, "\(seen.map { $0.description } ?? "no picture")")

        // The phone stops (ffmpeg ends its stream cleanly): publish_done, the camera lost, waiting.
        publisher.terminate(signal: SIGINT)
        _ = publisher.wait(timeout: 10)
        #expect(waitUntil(seconds: 10, every: 0.1) { phone()?["network"]?["publishing"] == .bool(false) && phone()?["state"] == "lost" },
                "\(phone() ?? .null)")
        // While the phone is away nothing is tried (2 s held: a pull that retried would have tried 2 or 3 times).
        let attemptsWhileAway = phone()?["network"]?["attempts"]?.doubleValue ?? -1
        let retried = waitUntil(seconds: 2, every: 0.1) { (phone()?["network"]?["attempts"]?.doubleValue ?? -1) != attemptsWhileAway }
        #expect(!retried, "tried while its phone was away: \(phone() ?? .null)")
        // Back: the same camera, live again, on a new connection.
        publisher = try NetworkPullEndToEndTests.publish(to: nginx.url(stream: key), directory: directory)
        #expect(waitUntil(seconds: 30, every: 0.1) { phone()?["state"] == "live" }, "\(phone() ?? .null)")
        #expect((phone()?["network"]?["attempts"]?.doubleValue ?? 0) > attemptsWhileAway, "a new connection for the new publish: \(phone() ?? .null)")
    }
}

/// The SRT listener (libsrt): two callers on one port, each its own camera by its stream id (plain and
/// the access-control form), with the listener's passphrase and a caller's own; an unknown id refused
/// at the handshake (`ingest_refused`, the caller's ffmpeg fails); a wrong passphrase never gets in;
/// a caller that restarts is taken back at once under its name.
@Suite(.serialized) struct SRTListenerEndToEndTests {
    static func caller(port: Int, streamID: String, passphrase: String, colour: String, directory: URL) throws -> ChildProcess {
        // The stream id raw in the URL's query: this ffmpeg (5.1) hands it to libsrt as written, without
        // percent-decoding, and takes it up to the next `&`.
        return try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re", "-f", "lavfi", "-i", "color=c=0x\(colour):s=320x180:r=30",
            "-f", "lavfi", "-i", "aevalsrc=0.1*sin(2*PI*1000*t)|0.1*sin(2*PI*1000*t):s=48000",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "96k", "-f", "mpegts",
            "srt://127.0.0.1:\(port)?streamid=\(streamID)&passphrase=\(passphrase)&latency=120000",
        ], outputDirectory: directory)
    }

    @Test func callersAreCamerasByStreamIDAndStrangersAreRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-srt-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try NginxRTMP.freePort()
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (320, 180)
        options.configuration.http.enabled = false
        options.configuration.network.srt = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(port)), passphrase: "change-me-please",
                                                            callers: [.init(name: "anna"), .init(name: "ben", passphrase: "ben-own-secret")])
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        func camera(_ name: String) -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"]?.stringValue == name } }
        let green = YUVColor(red: 32, green: 192, blue: 64)

        var anna = try Self.caller(port: port, streamID: "anna", passphrase: "change-me-please", colour: "E614A0", directory: directory)
        let ben = try Self.caller(port: port, streamID: "#!::r=ben,m=publish", passphrase: "ben-own-secret", colour: "20C040", directory: directory)
        defer { _ = anna.stop(); _ = ben.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { camera("anna")?["state"] == "live" && camera("ben")?["state"] == "live" },
                "anna: \(camera("anna") ?? .null) \(anna.errorText()); ben: \(camera("ben") ?? .null) \(ben.errorText())")
        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        _ = try client.request("switch", arguments: ["source": .string("anna")])
        let annaSeen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: NetworkPullEndToEndTests.colour) < 30 }
        #expect(annaSeen.map { $0.distance(to: NetworkPullEndToEndTests.colour) < 30 } == true, "\(annaSeen.map { $0.description } ?? "no picture")")
        _ = try client.request("switch", arguments: ["source": .string("ben")])
        let benSeen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: green) < 30 }
        #expect(benSeen.map { $0.distance(to: green) < 30 } == true, "\(benSeen.map { $0.description } ?? "no picture")")
        // libsrt's own figures are shown.
        #expect(waitUntil(seconds: 5, every: 0.1) { camera("ben")?["network"]?["srt"]?["rtt_ms"]?.doubleValue != nil }, "\(camera("ben") ?? .null)")

        // A stranger is refused at the handshake, with the reason in the history; so is a wrong passphrase.
        let mallory = try Self.caller(port: port, streamID: "mallory", passphrase: "change-me-please", colour: "000000", directory: directory)
        #expect(mallory.wait(timeout: 20) != nil, "a caller with an unknown stream id got in")
        #expect(waitUntil(seconds: 10, every: 0.1) {
            ((try? client.request("log"))?["events"]?.arrayValue ?? []).contains { $0["kind"] == "ingest_refused" && $0["details"]?["protocol"] == "srt" }
        })
        let impostor = try Self.caller(port: port, streamID: "ben", passphrase: "not-bens-secret", colour: "000000", directory: directory)
        #expect(impostor.wait(timeout: 20) != nil, "a caller with a wrong passphrase got in")
        #expect(benSeen != nil && camera("ben")?["state"] == "live", "ben is still the one on air")

        // anna's caller restarts: taken back at once under her name.
        anna.terminate(signal: SIGKILL)
        _ = anna.wait(timeout: 10)
        anna = try Self.caller(port: port, streamID: "anna", passphrase: "change-me-please", colour: "E614A0", directory: directory)
        let started = MonotonicClock.now()
        #expect(waitUntil(seconds: 20, every: 0.05) {
            let network = camera("anna")?["network"]
            return network?["connected"] == .bool(true) && (network?["attempts"]?.doubleValue ?? 0) >= 2 && camera("anna")?["state"] == "live"
        }, "\(camera("anna") ?? .null)")
        let back = Double(MonotonicClock.now() - started) / 1e9
        #expect(back < 10, "anna back after \(back) s")
    }
}

/// A/V sync of a network camera: a phone (ffmpeg to nginx-rtmp) sends a white frame and a 1 kHz beep at
/// the same instant every second; studio pulls it, cuts it to program and records the program; in the
/// recording each flash and its beep are within a frame and a half of each other (the median; the
/// picture rides the program's frame grid, so a single pair may fall a frame either way).
@Suite(.serialized) struct NetworkAVSyncTests {
    @Test func aPhonesFlashAndBeepStayTogetherOnProgram() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-avsync-\(UUID().uuidString.prefix(8))")
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        try nginx.start()
        defer { nginx.stop() }
        let url = nginx.url(stream: "phone1")
        let publisher = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re",
            "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30,drawbox=c=white:t=fill:enable='lt(mod(n,30),1)'",
            "-f", "lavfi", "-i", "aevalsrc='if(lt(mod(t,1),0.05),0.5*sin(2*PI*1000*t),0)|if(lt(mod(t,1),0.05),0.5*sin(2*PI*1000*t),0)':s=48000",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "128k", "-f", "flv", url,
        ], outputDirectory: directory)
        defer { _ = publisher.stop() }

        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (320, 180)
        options.configuration.http.enabled = false
        options.configuration.recordDirectory = recordings.path
        options.configuration.cameras.iso = .off
        options.configuration.audio.source = .silence
        options.configuration.network.pulls = [NetworkPull(name: "phone1", url: url, latencyMilliseconds: 200)]
        let server = try StudioServer(options: options)
        let client = try ControlClient(socketPath: options.socketPath)
        let live = waitUntil(seconds: 30, every: 0.1) {
            (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "phone1" }?["state"] == "live"
        }
        #expect(live, "publisher: \(publisher.errorText())")
        _ = try client.request("switch", arguments: ["source": .string("phone1")])
        let start = try client.request("status")["program"]?["frames"]?.doubleValue ?? 0
        #expect(waitUntil(seconds: 60, every: 0.2) { ((try? client.request("status"))?["program"]?["frames"]?.doubleValue ?? 0) > start + 300 })
        server.shutdown()

        let events = try PipeWireEndToEndTests.flashesAndBeeps(in: try AudioInputsEndToEndTests.programFile(in: recordings))
        let pairs = PipeWireEndToEndTests.pairs(events)
        try #require(pairs.count >= 5, "pairs \(pairs); flashes \(events.flashes); beeps \(events.beeps)")
        let offsets = pairs.map(\.offset).sorted()
        let median = offsets[offsets.count / 2]
        print("Network A/V sync, audio minus video (ms): median \(median), all \(offsets)")
        #expect(abs(median) <= 1.5 * 1000 / 30, "audio minus video (ms): \(offsets)")
    }
}

/// `studio doctor`'s network checks: the SRT listener's UDP port free or held, an RTMP server there or not.
@Suite struct NetworkDoctorTests {
    @Test func theListenersPortAndTheRTMPServerAreChecked() throws {
        let port = try NginxRTMP.freePort()
        let spec = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(port)), callers: [.init(name: "anna")])
        func checks(rtmp: String?) -> [DoctorCheck] {
            NetworkBackend().doctorChecks(BackendDoctorContext(program: .default, environment: [:], networkPulls: spec.pulls, srtListener: spec, rtmpServer: rtmp))
        }
        let free = checks(rtmp: nil)
        #expect(free.map(\.status) == [.ok, .ok] && free[1].message.contains("free"), "\(free.map(\.message))")
        // Held by another socket: a warning that says so.
        let holder = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(holder) }
        var address = NginxRTMP.loopbackAddress(port: port)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(bound == 0)
        let held = checks(rtmp: nil)
        #expect(held[1].status == .warning && held[1].message.contains("not free"), "\(held.map(\.message))")

        // An RTMP server: nobody there, then nginx.
        let nginx = try NginxRTMP()
        let missing = checks(rtmp: "rtmp://127.0.0.1:\(nginx.port)/live")
        #expect(missing.last?.status == .problem && missing.last?.message.contains("no RTMP server answers") == true, "\(missing.map(\.message))")
        try nginx.start()
        defer { nginx.stop() }
        let there = checks(rtmp: "rtmp://127.0.0.1:\(nginx.port)/live")
        #expect(there.last?.status == .ok, "\(there.map(\.message))")
    }
}
