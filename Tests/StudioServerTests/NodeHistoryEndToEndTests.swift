import Foundation
import Testing
import Glibc
import Control
import StudioCore
@testable import StudioServer
import TestSupport
import TallyOut

/// One history for the editor (docs/nodes.md): a real node of two test-pattern cameras recording its ISO
/// files (`--record DIR`), its HTTP API asking for a token, into a switcher in this process whose
/// `network.srt.nodes` entry gives that API and token (`NodeTallyEndToEndTests.Rig`). The switcher's
/// session keeps the node's session and files: `studio recordings` lists them under the node, live and,
/// after the switcher stopped, from its database.
@Suite(.serialized) struct NodeHistoryEndToEndTests {
    static let nodeToken = "node-token-0123456789"

    /// A fresh directory for the node's recordings, removed when the value goes away.
    final class RecordDirectory {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("studio-node-rec-\(getpid())-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The switcher's `recordings` entry for node pc2 once it lists both cameras' ISO files (nil after `seconds`).
    static func nodeFiles(_ client: ControlClient, seconds: Double = 25) -> JSONValue? {
        var found: JSONValue?
        _ = waitUntil(seconds: seconds, every: 0.2) {
            let nodes = (try? client.request("recordings"))?["nodes"]?.arrayValue ?? []
            guard let pc2 = nodes.first(where: { $0["node"] == "pc2" }), pc2["state"] == "answered" else { return false }
            let cameras = Set((pc2["recordings"]?.arrayValue ?? []).filter { $0["kind"] == "iso" }.compactMap { $0["camera"]?.stringValue })
            found = pc2
            return cameras.isSuperset(of: ["pc2/cam1", "pc2/cam2"])
        }
        return found
    }

    /// A switcher config for `studio collect` in `directory`: pc2's API on `nodeHTTP`, with `token`.
    static func collectConfig(in directory: URL, nodeHTTP: Int, token: String) throws -> String {
        let path = directory.appendingPathComponent("switcher-\(token.prefix(4)).yaml").path
        try """
            network:
              srt:
                listen: 127.0.0.1:9710
                nodes:
                  - {name: pc2, api: "http://127.0.0.1:\(nodeHTTP)", token: \(token)}

            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func theSwitchersSessionListsTheNodesFiles() throws {
        let record = try RecordDirectory()
        let nodeHTTP = try NginxRTMP.freePort()
        let switcherRecord = try RecordDirectory()
        let rig = try NodeTallyEndToEndTests.Rig("node-history", nodeHTTP: nodeHTTP, nodeToken: Self.nodeToken, nodeArguments: ["--record", record.path],
                                                 switcherRecord: switcherRecord.path)
        let pc2 = try #require(Self.nodeFiles(rig.client), "the switcher's recordings never listed pc2's ISO files")
        let nodeSession = try #require((try rig.nodeClient.request("status"))["session"]?.intValue)
        #expect(pc2["node_session"]?.intValue == nodeSession, "\(pc2)")
        let files = pc2["recordings"]?.arrayValue ?? []
        #expect(files.allSatisfy { $0["path"]?.stringValue?.hasPrefix(record.path + "/") == true }, "\(files)")

        // `studio recordings` on the switcher: its own files, then the node's under it.
        let socket = rig.scratch.directory.appendingPathComponent("studio.sock").path
        let text = try rig.node.run(["recordings", "--socket", socket])
        #expect(text.status == 0, "\(text.error)")
        #expect(text.output.contains("node pc2 · its session \(nodeSession)"), "\(text.output)")
        for file in files { #expect(text.output.contains(file["path"]?.stringValue ?? "?"), "\(text.output)") }

        // After the switcher's stop (its last ask), the same from its database alone.
        rig.stopSwitcher()
        let database = rig.scratch.directory.appendingPathComponent("studio.db").path
        let offline = try rig.node.run(["recordings", "--db", database, "--socket", socket, "--json"])
        let reply = try JSONValue(parsing: Array(offline.output.utf8))
        let kept = reply["nodes"]?.arrayValue?.first { $0["node"] == "pc2" }
        let keptState = kept?["state"]?.stringValue
        let keptSession = kept?["node_session"]?.intValue
        #expect(keptState == "answered" && keptSession == nodeSession, "\(offline.output) \(offline.error)")
        let keptPaths: Set<String> = Set((kept?["recordings"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue })
        let livePaths: [String] = files.compactMap { $0["path"]?.stringValue }
        #expect(keptPaths.isSuperset(of: livePaths), "\(offline.output)")

        // `studio export --iso`: each node camera's ISO file on a track of its own, referenced where `collect` puts it.
        let session = try #require(reply["session"]?["id"]?.intValue)
        let otio = try rig.node.run(["export", String(session), "--iso", "--format", "otio", "--db", database, "--socket", socket])
        let timeline = try JSONValue(parsing: Array(otio.output.utf8))
        let tracks = timeline["tracks"]?["children"]?.arrayValue ?? []
        for file in files where file["kind"] == "iso" {
            let camera = file["camera"]?.stringValue ?? "?"
            let path = file["path"]?.stringValue ?? "?"
            let clip = tracks.first { $0["name"]?.stringValue == camera }?["children"]?.arrayValue?.first { $0["OTIO_SCHEMA"] == "Clip.2" }
            let target = clip?["media_references"]?["DEFAULT_MEDIA"]?["target_url"]?.stringValue
            #expect(target == "pc2/" + (path as NSString).lastPathComponent, "\(camera): \(otio.output) \(otio.error)")
            #expect(clip?["metadata"]?["studio"]?["node_path"]?.stringValue == path)
        }
        if OTIO.python != nil {
            let file = rig.scratch.directory.appendingPathComponent("show.otio").path
            _ = try rig.node.run(["export", String(session), "--iso", "--format", "otio", "--output", file, "--db", database, "--socket", socket])
            let read = try OTIO.read(file)
            let names = (read["tracks"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            #expect(names == ["V1", "pc2/cam1", "pc2/cam2"], "opentimelineio reads \(read)")
        }
        let edl = try rig.node.run(["export", String(session), "--iso", "--format", "edl", "--db", database, "--socket", socket])
        #expect(edl.output.contains("* NODE ISO: pc2/cam1 pc2/"), "\(edl.output) \(edl.error)")
    }

    /// `studio collect`: after the show (the switcher stopped, the node restarted: a new session of its
    /// own whose API still serves the old one's files), the session's node ISO files are copied into
    /// DIR/session-N/pc2/ equal to the originals; a truncated copy resumes, a corrupted one is fetched
    /// again; a wrong token and a node that is down give their errors; the node refuses a file its history
    /// does not list for that session (another session's, a path outside).
    @Test func theNodesFilesAreCollected() throws {
        let record = try RecordDirectory()
        let nodeHTTP = try NginxRTMP.freePort()
        let rig = try NodeTallyEndToEndTests.Rig("node-collect", nodeHTTP: nodeHTTP, nodeToken: Self.nodeToken, nodeArguments: ["--record", record.path])
        _ = try #require(Self.nodeFiles(rig.client), "the switcher's recordings never listed pc2's ISO files")
        let switcherSession = try #require((try rig.client.request("status"))["session"]?.intValue)
        let nodeSession = try #require((try rig.nodeClient.request("status"))["session"]?.intValue)
        // A second of show, then the switcher stops (its last ask) and the node stops (its files closed) and starts again.
        Thread.sleep(forTimeInterval: 1)
        rig.stopSwitcher()
        _ = rig.node.stopServer()
        let nodeConfig = rig.node.directory.appendingPathComponent("node.yaml").path
        try rig.node.serve(["--config", nodeConfig, "--cameras", "2", "--camera-size", "320x180", "--program", "320x180@30",
                            "--record", record.path, "--http", "127.0.0.1:\(nodeHTTP)"])
        let database = rig.scratch.directory.appendingPathComponent("studio.db").path
        let offline = try JSONValue(parsing: Array(try rig.node.run(["recordings", String(switcherSession), "--db", database, "--json",
                                                                     "--socket", "/nonexistent"]).output.utf8))
        let originals = (offline["nodes"]?.arrayValue?.first?["recordings"]?.arrayValue ?? []).filter { $0["kind"] == "iso" }.compactMap { $0["path"]?.stringValue }
        #expect(originals.count == 2, "\(offline)")

        func config(token: String) throws -> String { try Self.collectConfig(in: rig.scratch.directory, nodeHTTP: nodeHTTP, token: token) }
        let good = try config(token: Self.nodeToken)
        let target = rig.scratch.directory.appendingPathComponent("collected").path
        func collect(_ configuration: String) throws -> (status: Int32, output: String, error: String) {
            try rig.node.run(["collect", String(switcherSession), "--to", target, "--config", configuration, "--db", database])
        }
        func copies() -> [(String, String)] {
            originals.map { ($0, target + "/session-\(switcherSession)/pc2/" + ($0 as NSString).lastPathComponent) }
        }
        func equal() -> Bool {
            copies().allSatisfy { original, copy in
                guard let a = FileManager.default.contents(atPath: original), let b = FileManager.default.contents(atPath: copy) else { return false }
                return a == b && !a.isEmpty
            }
        }
        var result = try collect(good)
        #expect(result.status == 0 && equal(), "\(result.output) \(result.error)")
        #expect(result.output.components(separatedBy: "matches").count == 3, "\(result.output)")

        // A copy cut short continues from its size; a copy with a changed byte is fetched again whole.
        let (_, cut) = copies()[0]
        let size = try #require((try FileManager.default.attributesOfItem(atPath: cut)[.size] as? NSNumber)?.intValue)
        #expect(truncate(cut, off_t(size / 2)) == 0)
        let (_, corrupted) = copies()[1]
        let handle = try #require(FileHandle(forUpdatingAtPath: corrupted))
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: Data([0xFF, 0x00, 0xFF]))
        try handle.close()
        result = try collect(good)
        #expect(result.status == 0 && equal(), "\(result.output) \(result.error)")
        #expect(result.output.contains("resumed from"), "\(result.output)")
        #expect(result.output.components(separatedBy: "fetched again whole after a mismatch").count == 2, "only the changed copy: \(result.output)")

        // The node refuses what its history does not list for that session.
        let address = ListenAddress(host: "127.0.0.1", port: UInt16(nodeHTTP))
        let name = (originals[0] as NSString).lastPathComponent
        let newSession = try #require((try ControlClient(socketPath: rig.node.socket).request("status"))["session"]?.intValue)
        for path in ["/api/v1/sessions/\(nodeSession)/recordings/..%2Fnode.yaml", "/api/v1/sessions/\(nodeSession)/recordings/%2Fetc%2Fpasswd",
                     "/api/v1/sessions/\(newSession)/recordings/\(name)", "/api/v1/sessions/\(nodeSession)/recordings/\(name)x"] {
            let answer = try HTTPExchange.exchange("GET", path, at: address, token: Self.nodeToken, seconds: 5, connectSeconds: 2)
            #expect(answer.status == 404, "\(path): \(answer.statusLine) \(String(decoding: answer.body, as: UTF8.self))")
        }
        let ranged = try HTTPExchange.exchange("GET", "/api/v1/sessions/\(nodeSession)/recordings/\(name)", at: address, token: nil,
                                               seconds: 5, connectSeconds: 2)
        #expect(ranged.status == 401, "the token is asked for: \(ranged.statusLine)")

        // A wrong token, then the node down: clear errors, exit 1.
        result = try collect(try config(token: "wrong-token-0123456789"))
        #expect(result.status == 1 && result.error.contains("refused the switcher's token (401 Unauthorized)"), "\(result.error)")
        _ = rig.node.stopServer()
        result = try collect(good)
        #expect(result.status == 1 && result.error.contains("is unreachable (cannot connect"), "\(result.error)")
    }

    /// A node entry without `api`: the switcher's session records it as unknown, saying which keys to set.
    @Test func aNodeWithoutItsAPIIsRecordedAsUnknown() throws {
        let rig = try NodeTallyEndToEndTests.Rig("node-history-unknown")
        var pc2: JSONValue?
        let recorded = waitUntil(seconds: 10, every: 0.1) {
            pc2 = (try? rig.client.request("recordings"))?["nodes"]?.arrayValue?.first { $0["node"] == "pc2" }
            return pc2 != nil
        }
        #expect(recorded && pc2?["state"] == "unknown" && pc2?["reason"]?.stringValue?.contains("no api in network.srt.nodes' entry for pc2") == true,
                "\(String(describing: pc2))")
        #expect(pc2?["recordings"]?.arrayValue?.isEmpty == true)
    }
}
