import Foundation
import Testing
import Glibc
import Control
import StudioCore
@testable import StudioServer
import TestSupport

/// A node camera's mode, controls and focus asked on the switcher reach the node: a real `studio serve`
/// node of two test-pattern cameras (its HTTP API asking for a token) into a switcher in this process
/// whose `network.srt.nodes` gives the node's `api` and `token` (`NodeTallyEndToEndTests.Rig`). Test-pattern cameras have no mode or
/// controls, so `controls` and `camera` come back as the node's own refusal (its words, which name its
/// camera `cam1` and its kind); `focus` is answered by the node (`none`, with its reason), logged on
/// both sides. Then the faults: a wrong token (the node's 401), no `api` (which key to set), nothing
/// listening there (unreachable at once), a listener that never answers (within the timeout).
@Suite(.serialized) struct NodeControlEndToEndTests {
    static let nodeToken = "node-token-0123456789"

    @Test func aNodeCamerasControlIsForwardedToTheNode() throws {
        let nodeHTTP = try NginxRTMP.freePort()
        let rig = try NodeTallyEndToEndTests.Rig("node-control", nodeHTTP: nodeHTTP, nodeToken: Self.nodeToken)
        let (server, client) = (rig.server, rig.client)
        let nodeClient = rig.nodeClient

        func refusal(_ command: String, _ arguments: [String: JSONValue]) -> ControlError? {
            do { _ = try client.request(command, arguments: arguments, timeoutSeconds: 20) } catch { return error }
            return nil
        }

        // The node's own refusals, in its words: its camera cam1 is a test pattern (the switcher's pc2/cam1 is a network camera).
        for (command, arguments) in [("controls", ["camera": JSONValue.string("pc2/cam1")]),
                                     ("camera", ["camera": "pc2/cam1", "size": "640x360"]),
                                     ("control", ["camera": "pc2/cam1", "name": "brightness", "value": "140"])] {
            let error = refusal(command, arguments)
            #expect(error?.code == .invalidArgument && error?.message == "node pc2: cam1 is a test-pattern camera: it has no adjustable mode or controls",
                    "\(command): \(String(describing: error))")
        }
        // Focus is answered by the node, with the switcher's name for its camera; logged on both sides.
        let reply = try client.request("focus", arguments: ["camera": "pc2/cam1", "x": 0.25, "y": 0.75], timeoutSeconds: 20)
        #expect(reply["camera"] == "pc2/cam1" && reply["x"]?.doubleValue == 0.25 && reply["method"] == "none", "\(reply)")
        #expect(reply["reason"] == "cam1 is a test-pattern camera: it has no focus or exposure controls", "\(reply)")
        #expect(waitUntil(seconds: 10, every: 0.1) {
            EndToEndTests.events((try? nodeClient.request("log")) ?? .null, kind: "camera_focus").contains { $0["camera"] == "cam1" && $0["details"]?["x"] == "0.25" }
        }, "the node's history has no camera_focus of cam1")
        #expect(waitUntil(seconds: 10, every: 0.1) {
            EndToEndTests.events((try? client.request("log")) ?? .null, kind: "camera_focus").contains {
                $0["camera"] == "pc2/cam1" && $0["details"]?["node"] == "pc2" && $0["details"]?["method"] == "none"
            }
        }, "the switcher's history has no camera_focus of pc2/cam1 noting node pc2")

        // Faults, each a clear error; the configuration changed in place as a reload would.
        func withNode(_ change: (inout SRTListenerSpec.Node) -> Void) {
            var configuration = server.reloader.configuration
            var spec = configuration.network.srt!
            change(&spec.nodes[0])
            configuration.network.srt = spec
            server.reloader.replace(with: configuration)
        }
        let focus: [String: JSONValue] = ["camera": "pc2/cam1", "x": 0.5, "y": 0.5]
        withNode { $0.token = "wrong-token-0123456789" }
        var error = refusal("focus", focus)
        #expect(error?.code == .unavailable && error?.message.contains("refused the switcher's token (401 Unauthorized)") == true
                && error?.message.contains("network.srt.nodes' token for pc2 must be the node's http.token") == true, "\(String(describing: error))")

        withNode { $0.api = nil; $0.token = nil }
        error = refusal("controls", ["camera": "pc2/cam1"])
        #expect(error?.code == .invalidArgument && error?.message.contains("set api (http://HOST:PORT") == true
                && error?.message.contains("network.srt.nodes' entry for pc2") == true, "\(String(describing: error))")

        let nobody = try NginxRTMP.freePort()
        withNode { $0.api = ListenAddress(host: "127.0.0.1", port: UInt16(nobody)) }
        var started = Date()
        error = refusal("focus", focus)
        #expect(error?.code == .unavailable && error?.message.contains("node pc2's HTTP API at http://127.0.0.1:\(nobody) is unreachable") == true
                && error?.message.contains("Connection refused") == true, "\(String(describing: error))")
        #expect(Date().timeIntervalSince(started) < NodeForwarding.seconds)

        // A listener that takes the connection and never answers: the timeout, not a hang.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try #require(withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, length) == 0 && listen(silent, 4) == 0 && getsockname(silent, $0, &length) == 0 } })
        withNode { $0.api = ListenAddress(host: "127.0.0.1", port: UInt16(bigEndian: address.sin_port)) }
        started = Date()
        error = refusal("camera", ["camera": "pc2/cam1", "fps": "25"])
        let waited = Date().timeIntervalSince(started)
        #expect(error?.code == .timeout && error?.message.contains("did not answer camera for pc2/cam1 within 5 s") == true, "\(String(describing: error))")
        #expect(waited >= NodeForwarding.seconds - 0.5 && waited < NodeForwarding.seconds + 2, "waited \(waited) s")
        #expect(try client.request("status")["program"]?["late_ticks"]?.intValue != nil, "the show goes on")
    }
}
