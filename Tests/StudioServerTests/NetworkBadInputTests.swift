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
/// larger than the limit (refused with the reason, the studio running on).
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
}
