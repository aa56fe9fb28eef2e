import Foundation
import Testing
import Control
import StudioCore
import StudioServer
import StudioSystem
import TestSupport

/// A contributor on a lossy link (the issue's "2 % loss, 80 ms RTT, SRT latency 4x RTT"): an SRT caller
/// (ffmpeg, moving noise-like pictures at 1.5 Mbit/s) reaches studio's listener through
/// scripts/rig/udp-impair.py, which loses 2 % of the datagrams each way and holds the rest 40 ms (+-5)
/// each way. On air for ten seconds the camera never goes lost, SRT retransmits what was lost (its
/// figures say so) and, once live, drops nothing too late to play, and its pictures keep coming at the publisher's
/// rate: no visible break on program.
@Suite(.serialized) struct NetworkLossyLinkTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// scripts/rig/udp-impair.py from `listen` to `target` with `impairments` (its options), once it says
    /// it is up.
    static func relay(from listen: Int, to target: Int, _ impairments: [String], directory: URL) throws -> ChildProcess {
        let relay = try ChildProcess(executable: "/usr/bin/python3", arguments: [
            root.appendingPathComponent("scripts/rig/udp-impair.py").path, String(listen), String(target),
        ] + impairments, outputDirectory: directory.appendingPathComponent("relay"))
        #expect(waitUntil(seconds: 20, every: 0.05) { relay.outputText().contains("udp-impair:") || relay.hasExited }, "\(relay.errorText())")
        return relay
    }

    /// What a camera on air did over `seconds`, looked at every 100 ms: the states it was seen in and how
    /// often it was lost (`camera_lost`).
    struct OnAir {
        var states: Set<String> = []
        var losses = 0
        var seconds = 0.0
    }

    /// Watches camera `name` on `client` for `seconds` (`also` called at each look): what it did, and its
    /// `network` view first and last.
    static func watchOnAir(_ name: String, client: ControlClient, seconds: Double,
                           also: () -> Void = {}) -> (OnAir, first: JSONValue?, last: JSONValue?) {
        func camera() -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"]?.stringValue == name } }
        func losses() -> Int {
            ((try? client.request("log"))?["events"]?.arrayValue ?? []).filter { $0["kind"] == "camera_lost" && $0["camera"]?.stringValue == name }.count
        }
        let lossesBefore = losses()
        let first = camera()?["network"]
        let started = MonotonicClock.now()
        var watch = OnAir()
        var last: JSONValue?
        _ = waitUntil(seconds: seconds, every: 0.1) {
            let now = camera()
            watch.states.insert(now?["state"]?.stringValue ?? "missing")
            last = now?["network"]
            also()
            return false
        }
        watch.seconds = Double(MonotonicClock.now() - started) / 1e9
        watch.losses = losses() - lossesBefore
        return (watch, first, last)
    }

    @Test func aCallerOnALossyLinkStaysOnAirWithoutABreak() throws {
        let scratch = try ScratchStudio("lossy")
        defer { scratch.remove() }
        let directory = scratch.directory
        let listenerPort = try NginxRTMP.freePort(), relayPort = try NginxRTMP.freePort()
        var options = scratch.options()
        options.configuration.network.srt = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(listenerPort)),
                                                            latencyMilliseconds: 320, callers: [.init(name: "anna")])
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        func camera() -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "anna" } }

        let relay = try Self.relay(from: relayPort, to: listenerPort, ["--loss", "0.02", "--delay-ms", "40", "--jitter-ms", "5", "--seed", "7"],
                                   directory: directory)
        defer { _ = relay.stop() }
        let caller = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=30,noise=alls=30:allf=t",
            "-f", "lavfi", "-i", "aevalsrc=0.1*sin(2*PI*1000*t)|0.1*sin(2*PI*1000*t):s=48000",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-b:v", "1500k", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "96k", "-f", "mpegts",
            "srt://127.0.0.1:\(relayPort)?streamid=anna&latency=320000&pkt_size=1316",
        ], outputDirectory: directory.appendingPathComponent("caller"))
        defer { _ = caller.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { camera()?["state"] == "live" },
                "\(camera() ?? .null); caller: \(caller.errorText()); relay: \(relay.errorText())")
        _ = try client.request("switch", arguments: ["source": .string("anna")])
        // Watched from when SRT's figures are there and it has measured the round trip (its first reading
        // may have none: CI once counted a drop from before it against the ten seconds on air).
        #expect(waitUntil(seconds: 15, every: 0.1) { (camera()?["network"]?["srt"]?["rtt_ms"]?.doubleValue ?? 0) >= 60 },
                "no SRT round trip measured: \(camera() ?? .null)")

        let (watch, first, last) = Self.watchOnAir("anna", client: client, seconds: 10)
        let (states, seconds) = (watch.states, watch.seconds)
        func count(_ value: JSONValue?, _ key: String) -> Double { value?[key]?.doubleValue ?? 0 }
        func srt(_ value: JSONValue?, _ key: String) -> Double { value?["srt"]?[key]?.doubleValue ?? 0 }
        let pictures = count(last, "pictures_in") - count(first, "pictures_in")
        #expect(states == ["live"], "states seen: \(states); \(last ?? .null)")
        #expect(pictures >= 0.9 * 30 * seconds, "\(pictures) pictures in \(seconds) s; \(last ?? .null)")
        // The link really lost packets, and SRT got them again in time.
        #expect(srt(last, "packets_lost") > 0 && srt(last, "packets_retransmitted") > 0, "\(last?["srt"] ?? .null)")
        // Counted over the ten seconds on air: in the caller's first moments, before SRT has measured the
        // round trip, a retransmission can come a fraction of a millisecond too late (seen once in CI:
        // "delayed for 0.194 ms", before the camera was live); that is the handshake, not the link held.
        #expect(first?["srt"]?["packets_dropped"] != nil && srt(last, "packets_dropped") - srt(first, "packets_dropped") == 0,
                "SRT dropped packets too late to play while on air: \(first?["srt"] ?? .null) -> \(last?["srt"] ?? .null)")
        #expect((srt(last, "rtt_ms")) >= 60, "the relay's round trip is about 80 ms: \(last?["srt"] ?? .null)")
        #expect(watch.losses == 0, "anna was lost on air")

        _ = relay.stop()
        print("Lossy SRT link, 10 s on air: \(pictures) pictures in \(seconds) s; srt \(last?["srt"] ?? .null); relay \(relay.outputText())")
    }
}
