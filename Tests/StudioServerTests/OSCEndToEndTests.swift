import Foundation
import Testing
import Control
import StudioConfig
import StudioCore
import TestSupport
@testable import StudioServer

/// OSC into a real server with three test-pattern cameras, from peers whose packets python3 builds and
/// reads (osc_packet.py): a switch through the same router as the CLI's, answered with the same reply and
/// the tally back to a subscribed surface; wrong arguments and garbage refused, counted, nothing switched.
/// And tally clients by the hundred against a running program: never late, the ones past the limit refused.
@Suite(.serialized) struct OSCEndToEndTests {
    static func serve(_ scratch: ScratchStudio, osc: OSCSettings = OSCSettings(), tally: TallySettings = TallySettings(),
                      cameras: Int = 3) throws -> (StudioServer, ControlClient) {
        var options = scratch.options()
        options.testCameraCount = cameras
        options.configuration.osc = osc
        options.configuration.tally = tally
        let server = try StudioServer(options: options)
        return (server, try ControlClient(socketPath: options.socketPath))
    }

    static func metric(_ client: ControlClient, _ line: String) throws -> Bool {
        (try client.request("metrics")["text"]?.stringValue ?? "").split(separator: "\n").contains { $0 == line }
    }

    @Test func anOSCSwitchIsTheCLIsAndTheTallyComesBack() throws {
        let scratch = try ScratchStudio("osc-switch")
        defer { scratch.remove() }
        let (server, client) = try Self.serve(scratch, osc: OSCSettings(listen: ListenAddress(host: "127.0.0.1", port: 0)))
        defer { server.shutdown() }
        let port = try #require(server.osc?.port)
        let surface = try OSCPeer(), lights = try OSCPeer()

        try lights.send(#"["/studio/subscribe"]"#, to: port)
        #expect(lights.receive(seconds: 10) { $0.contains(#"["/studio/tally/cam1", ["i", 1]]"#) }, "cam1 on program once the first frame is out: \(lights.received.suffix(8))")

        try surface.send(#"["/studio/switch", ["s", "cam2"]]"#, to: port)
        #expect(surface.receive(seconds: 10) { $0.contains { $0.hasPrefix(#"["/studio/reply", ["s", "/studio/switch"]"#) } }, "\(surface.received)")
        #expect(lights.receive(seconds: 5) { $0.contains(#"["/studio/tally/cam1", ["i", 0]]"#) && $0.contains(#"["/studio/tally/cam2", ["i", 1]]"#) },
                "\(lights.received.suffix(8))")
        #expect(lights.got("/studio/tally/program", #"["s", "cam2"]"#))
        #expect(try client.request("status")["program"]?["source"] == "cam2")
        // The reply is the CLI's: the same keys, the program time of the cut's first frame.
        let replyLine = try #require(surface.received.first { $0.hasPrefix(#"["/studio/reply""#) })
        let replyJSON = try #require(try JSONSerialization.jsonObject(with: Data(replyLine.utf8)) as? [Any])
        let reply = try JSONValue(parsing: Array(((replyJSON[2] as? [Any])?[1] as? String ?? "").utf8))
        let cli = try client.request("switch", arguments: ["source": .string("cam2")])
        #expect(reply.objectValue.map { Set($0.keys) } == cli.objectValue.map { Set($0.keys) } && reply["source"] == "cam2", "\(reply)")
        #expect((reply["program_ms"]?.intValue ?? -1) > 0 && (reply["program_ms"]?.intValue ?? 0) <= (cli["program_ms"]?.intValue ?? 0))

        // Preview and a cut; the overlay-less server says so as the CLI would, to the sender.
        try surface.send(#"{"elements": [["/studio/preview", ["s", "cam3"]], ["/studio/cut"]]}"#, to: port)
        #expect(lights.receive(seconds: 5) { $0.contains(#"["/studio/tally/cam3", ["i", 1]]"#) }, "\(lights.received.suffix(8))")
        #expect(try client.request("status")["program"]?["source"] == "cam3")

        // A mixer input's gain by name in the address, and its level back to the subscriber.
        let input = try #require(try client.request("audio")["inputs"]?[0]?["name"]?.stringValue)
        try surface.send(#"["/studio/audio/\#(input)/gain", ["f", -6.0]]"#, to: port)
        #expect(surface.receive(seconds: 5) { $0.contains { $0.hasPrefix(#"["/studio/reply", ["s", "/studio/audio/\#(input)/gain"]"#) } }, "\(surface.received.suffix(3))")
        #expect(try client.request("audio")["inputs"]?[0]?["gain_db"]?.doubleValue == -6)
        #expect(lights.receive(seconds: 5) { $0.contains { $0.hasPrefix(#"["/studio/levels/\#(input)", ["f", "#) } && $0.contains { $0.hasPrefix(#"["/studio/levels/master", ["f", "#) } })

        // A wrong type: the CLI's error to the sender, counted, logged, nothing switched.
        try surface.send(#"["/studio/switch", ["i", 1]]"#, to: port)
        #expect(surface.receive(seconds: 5) { $0.contains { $0.hasPrefix(#"["/studio/error", ["s", "/studio/switch"], ["s", "invalid_argument"], ["s", "switch: argument \"source\" must be a string"#) } },
                "\(surface.received.suffix(4))")
        // Garbage, an unknown address, a bundle with garbage inside: refused, the server goes on.
        surface.send([0x23, 0x62, 0x75, 0x6E], to: port)
        var bad = try OSCPeer.encode(#"{"elements": [["/studio/switch", ["s", "cam1"]]]}"#)
        bad[19] = 0xFF  // the element's size: past the end
        surface.send(bad, to: port)
        try surface.send(#"["/studio/swich", ["s", "cam1"]]"#, to: port)
        #expect(surface.receive(seconds: 5) { $0.contains { $0.hasPrefix(#"["/studio/error", ["s", "/studio/swich"], ["s", "unknown_address"]"#) } })
        #expect(waitUntil(seconds: 5) { server.osc?.counters.refused[.malformed] == 2 }, "\(String(describing: server.osc?.counters))")
        #expect(try Self.metric(client, #"studio_osc_refused_total{reason="invalid_argument"} 1"#))
        #expect(try Self.metric(client, #"studio_osc_refused_total{reason="unknown_address"} 1"#))
        #expect(try Self.metric(client, #"studio_osc_refused_total{reason="malformed"} 2"#))
        #expect(try Self.metric(client, "studio_osc_subscribers 1"))
        #expect(try client.request("status")["program"]?["source"] == "cam3", "nothing switched")
        #expect(server.topology.rows.contains { $0.first == "`osc`" }, "\(server.topology.rows)")
        // The switch went the CLI's way: an event with the origin osc... at least a switch event for cam2.
        let log = try client.request("log")["events"]?.arrayValue ?? []
        #expect(log.contains { $0["kind"] == "switch" && $0["camera"] == "cam2" })
    }

    @Test func aBusyOSCPortStopsTheStartWithTheKeyToChange() throws {
        let scratch = try ScratchStudio("osc-busy")
        defer { scratch.remove() }
        let holder = try OSCPeer()
        do {
            let (server, _) = try Self.serve(scratch, osc: OSCSettings(listen: ListenAddress(host: "127.0.0.1", port: holder.port)), cameras: 1)
            server.shutdown()
            Issue.record("the server started on a busy port")
        } catch {
            #expect("\(error)".contains("cannot listen for OSC on udp 127.0.0.1:\(holder.port)") && "\(error)".contains("osc.listen"), "\(error)")
        }
    }

    /// Part 7 of issue 33: 260 vMix tally subscribers (the limit is 256: the rest refused and counted),
    /// two TSL TCP receivers that never read and an OSC subscriber, while the program is cut ten times:
    /// no late program tick, every subscriber still told.
    @Test func hundredsOfTallyClientsNeverMakeTheProgramLate() throws {
        let scratch = try ScratchStudio("osc-crowd")
        defer { scratch.remove() }
        let deaf = try (0..<2).map { _ in try TSLReceiver(tcp: true) }
        let tally = TallySettings(tsl: deaf.map { TSLDestination(address: ListenAddress(host: "127.0.0.1", port: UInt16($0.port)), version: .v5, transport: .tcp) },
                                  vmix: ListenAddress(host: "127.0.0.1", port: 0))
        let (server, client) = try Self.serve(scratch, osc: OSCSettings(listen: ListenAddress(host: "127.0.0.1", port: 0)), tally: tally)
        defer { server.shutdown() }
        let vmixPort = try #require(server.tally.vmix?.port), oscPort = try #require(server.osc?.port)
        // Nothing of the test's own that costs CPU in the window measured (python3 builds and reads the
        // OSC packets before and after it), and the start behind it (a second of frames).
        let subscribe = try OSCPeer.encode(#"["/studio/subscribe"]"#)
        let surface = try OSCPeer()
        #expect(waitUntil(seconds: 10) { (try? client.request("status")["program"]?["frames"]?.intValue ?? 0) ?? 0 > 30 })
        let lateBefore = try #require(try client.request("status")["program"]?["late_ticks"]?.intValue)

        let clients = try (0..<260).map { _ in try HTTPTestClient(port: Int(vmixPort)) }
        for light in clients { try? light.send(Array("SUBSCRIBE TALLY\r\n".utf8)) }
        #expect(waitUntil(seconds: 10) { server.tally.vmix?.counters.clients == 256 }, "\(String(describing: server.tally.vmix?.counters))")
        #expect(waitUntil(seconds: 10) { (server.tally.vmix?.counters.dropped ?? 0) >= 4 }, "the four past the limit refused and counted")
        surface.send(subscribe, to: oscPort)
        #expect(waitUntil(seconds: 5) { server.osc?.counters.subscribers == 1 })

        for cut in 0..<10 {
            _ = try client.request("switch", arguments: ["source": .string("cam\(cut % 3 + 1)")])
        }
        #expect(try client.request("status")["program"]?["source"] == "cam1")
        let sample = clients[0..<200].last!
        let lines = String(decoding: sample.read(seconds: 5) { String(decoding: $0, as: UTF8.self).contains("TALLY OK 100") }, as: UTF8.self)
        #expect(lines.contains("TALLY OK 100"), "a subscriber among the first 200 still told: \(lines.suffix(200))")
        // Served beside the program, never in its way: a program thread that waited on the clients (a write
        // to one that never reads, the fan-out to 256) would miss tens of ticks a second. A loaded machine
        // (2 cores, this process opening 260 connections) may cost a few; half a second's worth fails.
        let lateAfter = try #require(try client.request("status")["program"]?["late_ticks"]?.intValue)
        #expect(lateAfter - lateBefore <= 15, "late program ticks while the tally clients were served: \(lateAfter - lateBefore)")
        #expect(surface.receive(seconds: 5) { $0.contains(#"["/studio/tally/program", ["s", "cam1"]]"#) })
        #expect(try Self.metric(client, "studio_tally_vmix_clients 256"))
        _ = deaf
    }
}
