import Foundation
import Testing
import Control
import StudioCore
import StudioSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 32's end-to-end test, each studio on a "PC" of its own: a switcher (`studio serve`: its SRT
/// listener, its HTTP API asking for a token, recording its program and ISO files) in one network
/// namespace, and two capture nodes `pc2` and `pc3` in namespaces of their own, each joined to the
/// switcher's by a veth pair (TestSupport's `NetworkNamespaces`: loopback-style addresses, nothing else
/// between them). Each node has two test-pattern cameras, recording their ISO files: pc2's `cam1` red
/// and `cam2` green, pc3's pinned `cam3` blue and `cam4` yellow (the ident colour goes by the name).
/// The four cameras appear on the switcher as `pc2/cam1`...; cuts between them (`studio switch` over the
/// switcher's control socket, a file every namespace sees) put their colours on the program, each on
/// its frame (the history's program time against the program recording's colour changes); the tally
/// reaches the nodes (each node's `cameras`: `switcher_tally`); pc2 killed (SIGKILL) and started again
/// comes back under the same names, and the switcher's session lists both of its sessions. After the
/// show the nodes' ISO files are collected onto the switcher's "PC" (`studio collect`, in its namespace,
/// over the links) and exported (`export --iso --format otio`): read by the real opentimelineio, the four
/// cameras' files (pc2's of its second session) line up on the timeline, each second of the real wall
/// clock (the test pattern's sync strip) on the same frame in all four within one, pc3's clock 3 s
/// ahead of the others (`--inject-clock-offset`) all along.
@Suite(.serialized) struct NodesInNamespacesEndToEndTests {
    static let switcherToken = "switcher-token-0123456789"
    static let nodes = ["pc2": ["cam1", "cam2"], "pc3": ["cam3", "cam4"]]
    /// Inside its namespace each studio has ports of its own: the same numbers on every machine.
    static let (srtPort, switcherHTTP, nodeHTTP) = (9710, 8080, 8081)
    static let idents: [CameraID] = ["cam1", "cam2", "cam3", "cam4"]

    /// The switcher and its two nodes, each in its namespace, started; `links[node]` joins the node's
    /// namespace to the switcher's.
    final class Show {
        let namespaces: NetworkNamespaces
        let links: [String: NetworkNamespaces.Link]
        let switcher: StudioHarness
        let nodes: [String: StudioHarness]
        let records: URL
        var nodeArguments: [String: [String]] = [:]

        init() throws {
            namespaces = try NetworkNamespaces()
            let sw = try namespaces.add("switcher")
            var links: [String: NetworkNamespaces.Link] = [:]
            var nodes: [String: StudioHarness] = [:]
            for node in NodesInNamespacesEndToEndTests.nodes.keys.sorted() {
                let namespace = try namespaces.add(node)
                links[node] = try namespaces.link(sw, namespace)
                nodes[node] = try StudioHarness(namespace: namespace)
            }
            (self.links, self.nodes) = (links, nodes)
            switcher = try StudioHarness(namespace: sw)
            records = switcher.directory.appendingPathComponent("recordings")
            try startSwitcher()
            for node in nodes.keys.sorted() { try startNode(node) }
        }

        func token(of node: String) -> String { "\(node)-node-token-0123456789" }
        func passphrase(of node: String) -> String { "\(node)-own-secret" }

        /// The switcher: its listener and API on every address of its namespace (one veth per node), the
        /// nodes' APIs at their ends of the links.
        func startSwitcher() throws {
            let entries = links.keys.sorted().map { node in
                "      - {name: \(node), passphrase: \(passphrase(of: node)), api: \"http://\(links[node]!.addressB):\(NodesInNamespacesEndToEndTests.nodeHTTP)\", token: \(token(of: node))}"
            }
            let config = switcher.directory.appendingPathComponent("switcher.yaml")
            try """
                http:
                  token: \(NodesInNamespacesEndToEndTests.switcherToken)
                network:
                  srt:
                    listen: 0.0.0.0:\(NodesInNamespacesEndToEndTests.srtPort)
                    nodes:
                \(entries.joined(separator: "\n"))

                """.write(to: config, atomically: true, encoding: .utf8)
            try switcher.serve(["--config", config.path, "--backends", "none", "--audio", "silence", "--program", "320x180@30",
                                "--record", records.path, "--http", "0.0.0.0:\(NodesInNamespacesEndToEndTests.switcherHTTP)"])
        }

        /// A node sending to the switcher's end of its link, following its tally there; its API on its own end.
        func startNode(_ node: String) throws {
            let harness = nodes[node]!
            let (switcherAddress, ownAddress) = (links[node]!.addressA, links[node]!.addressB)
            let names = NodesInNamespacesEndToEndTests.nodes[node]!
            let config = harness.directory.appendingPathComponent("node.yaml")
            try """
                node:
                  name: \(node)
                  send: srt://\(switcherAddress):\(NodesInNamespacesEndToEndTests.srtPort)
                  passphrase: \(passphrase(of: node))
                  tally_from: http://\(switcherAddress):\(NodesInNamespacesEndToEndTests.switcherHTTP)
                  token: \(NodesInNamespacesEndToEndTests.switcherToken)
                http:
                  token: \(token(of: node))
                cameras:
                  pins:
                    - {match: "test-pattern:1", name: \(names[0])}
                    - {match: "test-pattern:2", name: \(names[1])}

                """.write(to: config, atomically: true, encoding: .utf8)
            let arguments = ["--config", config.path, "--cameras", "2", "--camera-size", "320x180", "--program", "320x180@30",
                             "--record", harness.directory.appendingPathComponent("iso").path, "--http", "\(ownAddress):\(NodesInNamespacesEndToEndTests.nodeHTTP)"]
                // pc3's clock runs 3 s ahead (injected: the machine's is one for all): its files still line up.
                + (node == "pc3" ? ["--inject-clock-offset", "3000"] : [])
            nodeArguments[node] = arguments
            try harness.serve(arguments)
        }

        func client(_ harness: StudioHarness) throws -> ControlClient { try ControlClient(socketPath: harness.socket) }

        /// The switcher's cameras: name to state.
        func cameras() -> [String: String] {
            let list = (try? client(switcher).request("cameras"))?["cameras"]?.arrayValue ?? []
            return Dictionary(list.compactMap { camera in camera["name"]?.stringValue.map { ($0, camera["state"]?.stringValue ?? "?") } },
                              uniquingKeysWith: { first, _ in first })
        }

        /// A node's senders' connection states, by stream id.
        func senders(_ node: String) -> [String: String] {
            let list = (try? client(nodes[node]!).request("status"))?["senders"]?.arrayValue ?? []
            return Dictionary(list.compactMap { sender in
                sender["stream_id"]?.stringValue.map { ($0, sender["output"]?["state"]?.stringValue ?? "?") }
            }, uniquingKeysWith: { first, _ in first })
        }

        func sendersConnected(_ node: String) -> Bool {
            let states = senders(node)
            return states.count == NodesInNamespacesEndToEndTests.nodes[node]!.count && states.values.allSatisfy { $0 == "connected" }
        }

        /// Each node's `switcher_tally`, by its own camera names.
        func tally(_ node: String) -> [String: String] {
            (try? client(nodes[node]!)).map { NodeTallyEndToEndTests.switcherTally($0) } ?? [:]
        }

        /// Every studio's stderr, for a failure's message.
        func said() -> String {
            nodes.merging(["switcher": switcher]) { node, _ in node }.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.server?.errorText().suffix(1500) ?? "")" }
                .joined(separator: "\n")
        }

        deinit {
            for harness in [switcher] + Array(nodes.values) { _ = harness.stopServer(timeout: 10) }
            namespaces.remove()
        }
    }

    static let allLive = ["pc2/cam1": "live", "pc2/cam2": "live", "pc3/cam3": "live", "pc3/cam4": "live"]

    @Test(.enabled(if: NetworkNamespacesTests.unavailable == nil, NetworkNamespacesTests.skipped))
    func twoNodesInNamespacesOfTheirOwnFeedOneSwitcher() throws {
        let started = MonotonicClock.now()
        let show = try Show()
        let switcher = show.switcher
        #expect(waitUntil(seconds: 60, every: 0.2) { show.cameras() == Self.allLive }, "\(show.cameras())\n\(show.said())")

        // Cuts over the switcher's control socket, each after 45 program frames; the replies' program times.
        var cuts: [(camera: String, programMS: Int)] = []
        func cut(_ camera: String, preview: String? = nil) throws {
            let reply = try switcher.json(["switch", camera])
            cuts.append((camera, try #require(reply["program_ms"]?.intValue, "\(reply)")))
            if let preview { _ = try switcher.json(["preview", preview]) }
            #expect(switcher.waitForProgramFrames(45, seconds: 60), "the program stalled after \(camera)")
        }
        func tallies(_ expected: [String: [String: String]]) -> Bool {
            waitUntil(seconds: 15, every: 0.1) { expected.allSatisfy { show.tally($0.key) == $0.value } }
        }
        try cut("pc3/cam3")
        try cut("pc2/cam1")
        try cut("pc3/cam4", preview: "pc2/cam2")
        #expect(tallies(["pc2": ["cam1": "none", "cam2": "preview"], "pc3": ["cam3": "none", "cam4": "program"]]),
                "\(show.tally("pc2")) \(show.tally("pc3"))")
        _ = try switcher.json(["preview", "pc3/cam3"])
        try cut("pc2/cam2")
        #expect(tallies(["pc2": ["cam1": "none", "cam2": "program"], "pc3": ["cam3": "preview", "cam4": "none"]]),
                "\(show.tally("pc2")) \(show.tally("pc3"))")
        try cut("pc3/cam4")

        // pc2 killed by its PID (ip netns exec runs studio itself under it), then started again: its
        // cameras lost, then back under the same names, no other camera; a new session of its own.
        let pc2 = try #require(show.nodes["pc2"]?.server)
        let firstSession = try #require(try show.client(show.nodes["pc2"]!).request("status")["session"]?.intValue)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pc2.pid)/exe"))?.hasSuffix("/studio") == true)
        pc2.terminate(signal: SIGKILL)
        #expect(pc2.wait(timeout: 10) == .signalled(SIGKILL))
        #expect(waitUntil(seconds: 30, every: 0.2) { show.cameras()["pc2/cam1"] == "lost" && show.cameras()["pc2/cam2"] == "lost" }, "\(show.cameras())")
        try show.nodes["pc2"]!.serve(show.nodeArguments["pc2"]!)
        // Back once the restarted node's senders are connected (the switcher refuses them until the old
        // connections are over, and they call again with backoff) and the switcher has them live.
        #expect(waitUntil(seconds: 60, every: 0.2) { show.sendersConnected("pc2") && show.cameras() == Self.allLive },
                "\(show.cameras()) \(show.senders("pc2"))\n\(show.said())")
        let secondSession = try #require(try show.client(show.nodes["pc2"]!).request("status")["session"]?.intValue)
        #expect(secondSession != firstSession)
        try cut("pc2/cam1")
        #expect(tallies(["pc2": ["cam1": "program", "cam2": "none"], "pc3": ["cam3": "preview", "cam4": "none"]]), "\(show.tally("pc2"))")
        // Three more seconds of show: pc2's second session's files hold a few wall-clock seconds for the
        // timeline check (CI once had one in pc2/cam2's under load).
        #expect(switcher.waitForProgramFrames(90, seconds: 60), "the program stalled after pc2 came back")

        // The switcher's session lists both of pc2's sessions (the files of each) and pc3's.
        func nodeEntries() -> [String: JSONValue] {
            let entries = (try? switcher.json(["recordings"]))?["nodes"]?.arrayValue ?? []
            return Dictionary(entries.compactMap { entry in entry["node"]?.stringValue.map { ($0, entry) } }, uniquingKeysWith: { a, _ in a })
        }
        func sessions(_ entry: JSONValue?) -> Set<Int> {
            Set((entry?["recordings"]?.arrayValue ?? []).filter { $0["kind"] == "iso" }.compactMap { $0["node_session"]?.intValue })
        }
        #expect(waitUntil(seconds: 40, every: 0.5) {
            let entries = nodeEntries()
            return entries["pc2"]?["node_session"]?.intValue == secondSession && sessions(entries["pc2"]) == [firstSession, secondSession]
                && entries["pc3"]?["state"] == "answered" && sessions(entries["pc3"]).count == 1
        }, "\(nodeEntries())")
        let listed = try switcher.run(["recordings", "--socket", switcher.socket])
        #expect(listed.output.contains("node pc2 · its session \(secondSession)"), "\(listed.output)")

        // The show ends; the history's cuts against the program recording, frame by frame.
        #expect(switcher.stopServer() == .exited(0), "\(show.said())")
        let log = try JSONValue(parsing: try switcher.run(["log", "--json", "--db", switcher.database]).output)
        let session = try #require(log["session"]?["id"]?.intValue)
        let switches = (log["events"]?.arrayValue ?? []).filter { $0["kind"] == "switch" }
            .compactMap { event in event["camera"]?.stringValue.flatMap { camera in event["program_ms"]?.intValue.map { (camera, $0) } } }
        #expect(Array(switches.suffix(cuts.count)).map { "\($0.0)@\($0.1)" } == cuts.map { "\($0.camera)@\($0.programMS)" },
                "the history's switches \(switches), the replies' \(cuts)")
        try Self.checkProgram(show.records.appendingPathComponent("session-\(session)-program.mkv"), cuts: cuts)
        try Self.checkIsoFiles(in: show.records, session: session)
        try Self.checkTimeline(show, session: session, pc2Session: secondSession)
        print("NodesInNamespacesEndToEndTests: \(cuts.count) cuts, the show \(Double(MonotonicClock.now() - started) / 1e9) s")
        withExtendedLifetime(show) {}  // its studios and namespaces until here
    }

    /// The nodes' files collected to the switcher's machine and the session exported as OTIO there (both in
    /// the switcher's namespace: the nodes' APIs are at their ends of the links); opentimelineio maps each
    /// sync mark of each camera's file (pc2's from its session `pc2Session`) to the timeline: every second
    /// seen in two files lands on the same frame in both, within one (their cameras' frame grids differ in phase).
    static func checkTimeline(_ show: Show, session: Int, pc2Session: Int) throws {
        try #require(OTIO.python != nil, "scripts/setup.sh installs opentimelineio in \(OTIO.venv)")
        let switcher = show.switcher
        let home = try #require(switcher.namespace)
        let collected = switcher.directory.appendingPathComponent("collected").path
        let otioFile = switcher.directory.appendingPathComponent("show.otio").path
        let config = switcher.directory.appendingPathComponent("switcher.yaml").path
        for words in [["collect", String(session), "--to", collected, "--config", config, "--db", switcher.database],
                      ["export", String(session), "--iso", "--format", "otio", "--output", otioFile, "--db", switcher.database, "--socket", "/nonexistent"]] {
            let child = try show.namespaces.spawn(in: home, StudioHarness.binary, words)
            #expect(child.wait(timeout: 120) == .exited(0), "studio \(words[0]): \(child.outputText()) \(child.errorText())")
        }
        // Each camera's track and file: pc2's of its second session, pc3's (one session).
        let timeline = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: otioFile))))
        var files: [String: String] = [:]
        for track in timeline["tracks"]?["children"]?.arrayValue ?? [] {
            guard let name = track["name"]?.stringValue, name != "V1" else { continue }
            for clip in track["children"]?.arrayValue ?? [] where clip["OTIO_SCHEMA"] == "Clip.2" {
                let studio = clip["metadata"]?["studio"]
                guard studio?["exact"] == .bool(true), name.hasPrefix("pc3/") || studio?["node_session"]?.intValue == pc2Session,
                      let target = clip["media_references"]?["DEFAULT_MEDIA"]?["target_url"]?.stringValue else { continue }
                files[name] = collected + "/session-\(session)/" + target
            }
        }
        #expect(files.keys.sorted() == ["pc2/cam1", "pc2/cam2", "pc3/cam3", "pc3/cam4"], "\(files)")
        var asked: [String: [String: [Double]]] = [:], marks: [String: [(seconds: Double, mark: Int)]] = [:]
        for (track, file) in files {
            let first = try #require(try MediaProbe.videoFrames(URL(fileURLWithPath: file)).first?.ptsMilliseconds, "\(file)") / 1000
            marks[track] = try NodeAlignmentEndToEndTests.marks(file)
            asked[track] = [(file as NSString).lastPathComponent: [first] + (marks[track] ?? []).map(\.seconds)]
        }
        let mapped = try NodeAlignmentEndToEndTests.timelineFrames(otioFile, asked: asked)
        // Each camera's marks on the timeline: frame -> the second's mark.
        var onTimeline: [String: [(frame: Double, mark: Int)]] = [:]
        for (track, pairs) in mapped {
            onTimeline[track] = pairs.compactMap { pair in marks[track]?.first { $0.seconds == pair[0] }.map { (pair[1].rounded(), $0.mark) } }
        }
        // Against pc3/cam3's (its file spans the show; pc2's second session only its last seconds): each second
        // both show, the nearest frame of the same mark.
        let reference = onTimeline["pc3/cam3"] ?? []
        var errors: [String: [Double]] = [:]
        for track in ["pc2/cam1", "pc2/cam2", "pc3/cam4"] {
            errors[track] = (onTimeline[track] ?? []).compactMap { seen in
                reference.filter { $0.mark == seen.mark }.map { seen.frame - $0.frame }.filter { abs($0) < 120 }.min { abs($0) < abs($1) }
            }
        }
        print("NodesInNamespacesEndToEndTests: the four files on the timeline, frames off pc3/cam3's: \(errors)")
        for (track, off) in errors {
            #expect(off.count >= 2, "\(track): too few seconds in both files (\(onTimeline[track]?.count ?? 0) marks; pc3/cam3 \(reference.count))")
            #expect(NodeAlignmentEndToEndTests.landOnTheFrame(off), "\(track)'s seconds land \(off) frames from pc3/cam3's")
        }
        #expect(errors.values.map(\.count).reduce(0, +) >= 8, "\(errors)")
    }

    /// The program recording shows, from the first cut on, each cut's camera (its ident colour) up to the
    /// next cut; each cut lands on its frame: the frame at the cut's program time (the recording's
    /// timestamps are program time) is the new camera's and the one before the old camera's. A frame the
    /// machine missed (a tick late) leaves the next one to show it, one frame on at most.
    static func checkProgram(_ file: URL, cuts: [(camera: String, programMS: Int)]) throws {
        let frames = try MediaProbe.videoFrames(file)
        let thumbnails = try MediaProbe.tinyFrames(file)
        try #require(frames.count == thumbnails.count && frames.count > 100, "\(frames.count) frames, \(thumbnails.count) pictures")
        let times = frames.map { $0.ptsMilliseconds ?? -1 }
        let shown = thumbnails.map { EndToEndTests.camera(in: $0, among: idents) }
        func ident(_ camera: String) -> CameraID { CameraID(String(camera.split(separator: "/").last ?? "")) }
        for (index, cut) in cuts.enumerated() {
            let end = index + 1 < cuts.count ? Double(cuts[index + 1].programMS) - 1.5 : .infinity
            let span = times.indices.filter { times[$0] >= Double(cut.programMS) - 1.5 && times[$0] < end }
            let first = try #require(span.first, "no frame after the cut to \(cut.camera) at \(cut.programMS) ms")
            #expect(times[first] - Double(cut.programMS) < 1000 / 30 + 1.5,
                    "the cut to \(cut.camera) at \(cut.programMS) ms: the recording's next frame is at \(times[first]) ms")
            let wrong = span.filter { shown[$0] != ident(cut.camera) }
            #expect(wrong.isEmpty, "\(cut.camera) on air from \(cut.programMS) ms: frames at \(wrong.prefix(5).map { times[$0] }) show \(wrong.prefix(5).map { shown[$0]?.name ?? "none" }) \(wrong.prefix(5).map { Array(thumbnails[$0][((4 * 16 + 1) * 3)..<((4 * 16 + 1) * 3 + 3)]) })")
            if index > 0, first > 0 {
                #expect(shown[first - 1] == ident(cuts[index - 1].camera),
                        "the frame before the cut to \(cut.camera) (\(times[first - 1]) ms) shows \(shown[first - 1]?.name ?? "none")")
            }
        }
    }

    /// The switcher's ISO file of each node camera shows that camera's colour (or none, while it was lost).
    static func checkIsoFiles(in records: URL, session: Int) throws {
        for (node, cameras) in nodes {
            for camera in cameras {
                let file = records.appendingPathComponent("session-\(session)-\(node).\(camera).mkv")
                let shown = try MediaProbe.tinyFrames(file).map { EndToEndTests.camera(in: $0, among: idents) }
                let others = Set(shown.compactMap { $0 }).subtracting([CameraID(camera)])
                #expect(shown.filter { $0 == CameraID(camera) }.count > 60 && others.isEmpty,
                        "\(file.lastPathComponent): \(shown.count) frames, \(shown.filter { $0 == CameraID(camera) }.count) of \(camera), others \(others)")
            }
        }
    }
}
