import Foundation
import Testing
import Control
import StudioCore
@testable import StudioServer
import TestSupport

/// A capture node shows its switcher's tally: a real `studio serve` node (config `node: {tally_from,
/// token}`) of two test-pattern cameras into a switcher in this process whose HTTP API asks for a token.
/// `switch pc2/cam2` on the switcher: the node's cam2 is `program` and cam1 not; `switch pc2/cam1`: it
/// flips; the switcher stopped: both `unknown`, and the node's log says so.
@Suite(.serialized) struct NodeTallyEndToEndTests {
    static let passphrase = "pc2-node-secret"
    static let token = "switcher-token-0123456789"

    /// A node's config file in `node`'s directory: pc2 sending to the switcher's SRT listener on `srtPort`
    /// and following its tally and clock on `httpPort` (with `token`), then `more` YAML.
    static func nodeConfig(in node: StudioHarness, srtPort: Int, httpPort: Int, more: String = "") throws -> URL {
        let config = node.directory.appendingPathComponent("node.yaml")
        try """
            node:
              name: pc2
              send: srt://127.0.0.1:\(srtPort)
              passphrase: \(passphrase)
              tally_from: http://127.0.0.1:\(httpPort)
              token: \(token)
            \(more)

            """.write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    /// A node's cameras' `switcher_tally` (its `cameras`), by the node's own names.
    static func switcherTally(_ nodeClient: ControlClient) -> [String: String] {
        let cameras = (try? nodeClient.request("cameras"))?["cameras"]?.arrayValue ?? []
        return Dictionary(cameras.compactMap { camera in
            camera["name"]?.stringValue.map { ($0, camera["switcher_tally"]?.stringValue ?? "null") }
        }, uniquingKeysWith: { first, _ in first })
    }

    /// A switcher in this process (its HTTP API asking for `token`, its SRT listener naming pc2) and a
    /// real node of two test-pattern cameras following its tally, the node's HTTP API on `nodeHTTP`
    /// when given (asking for `nodeToken` when given, and then the switcher's entry for pc2 gives that
    /// API and token), TSL tally to `tsl` when given, `nodeArguments` for the rest (no ISO files unless
    /// they say `--record DIR`), the switcher recording into `switcherRecord` when given; returns once both node cameras are live on the switcher.
    final class Rig {
        let scratch: ScratchStudio
        let server: StudioServer
        let httpPort: UInt16
        let client: ControlClient
        let node: StudioHarness
        let nodeClient: ControlClient
        var running = true

        /// `nodeArguments`: more of the node's `serve` flags (`--no-iso` unless they have `--record`).
        /// `switcherCameras`: the switcher's own test-pattern cameras (320x180), `cam1`...
        init(_ name: String, nodeHTTP: Int? = nil, tsl: Int? = nil, nodeToken: String? = nil, nodeArguments: [String] = [],
             switcherRecord: String? = nil, switcherCameras: Int = 0) throws {
            scratch = try ScratchStudio(name)
            let port = try NginxRTMP.freePort()
            var options = scratch.options(httpToken: NodeTallyEndToEndTests.token, cameras: switcherCameras)
            options.configuration.program = ProgramFormat(width: 320, height: 180, frameRate: Rational(30, 1))
            options.configuration.recordDirectory = switcherRecord
            options.configuration.network.srt = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(port)), callers: [],
                                                                nodes: [.init(name: "pc2", passphrase: NodeTallyEndToEndTests.passphrase,
                                                                              api: nodeToken == nil ? nil : nodeHTTP.map { ListenAddress(host: "127.0.0.1", port: UInt16($0)) },
                                                                              token: nodeToken)])
            server = try StudioServer(options: options)
            httpPort = try #require(server.http?.port)
            client = try ControlClient(socketPath: options.socketPath)
            node = try StudioHarness()
            let config = try NodeTallyEndToEndTests.nodeConfig(in: node, srtPort: port, httpPort: Int(httpPort), more: """
                \(tsl.map { "tally: {tsl: [{address: \"127.0.0.1:\($0)\"}]}" } ?? "")
                \(nodeToken.map { "http: {token: \($0)}" } ?? "")
                """)
            try node.serve(["--config", config.path, "--cameras", "2", "--camera-size", "320x180", "--program", "320x180@30"] + (nodeArguments.contains("--record") ? [] : ["--no-iso"])
                           + (nodeHTTP.map { ["--http", "127.0.0.1:\($0)"] } ?? []) + nodeArguments)
            nodeClient = try ControlClient(socketPath: node.socket)
            let live = waitUntil(seconds: 20, every: 0.1) { [client] in
                let cameras = (try? client.request("cameras"))?["cameras"]?.arrayValue ?? []
                return ["pc2/cam1", "pc2/cam2"].allSatisfy { name in cameras.contains { $0["name"]?.stringValue == name && $0["state"] == "live" } }
            }
            try #require(live, "node: \(node.server?.errorText() ?? "")")
        }

        /// The node's cameras' `switcher_tally`, by the node's own names.
        func switcherTally() -> [String: String] { NodeTallyEndToEndTests.switcherTally(nodeClient) }

        func stopSwitcher() {
            if running { server.shutdown() }
            running = false
        }

        deinit {
            stopSwitcher()
            _ = node.stopServer()
            scratch.remove()
        }
    }

    @Test func aNodesCamerasShowTheSwitchersTally() throws {
        let rig = try Rig("node-tally")
        let (client, node, httpPort) = (rig.client, rig.node, rig.httpPort)
        let switcherTally = rig.switcherTally

        // Each switch on the switcher reaches the node's cameras, the other one not on program.
        for (on, off) in [("cam2", "cam1"), ("cam1", "cam2")] {
            _ = try client.request("switch", arguments: ["source": .string("pc2/\(on)")])
            #expect(waitUntil(seconds: 5, every: 0.05) {
                let tally = switcherTally()
                return (tally[on] == "program" || tally[on] == "both") && tally[off] != "program" && tally[off] != "both" && tally[off] != "unknown"
            }, "after switch pc2/\(on): \(switcherTally()); node: \(node.server?.errorText() ?? "")")
        }

        // The node's senders in its status (their feeds and connections, the passphrase masked) and metrics.
        func senders() -> [JSONValue] { (try? rig.nodeClient.request("status"))?["senders"]?.arrayValue ?? [] }
        #expect(waitUntil(seconds: 5, every: 0.1) {
            senders().count == 2 && senders().allSatisfy { $0["output"]?["state"] == "connected" && ($0["feed"]?["frames_encoded"]?.intValue ?? 0) > 0 }
        }, "\(senders())")
        #expect(senders().map { $0["stream_id"]?.stringValue ?? "" } == ["pc2/cam1", "pc2/cam2"], "\(senders())")
        #expect(senders().allSatisfy { sender in
            [sender["output"]?["url"], sender["feed"]?["path"]].allSatisfy { url in
                url?.stringValue.map { $0.hasPrefix("srt://") && !$0.contains(NodeTallyEndToEndTests.passphrase) } == true
            } && sender["output"]?["name"]?.stringValue == "send-\(sender["camera"]?.stringValue ?? "")"
        }, "\(senders())")
        let metrics = try rig.nodeClient.request("metrics")["text"]?.stringValue ?? ""
        #expect(metrics.contains("studio_output_up{output=\"send-cam1\"} 1") && metrics.contains("studio_output_up{output=\"send-cam2\"} 1"), "\(metrics)")

        // The switcher gone: no stale red, `unknown` on both, and said in the node's log.
        rig.stopSwitcher()
        #expect(waitUntil(seconds: 10, every: 0.05) { switcherTally() == ["cam1": "unknown", "cam2": "unknown"] }, "\(switcherTally())")
        // Its senders are not connected any more, and say so (SRT notices within its idle timeout).
        #expect(waitUntil(seconds: 15, every: 0.1) { senders().count == 2 && senders().allSatisfy { $0["output"]?["state"] != "connected" } },
                "\(senders())")
        #expect(waitUntil(seconds: 5, every: 0.1) {
            node.server?.errorText().contains("tally from the switcher at http://127.0.0.1:\(httpPort): lost") == true
        }, "\(node.server?.errorText() ?? "")")
    }

    /// The node's own tally page follows the switcher: dark while the switcher has pc2/cam1 on program
    /// (the node's own program shows its cam1 all along), red within 1.5 s of `switch pc2/cam2` there.
    @Test(.enabled(if: BrowserConsoleTests.browserAvailable,
                   "needs chromium, chromium-driver and python3-selenium (Debian packages; run scripts/setup.sh)"))
    func theNodesTallyPageFollowsTheSwitcher() throws {
        let nodeHTTP = try NginxRTMP.freePort()
        let rig = try Rig("node-tally-page", nodeHTTP: nodeHTTP)
        _ = try rig.client.request("switch", arguments: ["source": .string("pc2/cam1")])
        #expect(waitUntil(seconds: 5, every: 0.05) { rig.switcherTally()["cam2"] == "none" }, "\(rig.switcherTally())")
        let ready = rig.scratch.directory.appendingPathComponent("browser-ready").path
        let browser = try ChildProcess(executable: BrowserConsoleTests.python,
                                       arguments: [BrowserTallyTests.script, "http://127.0.0.1:\(nodeHTTP)/tally/cam2", ready])
        #expect(waitUntil(seconds: 90, every: 0.1) { FileManager.default.fileExists(atPath: ready) || browser.hasExited },
                "the page never came up live and dark")
        let switchedMS = Int(Date().timeIntervalSince1970 * 1000)
        _ = try rig.client.request("switch", arguments: ["source": .string("pc2/cam2")])
        let report = try BrowserConsoleTests.report(of: browser)
        let redMS = try #require(report["red_at_ms"]?.intValue, "\(report)")
        #expect(redMS - switchedMS <= 1500, "the page turned red \(redMS - switchedMS) ms after the switch was asked")
        #expect(report["after"]?["background"] == "rgb(221, 0, 0)" && report["after"]?["state"] == "ON AIR", "\(report)")
    }

    /// The node's TSL tally (like its vMix and OSC tally: one board) follows the switcher too: its own
    /// program shows its cam1 all along, yet after `switch pc2/cam2` on the switcher its TSL receiver
    /// sees cam2 red and cam1 dark, then the reverse; the switcher stopped, both dark (no stale red).
    @Test func theNodesTSLTallyFollowsTheSwitcher() throws {
        let udp = try TSLReceiver(tcp: false)
        let rig = try Rig("node-tally-tsl", tsl: udp.port)
        for (on, off) in [(UInt16(2), UInt16(1)), (1, 2)] {
            _ = try rig.client.request("switch", arguments: ["source": .string("pc2/cam\(on)")])
            #expect(udp.receive(seconds: 5) { $0.latest[on]?.left == 1 && $0.latest[off]?.left == 0 },
                    "after switch pc2/cam\(on): \(udp.displays.suffix(6)); node: \(rig.node.server?.errorText() ?? "")")
            #expect(udp.latest[on]?.label == "cam\(on)")
        }
        rig.stopSwitcher()
        #expect(udp.receive(seconds: 10) { $0.latest[1]?.left == 0 && $0.latest[2]?.left == 0 }, "\(udp.displays.suffix(6))")
    }

    /// The node's console lights its camera tiles as the switcher does: cam2's tile on program and
    /// cam1's dark while the switcher has pc2/cam2 on program (the node's own program shows its cam1),
    /// and the reverse within 2.5 s of `switch pc2/cam1` there (the console asks every second).
    @Test(.enabled(if: BrowserConsoleTests.browserAvailable,
                   "needs chromium, chromium-driver and python3-selenium (Debian packages; run scripts/setup.sh)"))
    func theNodesConsoleTilesFollowTheSwitcher() throws {
        let nodeHTTP = try NginxRTMP.freePort()
        let rig = try Rig("node-tally-console", nodeHTTP: nodeHTTP)
        _ = try rig.client.request("switch", arguments: ["source": .string("pc2/cam2")])
        let ready = rig.scratch.directory.appendingPathComponent("browser-ready").path
        let browser = try ChildProcess(executable: BrowserConsoleTests.python,
                                       arguments: [BrowserConsoleTests.script, "--tally", "cam2", "http://127.0.0.1:\(nodeHTTP)/", ready])
        #expect(waitUntil(seconds: 90, every: 0.1) { FileManager.default.fileExists(atPath: ready) || browser.hasExited },
                "the node's console never showed cam2 on program and cam1 dark")
        let switchedMS = Int(Date().timeIntervalSince1970 * 1000)
        _ = try rig.client.request("switch", arguments: ["source": .string("pc2/cam1")])
        let report = try BrowserConsoleTests.report(of: browser)
        let flippedMS = try #require(report["flipped_at_ms"]?.intValue, "\(report)")
        #expect(flippedMS - switchedMS <= 2500, "the tiles flipped \(flippedMS - switchedMS) ms after the switch was asked")
    }
}
