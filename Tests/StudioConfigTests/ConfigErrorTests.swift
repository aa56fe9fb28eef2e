import Testing
@testable import StudioConfig

/// One bad input and where its error must point.
struct BadConfig: Sendable, CustomTestStringConvertible {
    var yaml: String
    var line: Int?
    var keyPath: String?
    var fragment: String
    var testDescription: String { "\(keyPath ?? "-"): \(fragment)" }
}

@Suite struct ConfigErrorTests {
    static let cases: [BadConfig] = [
        // Unknown keys (typos), with a suggestion.
        BadConfig(yaml: "vidoe:\n  preset: fast\n", line: 1, keyPath: "vidoe", fragment: "unknown key (did you mean video?)"),
        BadConfig(yaml: "video:\n  preset: fast\n  bitrat: 4500k\n", line: 3, keyPath: "video.bitrat", fragment: "did you mean bitrate?"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: x\n      nmae: cam1\n", line: 4, keyPath: "cameras.pins[0].nmae", fragment: "unknown key"),
        BadConfig(yaml: "outputs:\n  - url: rtmp://h/a/k\n    key: abc\n", line: 3, keyPath: "outputs[0].key", fragment: "unknown key"),
        // Wrong types.
        BadConfig(yaml: "video:\n  encoder: x264\n  preset:\n    - fast\n", line: 3, keyPath: "video.preset",
                  fragment: "expected a string, got a sequence"),
        BadConfig(yaml: "video: fast\n", line: 1, keyPath: "video", fragment: "expected a mapping"),
        BadConfig(yaml: "outputs:\n  url: rtmp://h/a/k\n", line: 1, keyPath: "outputs", fragment: "expected a sequence"),
        BadConfig(yaml: "record:\n  dir: /x\n", line: 1, keyPath: "record", fragment: "expected a path, got a mapping"),
        BadConfig(yaml: "- video\n- audio\n", line: 1, keyPath: nil, fragment: "the top level must be a mapping"),
        BadConfig(yaml: "cameras:\n  pins:\n    - cam1\n", line: 3, keyPath: "cameras.pins[0]", fragment: "expected a mapping with match and name"),
        // Wrong values.
        BadConfig(yaml: "video:\n  encoder: nvenc\n", line: 2, keyPath: "video.encoder", fragment: "expected one of auto, vaapi, x264"),
        BadConfig(yaml: "video:\n  preset: quick\n", line: 2, keyPath: "video.preset", fragment: "expected an x264 preset"),
        BadConfig(yaml: "cameras:\n  backends: [v4l2, usb]\n", line: 2, keyPath: "cameras.backends[1]",
                  fragment: "expected a camera backend (v4l2, pipewire), got \"usb\""),
        BadConfig(yaml: "cameras:\n  backends: all\n", line: 2, keyPath: "cameras.backends", fragment: "or none, got \"all\""),
        BadConfig(yaml: "cameras:\n  iso: maybe\n", line: 2, keyPath: "cameras.iso", fragment: "expected true or false"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: x, name: cam1, iso: copy}\n", line: 3, keyPath: "cameras.pins[0].iso", fragment: "passthrough (the camera's own frames"),
        BadConfig(yaml: "cameras:\n  iso_preset: quick\n", line: 2, keyPath: "cameras.iso_preset", fragment: "expected an x264 preset"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: x\n      name: cam1\n      iso: [a]\n", line: 5, keyPath: "cameras.pins[0].iso", fragment: "expected true or false"),
        BadConfig(yaml: "video:\n  bitrate: 4500kb\n", line: 2, keyPath: "video.bitrate", fragment: "expected a bit rate"),
        BadConfig(yaml: "video:\n  bitrate: 10\n", line: 2, keyPath: "video.bitrate", fragment: "10 bit/s is outside the range 100k to 100M"),
        // A size beyond the limit says the limit.
        BadConfig(yaml: "program:\n  format: 8192x8192@30\n", line: 2, keyPath: "program.format", fragment: "from 16x16 to 7680x4320"),
        BadConfig(yaml: "program:\n  format: 1280x720@480\n", line: 2, keyPath: "program.format", fragment: "1 to 240 fps"),
        BadConfig(yaml: "video:\n  keyframe_interval: soon\n", line: 2, keyPath: "video.keyframe_interval", fragment: "seconds"),
        BadConfig(yaml: "audio:\n  source: mic\n", line: 2, keyPath: "audio.source", fragment: "expected tone, silence, pipewire (the default microphone) or pipewire:<node name>"),
        BadConfig(yaml: "audio:\n  bitrate: 5M\n", line: 2, keyPath: "audio.bitrate", fragment: "outside"),
        BadConfig(yaml: "program:\n  size: 1281x720\n", line: 2, keyPath: "program.size", fragment: "expected WIDTHxHEIGHT"),
        BadConfig(yaml: "program:\n  fps: 500\n", line: 2, keyPath: "program.fps", fragment: "from 1 to 240"),
        BadConfig(yaml: "program:\n  format: 1280x720@abc\n", line: 2, keyPath: "program.format", fragment: "WIDTHxHEIGHT@FPS"),
        BadConfig(yaml: "program:\n  size: 1280x720\n  format: 1920x1080@30\n", line: 3, keyPath: "program.format", fragment: "conflicts with program.size"),
        BadConfig(yaml: "program:\n  format: 1920x1080@30\n  fps: 25\n", line: 3, keyPath: "program.fps", fragment: "conflicts with program.format"),
        BadConfig(yaml: "outputs:\n  - name: youtube\n", line: 2, keyPath: "outputs[0].url", fragment: "missing"),
        BadConfig(yaml: "outputs:\n  - url: rtmp://h/a/k1\n    name: a\n  - url: rtmp://h/a/k2\n    name: a\n", line: 5,
                  keyPath: "outputs[1].name", fragment: "already used by the output on line 3"),
        BadConfig(yaml: "cameras:\n  demo: many\n", line: 2, keyPath: "cameras.demo", fragment: "from 0 to 16"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: a, name: cam1}\n    - {match: b, name: cam1}\n", line: 4,
                  keyPath: "cameras.pins[1].name", fragment: "already given on line 3"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: a, name: \"cam 1\"}\n", line: 3, keyPath: "cameras.pins[0].name", fragment: "letters, digits"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: a, name: cam1, size: big}\n", line: 3, keyPath: "cameras.pins[0].size", fragment: "expected WIDTHxHEIGHT"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: a, name: cam1, fps: fast}\n", line: 3, keyPath: "cameras.pins[0].fps", fragment: "expected a frame rate"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: a, name: cam1, controls: [a]}\n", line: 3, keyPath: "cameras.pins[0].controls", fragment: "mapping of control names"),
        // A pin's picture settings: each refused at its own line, in PictureSettings' words.
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture:\n        mirror: true\n        beauty: 140\n", line: 7,
                  keyPath: "cameras.pins[0].picture.beauty", fragment: "beauty must be between 0 and 100 (got 140)"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture:\n        rotate: 45\n", line: 6,
                  keyPath: "cameras.pins[0].picture.rotate", fragment: "rotate must be 0, 90, 180 or 270 (got 45)"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture: {gamma: 0}\n", line: 5,
                  keyPath: "cameras.pins[0].picture.gamma", fragment: "gamma must be between 0.1 and 10 (got 0)"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture:\n        crop: [0.5, 0, 0.8, 1]\n", line: 6,
                  keyPath: "cameras.pins[0].picture.crop", fragment: "reaches outside the picture"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture:\n        crop: [0, 0, 1]\n", line: 6,
                  keyPath: "cameras.pins[0].picture.crop", fragment: "expected [x, y, width, height]"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture:\n        mirror: sometimes\n", line: 6,
                  keyPath: "cameras.pins[0].picture.mirror", fragment: "expected true or false"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture:\n        brightness: high\n", line: 6,
                  keyPath: "cameras.pins[0].picture.brightness", fragment: "expected a number"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture:\n        mirorr: true\n", line: 6,
                  keyPath: "cameras.pins[0].picture.mirorr", fragment: "unknown key (did you mean mirror?)"),
        BadConfig(yaml: "cameras:\n  pins:\n    - match: a\n      name: cam1\n      picture: mirror\n", line: 5,
                  keyPath: "cameras.pins[0].picture", fragment: "expected a mapping of picture settings (crop, mirror"),
        BadConfig(yaml: "socket: run/studio.sock\n", line: 1, keyPath: "socket", fragment: "must be absolute"),
        // YAML structure.
        BadConfig(yaml: "video:\n  preset: fast\n  preset: slow\n", line: 3, keyPath: "video.preset", fragment: "duplicate key (first given on line 2)"),
        BadConfig(yaml: "video: &v\n  preset: fast\naudio: *v\n", line: 3, keyPath: "audio", fragment: "aliases (*v) are not supported"),
        BadConfig(yaml: "video:\n  preset: [fast\naudio: {}\n", line: 3, keyPath: nil, fragment: "invalid YAML"),
        BadConfig(yaml: "video:\n\tpreset: fast\n", line: 2, keyPath: nil, fragment: "tabs"),
        BadConfig(yaml: "video: {}\n---\naudio: {}\n", line: 2, keyPath: nil, fragment: "only one YAML document"),
        BadConfig(yaml: "? [a, b]\n: c\n", line: 1, keyPath: nil, fragment: "a mapping key must be a plain value"),
        // Network cameras.
        BadConfig(yaml: "network:\n  pull:\n    - name: ptz1\n      url: ftp://192.0.2.10/s\n", line: 4, keyPath: "network.pull[0].url",
                  fragment: "a pull takes rtsp, rtsps, rtmp, rtmps, srt, http, https, udp, got \"ftp\""),
        BadConfig(yaml: "network:\n  pull:\n    - name: ptz1\n      url: 192.0.2.10/s\n", line: 4, keyPath: "network.pull[0].url",
                  fragment: "expected a URL such as rtsp://"),
        BadConfig(yaml: "network:\n  pull:\n    - name: ptz1\n", line: 3, keyPath: "network.pull[0].url", fragment: "missing: the URL to pull"),
        BadConfig(yaml: "network:\n  pull:\n    - url: rtsp://h/s\n", line: 3, keyPath: "network.pull[0].name", fragment: "missing: the camera's name"),
        BadConfig(yaml: "network:\n  pull:\n    - {name: a, url: rtsp://h/s}\n    - {name: a, url: rtsp://h/t}\n", line: 4,
                  keyPath: "network.pull[1].name", fragment: "already used by the pull on line 3"),
        BadConfig(yaml: "network:\n  pull:\n    - {name: cam2, url: rtsp://h/s}\n", line: 3, keyPath: "network.pull[0].name",
                  fragment: "a network camera needs its own"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: x, name: wide}\nnetwork:\n  pull:\n    - {name: wide, url: rtsp://h/s}\n", line: 6,
                  keyPath: "network.pull[0].name", fragment: "is a pinned camera's name"),
        BadConfig(yaml: "network:\n  pull:\n    - {name: ptz1, url: rtsp://h/s, latency_ms: 20000}\n", line: 3,
                  keyPath: "network.pull[0].latency_ms", fragment: "expected milliseconds from 0 to 10000"),
        BadConfig(yaml: "network:\n  rtmp:\n    server: rtsp://h/live\n    keys: {phone1: 7c1e2a9b5d3f}\n", line: 3, keyPath: "network.rtmp.server",
                  fragment: "expected an rtmp:// URL of the RTMP server's application"),
        BadConfig(yaml: "network:\n  rtmp:\n    server: rtmp://127.0.0.1/live\n    keys: {phone1: short}\n", line: 4, keyPath: "network.rtmp.keys.phone1",
                  fragment: "at least 8 characters"),
        BadConfig(yaml: "network:\n  rtmp:\n    server: rtmp://127.0.0.1/live\n    keys: {phone1: 7c1e2a9b5d3f, phone2: 7c1e2a9b5d3f}\n", line: 4,
                  keyPath: "network.rtmp.keys.phone2", fragment: "given to another camera too"),
        BadConfig(yaml: "network:\n  rtmp:\n    server: rtmp://127.0.0.1/live\n    keys: {cam3: 7c1e2a9b5d3f}\n", line: 4,
                  keyPath: "network.rtmp.keys.cam3", fragment: "a network camera needs its own"),
        BadConfig(yaml: "network:\n  srt:\n    listen: 127.0.0.1:9710\n    callers: [anna]\n    passphrase: short\n", line: 5, keyPath: "network.srt.passphrase",
                  fragment: "an SRT passphrase has 10 to 79 characters"),
        BadConfig(yaml: "network:\n  srt:\n    listen: 127.0.0.1:9710\n", line: 2, keyPath: "network.srt.callers", fragment: "missing: the callers"),
        BadConfig(yaml: "network:\n  srt:\n    listen: 127.0.0.1:9710\n    callers: [anna, anna]\n", line: 4, keyPath: "network.srt.callers[1]",
                  fragment: "listed twice"),
        BadConfig(yaml: "network:\n  pull:\n    - {name: anna, url: rtsp://h/s}\n  srt:\n    listen: 127.0.0.1:9710\n    callers: [anna]\n", line: 4,
                  keyPath: "network.srt", fragment: "names two network cameras"),
        BadConfig(yaml: "network:\n  pull:\n    - {name: ptz1, url: rtsp://h/s}\nscenes:\n  - name: ptz1\n    layers: [{source: ptz1, rect: [0, 0, 640, 360]}]\n",
                  line: 5, keyPath: "scenes[0].name", fragment: "is a network camera's name"),
        // Capture nodes: the switcher's nodes, a node's own section.
        BadConfig(yaml: "network:\n  srt:\n    listen: 127.0.0.1:9710\n    nodes: [pc2, pc2]\n", line: 4, keyPath: "network.srt.nodes[1]",
                  fragment: "\"pc2\" is listed twice"),
        BadConfig(yaml: "network:\n  srt:\n    listen: 127.0.0.1:9710\n    nodes: [pc2/cam1]\n", line: 4, keyPath: "network.srt.nodes[0]",
                  fragment: "expected a name of letters"),
        BadConfig(yaml: "network:\n  srt:\n    listen: 127.0.0.1:9710\n    nodes: [{name: pc2, passphrase: short}]\n", line: 4,
                  keyPath: "network.srt.nodes[0].passphrase", fragment: "an SRT passphrase has 10 to 79 characters"),
        BadConfig(yaml: "node:\n  name: pc2\n", line: 1, keyPath: "node.send", fragment: "missing: the switcher's SRT listener"),
        BadConfig(yaml: "node:\n  send: srt://h:9710\n", line: 1, keyPath: "node.name", fragment: "missing: the node's name"),
        BadConfig(yaml: "node:\n  name: pc2\n  send: rtmp://h/app/key\n", line: 3, keyPath: "node.send",
                  fragment: "expected the switcher's SRT listener"),
        BadConfig(yaml: "node:\n  name: pc2\n  send: srt://h:9710?streamid=x\n", line: 3, keyPath: "node.send", fragment: "leave streamid out"),
        BadConfig(yaml: "node:\n  name: pc2\n  send: srt://h:9710?passphrase=secret-in-url\n  passphrase: secret-in-config\n", line: 4,
                  keyPath: "node.passphrase", fragment: "given twice"),
        BadConfig(yaml: "node:\n  name: pc2\n  send: srt://h:9710\n  video: {size: 641x360}\n", line: 4, keyPath: "node.video.size",
                  fragment: "expected WIDTHxHEIGHT"),
        BadConfig(yaml: "node:\n  name: pc2\n  send: srt://h:9710\n  video: {bitrat: 1M}\n", line: 4, keyPath: "node.video.bitrat",
                  fragment: "did you mean bitrate?"),
        // Players.
        BadConfig(yaml: "players:\n  - name: intro\n    items: [a.mov]\n    end: rewind\n", line: 4, keyPath: "players[0].end",
                  fragment: "expected an end (hold, black, loop, next, cut-back), got \"rewind\""),
        BadConfig(yaml: "players:\n  - name: intro\n", line: 2, keyPath: "players[0].items", fragment: "missing: the player's items"),
        BadConfig(yaml: "players:\n  - {name: cam1, items: [a.mov]}\n", line: 2, keyPath: "players[0].name", fragment: "a player needs its own"),
        BadConfig(yaml: "players:\n  - {name: a, items: [a.mov]}\n  - {name: a, items: [b.mov]}\n", line: 3, keyPath: "players[1].name",
                  fragment: "already used by the player on line 2"),
        BadConfig(yaml: "players:\n  - {name: a, items: [a.png], still_seconds: 0}\n", line: 2, keyPath: "players[0].still_seconds",
                  fragment: "from 0.1 to 86400"),
        BadConfig(yaml: "players:\n  - {name: intro, items: [a.mov]}\nscenes:\n  - name: intro\n    layers: [{source: cam1, rect: [0, 0, 640, 360]}]\n",
                  line: 4, keyPath: "scenes[0].name", fragment: "is a player's name"),
    ]

    @Test(arguments: cases)
    func errorPointsAtLineAndKey(_ bad: BadConfig) {
        do {
            let config = try StudioConfiguration.parse(yaml: bad.yaml, source: "studio.yaml")
            Issue.record("expected an error, got \(config)")
        } catch {
            #expect(error.source == "studio.yaml")
            #expect(error.line == bad.line)
            #expect(error.keyPath == bad.keyPath)
            #expect(error.message.contains(bad.fragment), "\(error)")
            var prefix = "studio.yaml"
            if let line = bad.line { prefix += ":\(line)" }
            prefix += ": "
            if let keyPath = bad.keyPath { prefix += keyPath + ": " }
            #expect(error.description.hasPrefix(prefix), "\(error)")
        }
    }

    @Test func messageReadsAsInTheBrief() {
        #expect(throws: ConfigError.self) {
            try StudioConfiguration.parse(yaml: "video:\n  encoder: x264\n  preset:\n    - fast\n", source: "studio.yaml")
        }
        do {
            _ = try StudioConfiguration.parse(yaml: "video:\n  encoder: x264\n  preset:\n    - fast\n", source: "studio.yaml")
        } catch {
            #expect(error.description == "studio.yaml:3: video.preset: expected a string, got a sequence")
        }
    }

    @Test func errorsNeverShowAStreamKey() {
        let inputs = [
            "outputs:\n  - url: http://example.com/live/SECRETKEY\n",
            "outputs:\n  - url: rtmp://hostonly-SECRETKEY\n",
            "outputs: rtmp://example.com/live/SECRETKEY\n",
            "outputs:\n  - url:\n      - rtmp://example.com/live/SECRETKEY\n",
            "video:\n  preset: rtmp://example.com/live/SECRETKEY\n",
        ]
        for yaml in inputs {
            do {
                _ = try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml")
                Issue.record("expected an error for \(yaml)")
            } catch {
                #expect(!error.description.contains("SECRETKEY"), "\(error)")
            }
        }
    }
}
