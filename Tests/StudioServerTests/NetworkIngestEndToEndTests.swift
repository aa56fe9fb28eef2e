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

/// A phone publishing to nginx-rtmp, which asks studio (`on_publish` to `/api/v1/ingest/rtmp`): its key
/// accepted, its camera connects and is cut to program; a wrong key refused by nginx on studio's 403
/// (no camera, `ingest_refused` without the key); the phone stops: its camera is lost at once
/// (`on_publish_done`) and waits without retrying; it publishes again: back.
@Suite(.serialized) struct RTMPIngestEndToEndTests {
    @Test func aPhoneWithItsKeyIsTakenAndAWrongKeyRefused() throws {
        let scratch = try ScratchStudio("ingest")
        defer { scratch.remove() }
        let directory = scratch.directory
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        let key = "7c1e2a9b5d3f"
        var options = scratch.options(httpToken: nil, cameras: 1)
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
            "srt://127.0.0.1:\(port)?streamid=\(streamID)\(passphrase.isEmpty ? "" : "&passphrase=" + passphrase)&latency=120000",
        ], outputDirectory: directory)
    }

    @Test func callersAreCamerasByStreamIDAndStrangersAreRefused() throws {
        let scratch = try ScratchStudio("srt")
        defer { scratch.remove() }
        let directory = scratch.directory
        let port = try NginxRTMP.freePort()
        var options = scratch.options()
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
    /// A phone (ffmpeg publishing FLV to `url`) sending a white frame and a 1 kHz beep together at each
    /// second of its own time; `readRate` above 1 runs its clock fast against this PC's (`-readrate`).
    static func flashAndBeepPhone(to url: String, directory: URL, readRate: Double = 1) throws -> ChildProcess {
        try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-readrate", String(format: "%.6f", readRate),
            "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30,drawbox=c=white:t=fill:enable='lt(mod(n,30),1)'",
            "-f", "lavfi", "-i", "aevalsrc='if(lt(mod(t,1),0.05),0.5*sin(2*PI*1000*t),0)|if(lt(mod(t,1),0.05),0.5*sin(2*PI*1000*t),0)':s=48000",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "128k", "-f", "flv", url,
        ], outputDirectory: directory)
    }

    @Test func aPhonesFlashAndBeepStayTogetherOnProgram() throws {
        let scratch = try ScratchStudio("avsync")
        defer { scratch.remove() }
        let directory = scratch.directory
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        try nginx.start()
        defer { nginx.stop() }
        let url = nginx.url(stream: "phone1")
        let publisher = try Self.flashAndBeepPhone(to: url, directory: directory)
        defer { _ = publisher.stop() }

        var options = scratch.options()
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
        try PipeWireEndToEndTests.expectProgramInSync("Network", server: server, client: client, recordings: recordings, frames: 300)
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

/// Garbage on the SRT listener's port (random datagrams, some shaped like SRT handshakes) changes
/// nothing: no camera, no crash, and a real caller gets in right after.
@Suite(.serialized) struct SRTGarbageTests {
    @Test func garbageOnThePortIsIgnoredAndACallerStillGetsIn() throws {
        let scratch = try ScratchStudio("srt")
        defer { scratch.remove() }
        let directory = scratch.directory
        let port = try NginxRTMP.freePort()
        var options = scratch.options()
        options.configuration.network.srt = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(port)), callers: [.init(name: "anna")])
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)

        // 2000 datagrams: random bytes, and random bytes behind a control packet's first bit and a
        // handshake's type (what a confused or hostile sender would try).
        let sender = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(sender) }
        var address = NginxRTMP.loopbackAddress(port: port)
        var generator = SystemRandomNumberGenerator()
        for index in 0..<2000 {
            var bytes = (0..<Int.random(in: 1...1500, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if index % 2 == 0, bytes.count >= 4 { bytes[0] = 0x80; bytes[1] = 0x00; bytes[2] = 0x00; bytes[3] = 0x00 }
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(sender, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        let anna = try SRTListenerEndToEndTests.caller(port: port, streamID: "anna", passphrase: "", colour: "E614A0", directory: directory)
        defer { _ = anna.stop() }
        var listed: JSONValue?
        #expect(waitUntil(seconds: 30, every: 0.1) {
            listed = (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "anna" }
            return listed?["state"] == "live"
        }, "\(listed ?? .null); \(anna.errorText())")
        let cameras = try client.request("cameras")["cameras"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(cameras.sorted() == ["anna", "cam1"])
    }
}
