import Foundation
import Testing
import Capture
import Control
import Encoding
import FrameDrawing
import StudioCore
@testable import StudioServer
import StudioSystem
import TestSupport

/// How a studio decodes its network cameras, end to end: an SRT publisher (ffmpeg, MPEG-TS with B-frames
/// nothing refers to) in H.264 and in HEVC; while the camera is not on program its reference pictures
/// only are decoded (`cameras`: demand not full, pictures skipped, the decoder saying so); a cut to it is
/// not held (no held ticks) and puts its colour on program, after which every picture is decoded; the
/// decoder is named in `cameras` and `metrics`. VAAPI where the machine has a render node, else software
/// with the reason.
@Suite(.serialized) struct NetworkDecodeEndToEndTests {
    static let colour = YUVColor(red: 230, green: 20, blue: 160)

    static func publish(port: Int, codec: String, directory: URL) throws -> ChildProcess {
        let video = codec == "hevc"
            ? ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "bframes=2:b-adapt=0:b-pyramid=0:keyint=30:log-level=error"]
            : ["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-x264-params", "b-adapt=0:b-pyramid=none:keyint=30"]
        return try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re", "-f", "lavfi", "-i", "color=c=0xE614A0:s=320x180:r=30",
        ] + video + ["-pix_fmt", "yuv420p", "-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener&latency=120000"], outputDirectory: directory)
    }

    @Test(arguments: ["h264", "hevc"])
    func anUnseenCameraDecodesLessAndACutToItIsOnTime(_ codec: String) throws {
        let scratch = try ScratchStudio("netdecode")
        defer { scratch.remove() }
        let port = try NginxRTMP.freePort()
        let publisher = try Self.publish(port: port, codec: codec, directory: scratch.directory)
        defer { _ = publisher.stop() }
        var options = scratch.options()
        options.configuration.network.pulls = [NetworkPull(name: "far", url: "srt://127.0.0.1:\(port)?latency=120000", latencyMilliseconds: 200)]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        func far() -> JSONValue { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "far" } ?? .null }

        // Not on program: only its reference pictures, the others counted as skipped.
        var listed: JSONValue = .null
        let skipping = waitUntil(seconds: 30, every: 0.1) {
            listed = far()
            return listed["state"] == "live" && (listed["decode"]?["skipped"]?.doubleValue ?? 0) >= 30
        }
        #expect(skipping, "\(listed); publisher: \(publisher.errorText())")
        #expect(listed["decode"]?["demand"] != "full", "\(listed)")
        let decoder = listed["network"]?["decoder"] ?? .null
        #expect(decoder["name"]?.stringValue == codec && decoder["pictures"] == "reference", "\(decoder)")
        let decoded = listed["decode"]?["full"]?.doubleValue ?? 0, skipped = listed["decode"]?["skipped"]?.doubleValue ?? 0
        #expect(skipped >= decoded, "two B-frames a reference: \(decoded) decoded, \(skipped) skipped")

        // The cut: not held for a picture, its colour on program, every picture decoded from then on.
        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        let held = try client.request("status")["program"]?["held_ticks"]?.doubleValue ?? -1
        _ = try client.request("switch", arguments: ["source": .string("far")])
        let seen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: Self.colour) < 30 }
        #expect(seen.map { $0.distance(to: Self.colour) < 30 } == true, "program after the cut: \(seen.map { $0.description } ?? "no picture")")
        #expect(try client.request("status")["program"]?["held_ticks"]?.doubleValue == held, "a cut to a network camera is never held")
        let whole = waitUntil(seconds: 5, every: 0.05) { far()["network"]?["decoder"]?["pictures"] == "all" }
        #expect(whole, "\(far())")
        let skippedAtCut = far()["decode"]?["skipped"]?.doubleValue ?? 0
        let decodedAtCut = far()["decode"]?["full"]?.doubleValue ?? 0
        #expect(waitUntil(seconds: 10, every: 0.1) { (far()["decode"]?["full"]?.doubleValue ?? 0) >= decodedAtCut + 45 })
        #expect((far()["decode"]?["skipped"]?.doubleValue ?? 0) <= skippedAtCut + 2, "skipped while on program: \(far())")
        #expect(far()["decode"]?["demand"] == "full")

        let metrics = try client.request("metrics")["text"]?.stringValue ?? ""
        let info = metrics.split(separator: "\n").first { $0.hasPrefix("studio_network_decoder_info{") && $0.contains("camera=\"far\"") }
        #expect(info?.contains("decoder=\"\(codec)\"") == true, "\(info.map(String.init) ?? "no studio_network_decoder_info")")
        #expect(metrics.contains("studio_camera_full_decode{camera=\"far\"} 1"))
    }

    /// The server's choice: VAAPI on a render node whose driver decodes H.264 (or HEVC), else software,
    /// with the probe's reason in the log line and in each camera's status.
    @Test func softwareWithTheReasonWhereTheMachineHasNoVAAPIDecoder() throws {
        let failure: VAAPIProbeFailure
        switch VAAPIProbe.probeDecode() {
        case .success(let found):
            print("VAAPI fallback part skipped: \(found.renderNode) (\(found.driver)) decodes \(found.codecs.sorted())")
            return
        case .failure(let why): failure = why
        }
        var lines: [String] = []
        let decoding = Discoveries.networkDecoding { lines.append($0) }
        guard case .unavailable(let reason) = decoding.hardware else { Issue.record("\(decoding)"); return }
        #expect(reason == failure.description, "\(reason)")
        #expect(lines.contains { $0.contains("network cameras: decoded in software") && $0.contains(reason) }, "\(lines)")
        print("network decoding here: software: \(reason)")
    }

    static let vaapiDecoder: VAAPIDecoder? = try? VAAPIProbe.probeDecode().get()

    /// Where a render node decodes H.264: a camera decodes on it (the status says `vaapi NODE`), its
    /// picture right on program. Skipped on a machine without one (this one's CI has none).
    @Test(.enabled(if: vaapiDecoder?.codecs.contains("h264") == true, "no VAAPI render node here that decodes H.264: the VAAPI decode part is skipped"))
    func aCameraDecodesOnTheGPUWhereTheMachineHasIt() throws {
        let device = try #require(Self.vaapiDecoder)
        let scratch = try ScratchStudio("netdecode")
        defer { scratch.remove() }
        let port = try NginxRTMP.freePort()
        let publisher = try Self.publish(port: port, codec: "h264", directory: scratch.directory)
        defer { _ = publisher.stop() }
        var options = scratch.options()
        options.configuration.network.pulls = [NetworkPull(name: "far", url: "srt://127.0.0.1:\(port)?latency=120000", latencyMilliseconds: 200)]
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        var decoder: JSONValue = .null
        #expect(waitUntil(seconds: 30, every: 0.1) {
            decoder = (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "far" }?["network"]?["decoder"] ?? .null
            return decoder["hardware"] != nil && decoder["hardware"] != .null
        }, "\(decoder)")
        #expect(decoder["hardware"]?.stringValue == "vaapi \(device.renderNode)", "\(decoder)")
        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        _ = try client.request("switch", arguments: ["source": .string("far")])
        let seen = SolidColourBackendTests.programColour(tiles) { $0.distance(to: Self.colour) < 30 }
        #expect(seen.map { $0.distance(to: Self.colour) < 30 } == true, "program from the GPU's picture: \(seen.map { $0.description } ?? "no picture")")
    }
}
