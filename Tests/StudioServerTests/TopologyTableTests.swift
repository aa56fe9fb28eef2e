import Foundation
import Testing
import Capture
import Control
import StudioConfig
import StudioCore
@testable import StudioServer

/// The pipeline's graph (`StudioServer.topology`) is what docs/architecture.md draws in "Topology: what
/// feeds what", and it follows the sources and outputs that come and go while the server runs.
@Suite(.serialized) struct TopologyTableTests {
    static let section = "Topology: what feeds what"

    /// A server as the doc's table was drawn from: `studio serve --cameras 2 --record DIR` (the tone, the
    /// HTTP API on a loopback port).
    func withServer(_ body: (StudioServer, URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-topology-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = StudioConfiguration()
        configuration.http.listen = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.recordDirectory = directory.appendingPathComponent("recordings").path
        var options = ServerOptions(configuration: configuration, databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 2
        options.testCameraSize = (320, 180)
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        try body(server, directory)
    }

    @Test func theDocumentedTopologyIsTheOneAServerBuilds() throws {
        try withServer { server, _ in
            let rows = server.topology.rows
            let built = rows.map { $0.map { $0.replacingOccurrences(of: "`", with: "") } }
            let columns = try (0..<4).map { try DocumentTables.cells(of: "docs/architecture.md", section: Self.section, column: $0) }
            let documented = columns[0].indices.map { row in columns.map { $0[row] } }
            let table = rows.map { "| " + $0.joined(separator: " | ") + " |" }.joined(separator: "\n")
            #expect(documented == built, "docs/architecture.md, \(Self.section): the table's rows should read\n\(table)")
        }
    }

    @Test func theTopologyCommandAnswersTheGraph() throws {
        try withServer { server, directory in
            let client = try ControlClient(socketPath: directory.appendingPathComponent("studio.sock").path)
            let reply = try client.call(StatusSignatures.Topology.self, NoArguments(), timeoutSeconds: 10).value
            #expect(reply == server.topology.reply)
            #expect(reply.nodes.first == TopologyReply.Node(name: "cap.cam1", kind: "source", what: "test-pattern camera"))
            #expect(reply.edges.contains(TopologyReply.Edge(from: "studio.program", to: "encode.video",
                                                            handoff: "BoundedQueue (8); full: the frame dropped, counted")))
        }
    }

    @Test func everyEdgeJoinsTwoNodesAndTheMediaFlowsTopToBottom() throws {
        try withServer { server, _ in
            let topology = server.topology
            let order = Dictionary(uniqueKeysWithValues: topology.nodes.enumerated().map { ($1.name, $0) })
            for edge in topology.edges {
                let from = try #require(order[edge.from]), to = try #require(order[edge.to])
                #expect(from < to, "\(edge.from) feeds \(edge.to), which is drawn above it")
            }
            // The program's path, as the introduction's diagram has it.
            let path = ["cap.cam1", "studio.program", "encode.video", "fan-out", "out.recording"]
            for (from, to) in zip(path, path.dropFirst()) {
                #expect(topology.inputs(of: to).contains { $0.from == from }, "\(from) feeds \(to)")
            }
            #expect(topology.inputs(of: "out.iso-cam2").map(\.from) == ["encode.cam2", "encode.audio"])
        }
    }

    @Test func aNameTakenTwiceGetsASuffixAndItsEdgesFollowIt() {
        var graph = Topology()
        let camera = graph.add("cap.audio", .source, "a camera pinned as audio")
        let input = graph.add("tone", .audioInput, "the test tone")
        let mixer = graph.add("cap.audio", .mixer, "the mixer", fedBy: [input], through: .clocked)
        graph.add("studio.program", .switcher, "the switcher", fedBy: [camera], through: .newest)
        #expect(camera == "cap.audio" && mixer == "cap.audio#2")
        #expect(graph.inputs(of: "cap.audio#2").map(\.from) == ["tone"] && graph.inputs(of: "studio.program").map(\.from) == ["cap.audio"])
        #expect(graph.rows.map { $0[0] } == ["`cap.audio`", "`tone`", "`cap.audio#2`", "`studio.program`"])
    }

    @Test func anOutputAddedMidShowIsInItAndGoneOnceRemoved() throws {
        try withServer { server, _ in
            #expect(server.topology.node(named: "out.extra") == nil)
            _ = try server.outputs.add(name: "extra", url: nil, record: true, by: "test")
            let added = server.topology
            #expect(added.node(named: "out.extra")?.kind == .output)
            #expect(added.inputs(of: "out.extra").map(\.from) == ["fan-out"])

            let removed = DispatchSemaphore(value: 0)
            try server.outputs.remove("extra", by: "test", done: { _ in removed.signal() })
            #expect(removed.wait(timeout: .now() + 20) == .success, "the output stopped")
            #expect(server.topology.node(named: "out.extra") == nil)
            #expect(server.topology.node(named: "out.recording") != nil, "the other outputs stay")
        }
    }

    @Test func aSourceFoundMidShowIsInItWithItsIsoFeed() throws {
        try withServer { server, _ in
            let camera = try TestPatternCamera(id: CameraID("cam3"), format: CameraFormat(pixelFormat: .i420, width: 320, height: 180, frameRate: Rational(30)),
                                               identity: "test:topology")
            #expect(server.topology.node(named: "cap.cam3") == nil)
            server.cameras.cameraAppeared(camera)
            let found = server.topology
            #expect(found.node(named: "cap.cam3")?.kind == .source)
            #expect(found.inputs(of: "studio.program").map(\.from) == ["cap.cam1", "cap.cam2", "cap.cam3"])
            #expect(found.inputs(of: "iso.cam3").map(\.from) == ["cap.cam3"])
            #expect(found.inputs(of: "out.iso-cam3").map(\.from) == ["encode.cam3", "encode.audio"])
            // Lost, it stays: the switcher still cuts to its slate and its ISO file waits for it.
            server.cameras.cameraDisappeared(camera)
            #expect(server.topology.node(named: "cap.cam3") != nil)
        }
    }
}
