import Foundation
import Testing
import Control
import StudioConfig
import StudioCore
@testable import StudioServer
import StudioSystem
import TestSupport

/// Faults between a capture node and its switcher, with real processes on loopback (issue 32, point 6):
/// a node whose passphrase is wrong is refused and says so in its status, and the switcher shows none of
/// its cameras; a switcher restarted mid-show gets the node's cameras back under their names in its new
/// session, and the node's tally follows the new switcher.
@Suite(.serialized) struct NodeFaultsEndToEndTests {
    static let (passphrase, token) = (NodeTallyEndToEndTests.passphrase, NodeTallyEndToEndTests.token)

    /// A switcher in this process: its SRT listener on `srtPort` naming pc2, its HTTP API on `httpPort`
    /// (asking for `token`) when given; `scratch`'s database, so a second one is the next session.
    /// `nodeAPI`: the node's HTTP port (its token `token`), for the switcher to ask its history.
    static func switcher(_ scratch: ScratchStudio, srtPort: Int, httpPort: Int? = nil, nodeAPI: Int? = nil) throws -> StudioServer {
        var options = httpPort == nil ? scratch.options() : scratch.options(httpToken: token, cameras: 0)
        options.testCameraCount = 0
        options.configuration.program = ProgramFormat(width: 320, height: 180, frameRate: Rational(30, 1))
        if let httpPort { options.configuration.http.listen = ListenAddress(host: "127.0.0.1", port: UInt16(httpPort)) }
        options.configuration.network.srt = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(srtPort)), callers: [],
                                                            nodes: [.init(name: "pc2", passphrase: passphrase,
                                                                          api: nodeAPI.map { ListenAddress(host: "127.0.0.1", port: UInt16($0)) },
                                                                          token: nodeAPI == nil ? nil : token)])
        return try StudioServer(options: options)
    }

    static func cameras(_ client: ControlClient) -> [String: String] {
        let list = (try? client.request("cameras"))?["cameras"]?.arrayValue ?? []
        return Dictionary(list.compactMap { camera in camera["name"]?.stringValue.map { ($0, camera["state"]?.stringValue ?? "?") } },
                          uniquingKeysWith: { first, _ in first })
    }

    @Test func aNodeWithAWrongPassphraseIsRefusedAndSaysSo() throws {
        let scratch = try ScratchStudio("node-wrong-passphrase")
        defer { scratch.remove() }
        let port = try NginxRTMP.freePort()
        let server = try Self.switcher(scratch, srtPort: port)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: scratch.directory.appendingPathComponent("studio.sock").path)
        let node = try StudioHarness()
        try node.serve(["--node", "pc2", "--send", "srt://127.0.0.1:\(port)?passphrase=not-the-node-secret", "--cameras", "1",
                        "--camera-size", "320x180", "--program", "320x180@30", "--no-iso"])
        defer { _ = node.stopServer() }
        let nodeClient = try ControlClient(socketPath: node.socket)
        func sender() -> JSONValue? { (try? nodeClient.request("status"))?["senders"]?.arrayValue?.first }
        // Refused at each call (three at least), and the node's status says what to check.
        #expect(waitUntil(seconds: 40, every: 0.2) {
            (sender()?["output"]?["reconnect_attempts"]?.intValue ?? 0) >= 2
                && sender()?["output"]?["last_error"]?.stringValue?.contains("SRT listener refused the call") == true
        }, "\(String(describing: sender())); node: \(node.server?.errorText() ?? "")")
        #expect(sender()?["output"]?["state"] != "connected" && sender()?["output"]?["url"]?.stringValue?.contains("not-the-node-secret") == false,
                "\(String(describing: sender()))")
        #expect(Self.cameras(client).isEmpty, "the switcher took a camera: \(Self.cameras(client))")
        #expect(node.server?.hasExited == false, "the node stopped")
    }

    @Test func aSwitcherRestartedMidShowGetsTheNodesCamerasBackAndItsTallyReachesThem() throws {
        let scratch = try ScratchStudio("node-switcher-restart")
        defer { scratch.remove() }
        let (srtPort, httpPort) = (try NginxRTMP.freePort(), try NginxRTMP.freePort())
        var server = try Self.switcher(scratch, srtPort: srtPort, httpPort: httpPort)
        var running = true
        defer { if running { server.shutdown() } }
        let socket = scratch.directory.appendingPathComponent("studio.sock").path
        var client = try ControlClient(socketPath: socket)

        let node = try StudioHarness()
        let config = try NodeTallyEndToEndTests.nodeConfig(in: node, srtPort: srtPort, httpPort: httpPort)
        try node.serve(["--config", config.path, "--cameras", "2", "--camera-size", "320x180", "--program", "320x180@30", "--no-iso"])
        defer { _ = node.stopServer() }
        let nodeClient = try ControlClient(socketPath: node.socket)
        let nodeSession = try #require((try nodeClient.request("status"))["session"]?.intValue)
        func switcherTally() -> [String: String] { NodeTallyEndToEndTests.switcherTally(nodeClient) }
        let bothLive = ["pc2/cam1": "live", "pc2/cam2": "live"]

        #expect(waitUntil(seconds: 30, every: 0.1) { Self.cameras(client) == bothLive }, "\(Self.cameras(client))")
        let firstSession = try #require((try client.request("status"))["session"]?.intValue)
        _ = try client.request("switch", arguments: ["source": .string("pc2/cam2")])
        #expect(waitUntil(seconds: 10, every: 0.05) { switcherTally()["cam2"] == "program" }, "\(switcherTally())")

        // The switcher stops mid-show: the node's tally goes unknown (no stale red), its show goes on.
        server.shutdown()
        running = false
        #expect(waitUntil(seconds: 15, every: 0.05) { switcherTally() == ["cam1": "unknown", "cam2": "unknown"] }, "\(switcherTally())")

        // Started again on the same addresses: a new session, the node's cameras back under their names
        // (its senders call again with backoff), and the new switcher's tally on the node.
        server = try Self.switcher(scratch, srtPort: srtPort, httpPort: httpPort)
        running = true
        client = try ControlClient(socketPath: socket)
        let secondSession = try #require((try client.request("status"))["session"]?.intValue)
        #expect(secondSession != firstSession)
        #expect(waitUntil(seconds: 40, every: 0.1) { Self.cameras(client) == bothLive }, "\(Self.cameras(client)); node: \(node.server?.errorText() ?? "")")
        _ = try client.request("switch", arguments: ["source": .string("pc2/cam1")])
        #expect(waitUntil(seconds: 20, every: 0.05) { switcherTally()["cam1"] == "program" && switcherTally()["cam2"] == "none" }, "\(switcherTally())")
        // The node went on through it all: the same session of its own.
        #expect((try nodeClient.request("status"))["session"]?.intValue == nodeSession && node.server?.hasExited == false)
    }

    /// The node's disk fills: its ISO file stops (said in its log and history, its status showing the disk
    /// full), its camera's stream to the switcher goes on (the sender connected, the switcher's pictures
    /// of pc2/cam1 still coming, live), and the switcher says the node's file stopped (asking its history).
    @Test(.enabled(if: ScratchTmpfs.unavailableReason == nil, "needs root and permission to mount a tmpfs"))
    func aNodesFullDiskStopsItsIsoNotItsStream() throws {
        let scratch = try ScratchStudio("node-disk-full")
        defer { scratch.remove() }
        let disk = try ScratchTmpfs(kibibytes: 8192)
        defer { disk.unmount() }
        let port = try NginxRTMP.freePort()
        let nodeHTTP = try NginxRTMP.freePort()
        let server = try Self.switcher(scratch, srtPort: port, nodeAPI: nodeHTTP)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: scratch.directory.appendingPathComponent("studio.sock").path)
        let node = try StudioHarness()
        let config = node.directory.appendingPathComponent("node.yaml")
        try "http: {token: \(Self.token)}\n".write(to: config, atomically: true, encoding: .utf8)
        try node.serve(["--node", "pc2", "--send", "srt://127.0.0.1:\(port)?passphrase=\(Self.passphrase)", "--cameras", "1",
                        "--camera-size", "320x180", "--program", "320x180@30", "--record", disk.directory.path,
                        "--config", config.path, "--http", "127.0.0.1:\(nodeHTTP)"])
        defer { _ = node.stopServer() }
        let nodeClient = try ControlClient(socketPath: node.socket)
        func picturesIn() -> Int {
            ((try? client.request("cameras"))?["cameras"]?.arrayValue ?? []).first { $0["name"] == "pc2/cam1" }?["network"]?["pictures_in"]?.intValue ?? 0
        }
        func isoStops() -> Int {
            ((try? nodeClient.request("log"))?["events"]?.arrayValue ?? []).filter {
                $0["kind"] == "recording_stopped" && $0["details"]?["output"] == "iso-cam1"
            }.count
        }
        #expect(waitUntil(seconds: 30, every: 0.1) { Self.cameras(client) == ["pc2/cam1": "live"] && picturesIn() > 30 }, "\(Self.cameras(client))")

        _ = try disk.fill()
        #expect(waitUntil(seconds: 20, every: 0.1) { isoStops() == 1 }, "the node's ISO did not stop: \(node.server?.errorText() ?? "")")
        let status = try nodeClient.request("status")
        #expect((status["disk"]?["free_bytes"]?.intValue ?? -1) < 64 * 1024, "the node's status shows its disk full: \(status["disk"] ?? .null)")
        // Its stream goes on: two more seconds of pictures on the switcher, the sender connected throughout.
        let before = picturesIn()
        #expect(waitUntil(seconds: 20, every: 0.1) { picturesIn() >= before + 60 }, "the stream stopped with the disk: \(before) -> \(picturesIn())")
        #expect(Self.cameras(client) == ["pc2/cam1": "live"])
        let sender = try nodeClient.request("status")["senders"]?.arrayValue?.first
        #expect(sender?["output"]?["state"] == "connected" && isoStops() == 1, "\(String(describing: sender))")
        // The switcher says so too, from the node's recordings (asked every 10 s).
        func stopped() -> [JSONValue] {
            ((try? client.request("log"))?["events"]?.arrayValue ?? []).filter { $0["kind"] == "node_recording_stopped" }
        }
        #expect(waitUntil(seconds: 30, every: 0.2) { !stopped().isEmpty }, "the switcher did not say the node's ISO stopped")
        #expect(stopped().count == 1 && stopped().first?["camera"] == "pc2/cam1" && stopped().first?["details"]?["node"] == "pc2",
                "\(stopped())")
    }
}
