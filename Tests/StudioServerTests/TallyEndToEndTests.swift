import Foundation
import Testing
import Control
import StudioConfig
import StudioCore
import TestSupport
@testable import StudioServer

/// Tally out of a real server with three test-pattern cameras, to receivers written in the test from the
/// protocols' published layouts: TSL UMD 5.0 over UDP and over TCP (with a reconnect), and a vMix-style
/// tally client. Loopback and free ports only.
@Suite(.serialized) struct TallyEndToEndTests {
    /// A server with `cameras` test cameras and `tally` settings, and a control client.
    static func serve(_ scratch: ScratchStudio, tally: TallySettings, cameras: Int = 3) throws -> (StudioServer, ControlClient) {
        var options = scratch.options()
        options.testCameraCount = cameras
        options.configuration.tally = tally
        let server = try StudioServer(options: options)
        return (server, try ControlClient(socketPath: options.socketPath))
    }

    @Test func tslReceiversSeeASwitchAtOnceAndAgainEverySecondAndTCPConnectsAgain() throws {
        let scratch = try ScratchStudio("tally-tsl")
        defer { scratch.remove() }
        let udp = try TSLReceiver(tcp: false), tcp = try TSLReceiver(tcp: true), old = try TSLReceiver(tcp: false, v31: true)
        let tally = TallySettings(tsl: [
            TSLDestination(address: ListenAddress(host: "127.0.0.1", port: UInt16(udp.port)), version: .v5, transport: .udp, screen: 3),
            TSLDestination(address: ListenAddress(host: "127.0.0.1", port: UInt16(tcp.port)), version: .v5, transport: .tcp),
            TSLDestination(address: ListenAddress(host: "127.0.0.1", port: UInt16(old.port)), version: .v31),
        ])
        let (server, client) = try Self.serve(scratch, tally: tally)
        defer { server.shutdown() }

        // At start: cam1 on program (red), the others off; each camera's name on its display.
        #expect(udp.receive(seconds: 10) { $0.latest[1]?.left == 1 && $0.latest[3] != nil }, "\(udp.displays.suffix(6))")
        #expect(udp.latest[1]?.label == "cam1" && udp.latest[2]?.label == "cam2" && udp.latest[3]?.left == 0)
        #expect(udp.latest[1]?.screen == 3)

        _ = try client.request("switch", arguments: ["source": .string("cam2")])
        let switched = Date()
        #expect(udp.receive(seconds: 5) { $0.latest[2]?.left == 1 && $0.latest[2]?.right == 1 && $0.latest[1]?.left == 0 },
                "cam2 red, cam1 off: \(udp.displays.suffix(6))")
        // Re-sent without a change, about a second later.
        let count = udp.displays.count
        #expect(udp.receive(seconds: 3) { $0.displays.count > count + 2 })
        let resent = udp.displays.dropFirst(count).filter { $0.index == 2 }
        #expect(resent.first.map { $0.arrived.timeIntervalSince(switched) < 2.5 } == true && resent.allSatisfy { $0.left == 1 })

        // Preview: green; on both (preview cam2 while on program): lamps red, text tally amber.
        _ = try client.request("preview", arguments: ["source": .string("cam3")])
        #expect(udp.receive(seconds: 5) { $0.latest[3]?.left == 2 && $0.latest[3]?.text == 2 })
        _ = try client.request("preview", arguments: ["source": .string("cam2")])
        #expect(udp.receive(seconds: 5) { $0.latest[2]?.left == 1 && $0.latest[2]?.text == 3 && $0.latest[3]?.left == 0 })

        // TSL 3.1: program on tally 1, preview on tally 2 (cam2 on both now), 16 characters of name.
        #expect(old.receive(seconds: 5) { $0.latest[2]?.left == 1 && $0.latest[2]?.right == 1 && $0.latest[1]?.left == 0 && $0.latest[3]?.right == 0 },
                "\(old.displays.suffix(6))")
        #expect(old.latest[2]?.label == "cam2            " && old.latest[2]?.brightness == 3)

        // TCP: the same, framed; after the receiver closes, the sender connects again and sends it all.
        #expect(tcp.receive(seconds: 10) { $0.latest[2]?.left == 1 && $0.latest[1]?.left == 0 && $0.latest[3] != nil }, "\(tcp.displays.suffix(6))")
        tcp.closeConnection()
        let before = tcp.displays.count
        #expect(tcp.receive(seconds: 10) { $0.connections == 2 && $0.displays.count >= before + 3 }, "connections: \(tcp.connections)")
        #expect(tcp.latest[2]?.label == "cam2" && tcp.latest[2]?.left == 1)
        #expect(server.tally.senders[1].counters.connects >= 2 && server.tally.senders[1].counters.disconnects >= 1)
        #expect(server.topology.rows.contains { $0.first == "`tally.tsl2`" && $0.last?.hasPrefix("`studio.program`: newest only") == true },
                "\(server.topology.rows)")
        let metrics = try client.request("metrics")["text"]?.stringValue ?? ""
        #expect(metrics.contains("studio_tally_tsl_messages_total{destination=\"tsl1 TSL 5 udp 127.0.0.1:\(udp.port) screen 3\"}"), "\(metrics.suffix(1500))")
        #expect(metrics.contains("studio_tally_tsl_connected{destination=\"tsl2 TSL 5 tcp 127.0.0.1:\(tcp.port) screen 0\"} 1"))
    }

    /// A vMix client: reads a line at a time from a `HTTPTestClient` socket.
    final class VMixClient {
        let socket: HTTPTestClient
        var pending: [UInt8] = []
        init(port: UInt16) throws { socket = try HTTPTestClient(port: Int(port)) }

        func send(_ line: String) throws { try socket.send(Array((line + "\r\n").utf8)) }

        /// The next line (without CRLF); nil after `seconds`.
        func line(seconds: Double = 5) -> String? {
            if pending.firstIndex(of: 0x0A) == nil { pending += socket.read(seconds: seconds) { $0.contains(0x0A) } }
            guard let end = pending.firstIndex(of: 0x0A) else { return nil }
            defer { pending.removeSubrange(...end) }
            return String(decoding: pending[..<end], as: UTF8.self).trimmingCharacters(in: .newlines)
        }

        /// Lines until one satisfies `condition` (that one), or nil.
        func line(seconds: Double = 5, where condition: (String) -> Bool) -> String? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                guard let next = line(seconds: max(0.1, deadline.timeIntervalSinceNow)) else { return nil }
                if condition(next) { return next }
            }
            return nil
        }

        /// Reads lines until every one of `wanted` came, in any order (a function's reply and the tally it
        /// caused may come either way round); whether they all did.
        func sees(_ wanted: String..., seconds: Double = 5) -> Bool {
            var missing = Set(wanted)
            let deadline = Date().addingTimeInterval(seconds)
            while !missing.isEmpty, Date() < deadline {
                guard let next = line(seconds: max(0.1, deadline.timeIntervalSinceNow)) else { return false }
                missing.remove(next)
            }
            return missing.isEmpty
        }

        /// `count` bytes after what is pending.
        func bytes(_ count: Int) -> [UInt8] {
            if pending.count < count { pending += socket.read(seconds: 5) { [pending] in pending.count + $0.count >= count } }
            defer { pending.removeFirst(min(count, pending.count)) }
            return Array(pending.prefix(count))
        }
    }

    @Test func vmixClientsSubscribeToTallyAndFunctionsAreRefusedByDefault() throws {
        let scratch = try ScratchStudio("tally-vmix")
        defer { scratch.remove() }
        let (server, client) = try Self.serve(scratch, tally: TallySettings(vmix: ListenAddress(host: "127.0.0.1", port: 0)))
        defer { server.shutdown() }
        let port = try #require(server.tally.vmix?.port)
        let light = try VMixClient(port: port)
        try light.send("SUBSCRIBE TALLY")
        #expect(light.line() == "SUBSCRIBE OK TALLY")
        #expect(light.line()?.hasPrefix("TALLY OK ") == true, "the tally at once")
        #expect(light.line { $0 == "TALLY OK 100" } != nil, "cam1 on program (once the first frame is out)")

        _ = try client.request("switch", arguments: ["source": .string("cam2")])
        #expect(light.line { $0 == "TALLY OK 010" } != nil)
        _ = try client.request("preview", arguments: ["source": .string("cam3")])
        #expect(light.line { $0 == "TALLY OK 012" } != nil)

        // A second client asks once; XML numbers the inputs the same way; garbage gets ER, not a hang-up.
        let asker = try VMixClient(port: port)
        try asker.send("TALLY")
        #expect(asker.line() == "TALLY OK 012")
        try asker.send("XML")
        let head = try #require(asker.line())
        let length = try #require(Int(head.dropFirst(4)), "\(head)")
        let xml = String(decoding: asker.bytes(length), as: UTF8.self)
        #expect(head.hasPrefix("XML ") && xml.contains("number=\"2\" type=\"Capture\" title=\"cam2\"") && xml.contains("<active>2</active><preview>3</preview>"), "\(xml)")
        try asker.send("FUNCTION Cut")
        #expect(asker.line()?.hasPrefix("FUNCTION ER functions are off") == true)
        try asker.send("\u{7}WHAT is this")
        #expect(asker.line()?.contains(" ER unknown command") == true)
        try asker.send("TALLY")
        #expect(asker.line() == "TALLY OK 012", "still answered after the bad lines")
        #expect(try client.request("status")["program"]?["source"] == "cam2", "nothing switched")
        #expect(server.tally.vmix?.counters.refusedLines == 2)
        #expect((try client.request("metrics")["text"]?.stringValue ?? "").contains("studio_tally_vmix_refused_lines_total 2"))
    }

    @Test func vmixFunctionsPreviewAndCutWhenTurnedOn() throws {
        let scratch = try ScratchStudio("tally-vmix-fn")
        defer { scratch.remove() }
        let (server, client) = try Self.serve(scratch, tally: TallySettings(vmix: ListenAddress(host: "127.0.0.1", port: 0), vmixFunctions: true))
        defer { server.shutdown() }
        let surface = try VMixClient(port: try #require(server.tally.vmix?.port))
        try surface.send("SUBSCRIBE TALLY")
        #expect(surface.line { $0 == "TALLY OK 100" } != nil)
        try surface.send("FUNCTION PreviewInput Input=3")
        #expect(surface.sees("FUNCTION OK PreviewInput", "TALLY OK 102"))
        try surface.send("FUNCTION Cut")
        #expect(surface.sees("FUNCTION OK Cut", "TALLY OK 201"), "cut swaps program and preview")
        try surface.send("FUNCTION CutDirect Input=cam2")
        #expect(surface.sees("FUNCTION OK CutDirect", "TALLY OK 210"))
        #expect(try client.request("status")["program"]?["source"] == "cam2")
        // The switcher's own errors come back as ER.
        try surface.send("FUNCTION PreviewInput Input=9")
        #expect(surface.line { $0.hasPrefix("FUNCTION") }?.hasPrefix("FUNCTION ER no input 9") == true)
        // The switch went through the same path as the CLI's: a switch event in the log.
        let log = try client.request("log")["events"]?.arrayValue ?? []
        #expect(log.contains { $0["kind"] == "switch" && $0["camera"] == "cam2" })
    }

    @Test func aBusyVMixPortStopsTheStartWithTheKeyToChange() throws {
        let scratch = try ScratchStudio("tally-busy")
        defer { scratch.remove() }
        let holder = try TSLReceiver(tcp: true)  // a listener on a free port: now a busy one
        do {
            let (server, _) = try Self.serve(scratch, tally: TallySettings(vmix: ListenAddress(host: "127.0.0.1", port: UInt16(holder.port))), cameras: 1)
            server.shutdown()
            Issue.record("the server started on a busy port")
        } catch {
            #expect("\(error)".contains("cannot serve vMix tally on 127.0.0.1:\(holder.port)") && "\(error)".contains("tally.vmix_port"), "\(error)")
        }
    }

    @Test func theTallyPageNeedsTheTokenAndNamesTheCamerasWhenOneIsUnknown() throws {
        let scratch = try ScratchStudio("tally-page")
        defer { scratch.remove() }
        let token = "tally-page-token-0123456789"
        let options = scratch.options(httpToken: token, cameras: 2)
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let port = Int(try #require(server.http?.port))

        #expect(try HTTPTestClient.fetch(port: port, "GET", "/tally/cam2").status == 401, "the page needs the token on this listener")
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/tally/cam2?token=wrong-token-0123456789").status == 401)
        let page = try HTTPTestClient.fetch(port: port, "GET", "/tally/cam2?token=\(token)")
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8", "\(page.status)")
        for hook in ["data-tally=", "/api/v1/events", "/api/v1/status", "program_ms", "EventSource"] {
            #expect(page.text.contains(hook), "the page has no \(hook)")
        }
        #expect(!page.text.contains("<script src") && !page.text.contains("<link"), "one file: nothing else to fetch with the token")
        let unknown = try HTTPTestClient.fetch(port: port, "GET", "/tally/cam9?token=\(token)")
        #expect(unknown.status == 404 && unknown.text.contains("cam9") && unknown.text.contains("/tally/cam1") && unknown.text.contains("/tally/cam2"),
                "\(unknown)")
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/tally.html?token=\(token)").status == 404, "served for a camera only")
    }
}
