import Testing
import StudioCore
@testable import StudioConfig

/// Capture nodes in the config: the switcher's `network.srt.nodes` and a node's `node:`; which stream
/// ids the listener takes as a node's camera, which it refuses and why; what the node sends where.
@Suite struct NodeConfigTests {
    static let switcher = """
        network:
          srt:
            listen: 127.0.0.1:9710
            passphrase: listener-secret
            nodes: [pc2, {name: pc3, passphrase: pc3-own-secret}]

        """

    @Test func aSwitcherListsItsNodesWithoutCallers() throws {
        let config = try StudioConfiguration.parse(yaml: Self.switcher, source: "s.yaml")
        let spec = try #require(config.network.srt)
        #expect(spec.callers.isEmpty)
        #expect(spec.nodes == [.init(name: "pc2"), .init(name: "pc3", passphrase: "pc3-own-secret")])
        // No camera before a node connects: the node decides its cameras.
        #expect(config.network.cameras.isEmpty)
        // The snapshot names the nodes, never a passphrase.
        let snapshot = config.jsonSnapshot()
        #expect(snapshot.contains("\"nodes\":[\"pc2\",\"pc3\"]") && !snapshot.contains("pc3-own-secret"), "\(snapshot)")
    }

    @Test func aNodesCameraIsTakenByItsStreamID() throws {
        let spec = try #require(try StudioConfiguration.parse(yaml: Self.switcher, source: "s.yaml").network.srt)
        #expect(spec.caller(forStreamID: "pc2/cam1") == "pc2/cam1")
        #expect(spec.caller(forStreamID: "#!::r=pc3/wide-1,m=publish") == "pc3/wide-1")
        // A node's own passphrase wins; else the listener's.
        #expect(spec.passphrase(for: "pc3/cam1") == "pc3-own-secret")
        #expect(spec.passphrase(for: "pc2/cam1") == "listener-secret")
        // Named by its stream id: the namer finds it from its identity, and only for a listed node.
        #expect(spec.nodeCamera(forIdentity: spec.listenerPull("pc2/cam2").identity) == "pc2/cam2")
        #expect(spec.nodeCamera(forIdentity: "network:pc9/cam2") == nil)
        #expect(spec.nodeCamera(forIdentity: "v4l2:pc2/cam2") == nil)
    }

    @Test(arguments: [
        ("pc9/cam1", "an unknown node \"pc9\""),
        ("pc2/", "a camera name that is not letters, digits, '-' or '_' (at most 32)"),
        ("pc2/cam 1", "a camera name that is not letters, digits, '-' or '_' (at most 32)"),
        ("pc2/a/b", "a camera name that is not letters, digits, '-' or '_' (at most 32)"),
        ("pc2", "an unknown stream id"),
        ("", "no stream id"),
        ("#!::r=pc2/cam1,m=request", "an unknown stream id"),
    ])
    func otherStreamIDsAreRefusedWithAReason(_ streamID: String, _ reason: String) throws {
        let spec = try #require(try StudioConfiguration.parse(yaml: Self.switcher, source: "s.yaml").network.srt)
        #expect(spec.caller(forStreamID: streamID) == nil)
        #expect(spec.refusal(ofStreamID: streamID) == reason)
    }

    @Test func aNodeSaysWhereItSendsItsCameras() throws {
        let yaml = """
            node:
              name: pc2
              send: srt://192.0.2.1:9710
              passphrase: "node secret&1"
              video: {bitrate: 1500k, size: 640x360}

            """
        let node = try #require(try StudioConfiguration.parse(yaml: yaml, source: "n.yaml").node)
        #expect(node == NodeSettings(name: "pc2", send: "srt://192.0.2.1:9710", passphrase: "node secret&1", bitRate: 1_500_000, width: 640, height: 360))
        // Each camera its stream id; the passphrase escaped (libavformat decodes it), never in the snapshot.
        #expect(node.url(of: "cam2") == "srt://192.0.2.1:9710?streamid=pc2/cam2&passphrase=node%20secret%261")
        let snapshot = try StudioConfiguration.parse(yaml: yaml, source: "n.yaml").jsonSnapshot()
        #expect(snapshot.contains("\"name\":\"pc2\"") && !snapshot.contains("node secret"), "\(snapshot)")
    }

    /// `video.cameras`: a camera's own bit rate or size over the node's; the others keep the node's; a
    /// name twice, an entry with neither, a bad size or an unknown key refused naming the line.
    @Test func aNodeCameraMayBeSentAtItsOwnBitRateAndSize() throws {
        let yaml = """
            node:
              name: pc2
              send: srt://192.0.2.1:9710
              video:
                bitrate: 1500k
                size: 640x360
                cameras:
                  - {name: cam1, bitrate: 6000k, size: 1920x1080}
                  - {name: cam3, size: 320x180}

            """
        let node = try #require(try StudioConfiguration.parse(yaml: yaml, source: "n.yaml").node)
        let (one, two, three) = (node.video(of: "cam1"), node.video(of: "cam2"), node.video(of: "cam3"))
        #expect(one.bitRate == 6_000_000 && one.size.map { [$0.width, $0.height] } == [1920, 1080])
        #expect(two.bitRate == 1_500_000 && two.size.map { [$0.width, $0.height] } == [640, 360])
        #expect(three.bitRate == 1_500_000 && three.size.map { [$0.width, $0.height] } == [320, 180])
        // The snapshot keeps them (read back the same).
        let snapshot = try StudioConfiguration.parse(yaml: yaml, source: "n.yaml").jsonSnapshot()
        #expect(snapshot.contains("\"cameras\":[{\"bitrate\":\"6M\",\"name\":\"cam1\",\"size\":\"1920x1080\"},{\"name\":\"cam3\",\"size\":\"320x180\"}]"),
                "\(snapshot)")

        let head = "node:\n  name: pc2\n  send: srt://192.0.2.1:9710\n  video:\n    cameras:\n"
        for (entries, words) in [
            ("      - {name: cam1, size: 640x360}\n      - {name: cam1, bitrate: 1M}\n", "cam1 is listed twice"),
            ("      - {name: cam1}\n", "cam1: give its bitrate or size"),
            ("      - {name: cam1, size: 641x360}\n", "size"),
            ("      - {name: cam1, bitrat: 1M}\n", "unknown key"),
            ("      - {bitrate: 1M}\n", "missing: the camera's name"),
        ] {
            #expect {
                try StudioConfiguration.parse(yaml: head + entries, source: "n.yaml")
            } throws: { error in
                "\(error)".contains(words) && "\(error)".contains("n.yaml:")
            }
        }
    }

    /// A scene and a backup may show a node's camera (`NODE/CAM`), which exists once its node connects;
    /// a name with more than one `/`, or a bad part, is refused with the same words as a plain name's.
    @Test func scenesAndBackupsMayNameANodesCamera() throws {
        let yaml = """
            cameras:
              pins:
                - {match: C920, name: wide, backup: pc2/cam1}
            scenes:
              - {name: duo, layout: side-by-side, sources: [wide, pc2/cam2], backup: pc2/cam1}

            """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "s.yaml")
        #expect(config.scenes.first?.sources == ["wide", "pc2/cam2"])
        #expect(config.backups["wide"]?.backup == "pc2/cam1" && config.backups["duo"]?.backup == "pc2/cam1")
        for bad in ["pc2/cam1/x", "pc2/", "/cam1", "pc 2/cam1"] {
            #expect(throws: ConfigError.self) {
                try StudioConfiguration.parse(yaml: "scenes:\n  - {name: duo, layout: pip, sources: [cam1, \"\(bad)\"]}\n", source: "s.yaml")
            }
        }
    }

    /// `tally_from` and `token`: the switcher's HTTP API whose tally the node's cameras show; the token
    /// never in the snapshot; a bad URL or a token alone refused naming the key.
    @Test func aNodeTakesItsTallyFromTheSwitchersHTTPAPI() throws {
        let yaml = """
            node:
              name: pc2
              send: srt://192.0.2.1:9710
              tally_from: http://192.0.2.1:8080/
              token: switcher-token-0123456789

            """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "n.yaml")
        let node = try #require(config.node)
        #expect(node.tallyFrom == ListenAddress(host: "192.0.2.1", port: 8080))
        #expect(node.tallyToken == "switcher-token-0123456789")
        let snapshot = config.jsonSnapshot()
        #expect(snapshot.contains("\"tally_from\":\"http:\\/\\/192.0.2.1:8080\"") || snapshot.contains("\"tally_from\":\"http://192.0.2.1:8080\""), "\(snapshot)")
        #expect(!snapshot.contains("switcher-token"), "\(snapshot)")
        // Without tally_from: no switcher tally.
        #expect(try StudioConfiguration.parse(yaml: "node: {name: pc2, send: \"srt://192.0.2.1:9710\"}\n", source: "n.yaml").node?.tallyFrom == nil)
    }

    @Test(arguments: [
        ("tally_from: https://192.0.2.1:8443", "node.tally_from", "https is not supported yet"),
        ("tally_from: 192.0.2.1:8080", "node.tally_from", "expected the switcher's HTTP API, http://HOST:PORT"),
        ("tally_from: http://192.0.2.1:8080/api/v1/events", "node.tally_from", "with no path"),
        ("tally_from: http://switcher.lan:8080", "node.tally_from", "is not an IPv4 address"),
        ("token: switcher-token-0123456789", "node.token", "a token without tally_from"),
        ("tally_from: http://192.0.2.1:8080\n  token: short", "node.token", "at least 16 printable ASCII characters"),
    ])
    func aBadTallySourceIsRefusedNamingTheKey(_ line: String, _ key: String, _ words: String) {
        expectRefused("node:\n  name: pc2\n  send: srt://192.0.2.1:9710\n  \(line)\n", at: key, saying: words)
    }

    /// A node's `api` and `token` on the switcher: where its cameras' mode, controls and focus are
    /// forwarded; the token never in the snapshot; bad values refused naming the key.
    @Test func aSwitcherGivesANodesHTTPAPI() throws {
        let yaml = """
            network:
              srt:
                listen: 127.0.0.1:9710
                nodes: [pc3, {name: pc2, passphrase: pc2-own-secret, api: "http://192.0.2.2:8081/", token: node-token-0123456789}]

            """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "s.yaml")
        let spec = try #require(config.network.srt)
        #expect(spec.nodes == [.init(name: "pc3"), .init(name: "pc2", passphrase: "pc2-own-secret", api: ListenAddress(host: "192.0.2.2", port: 8081),
                                                         token: "node-token-0123456789")])
        #expect(spec.nodeCamera("pc2/cam1")?.node.name == "pc2" && spec.nodeCamera("pc2/cam1")?.camera == "cam1")
        #expect(spec.nodeCamera("pc9/cam1") == nil && spec.nodeCamera("cam1") == nil)
        let snapshot = config.jsonSnapshot()
        #expect(snapshot.contains("\"pc3\",{\"api\":\"http://192.0.2.2:8081\",\"name\":\"pc2\",\"token\":\"****\"}"), "\(snapshot)")
        #expect(!snapshot.contains("node-token") && !snapshot.contains("pc2-own-secret"), "\(snapshot)")
    }

    @Test(arguments: [
        ("api: https://192.0.2.2:8443", "network.srt.nodes[0].api", "https is not supported yet: use the node's plain http listener"),
        ("api: 192.0.2.2:8081", "network.srt.nodes[0].api", "expected the node's HTTP API, http://HOST:PORT"),
        ("api: http://192.0.2.2:8081/api/v1", "network.srt.nodes[0].api", "with no path"),
        ("api: http://pc2.lan:8081", "network.srt.nodes[0].api", "is not an IPv4 address"),
        ("token: node-token-0123456789", "network.srt.nodes[0].token", "a token without api"),
        ("api: http://192.0.2.2:8081, token: short", "network.srt.nodes[0].token", "at least 16 printable ASCII characters"),
        ("apii: http://192.0.2.2:8081", "network.srt.nodes[0].apii", "did you mean api?"),
    ])
    func aBadNodeAPIIsRefusedNamingTheKey(_ entry: String, _ key: String, _ words: String) {
        expectRefused("network:\n  srt:\n    listen: 127.0.0.1:9710\n    nodes: [{name: pc2, \(entry)}]\n", at: key, saying: words)
    }

    /// A caller has no API: `api` is a node's key only.
    @Test func aCallerTakesNoAPI() {
        expectRefused("network:\n  srt:\n    listen: 127.0.0.1:9710\n    callers: [{name: anna, api: \"http://192.0.2.2:8081\"}]\n",
                      at: "network.srt.callers[0].api", saying: "known keys here: name, passphrase")
    }
}
