import Foundation
import StudioCore
import Testing
@testable import StudioConfig

/// The Decoder over the YAML node tree: lines and key paths from coding paths, unknown keys from
/// the CodingKeys, null keeping defaults.
@Suite struct NodeDecoderTests {
    static func error(_ yaml: String) -> ConfigError? {
        do {
            _ = try StudioConfiguration.parse(yaml: yaml, source: "t.yaml")
            return nil
        } catch {
            return error
        }
    }

    @Test func deepErrorsPointAtTheirLine() throws {
        let yaml = """
        video:
          preset: fast
        cameras:
          pins:
            - match: a
              name: cam1
            - match: b
              name: cam2
              controls:
                brightness: 140
                focus: [1, 2]
        """
        let error = try #require(Self.error(yaml))
        #expect(error.line == 11 && error.keyPath == "cameras.pins[1].controls.focus", "\(error)")
        #expect(error.message == "expected a value, got a sequence")
    }

    @Test func aSequenceItemErrorUsesTheItemsLine() throws {
        let error = try #require(Self.error("cameras:\n  backends:\n    - v4l2\n\n    - usb\n"))
        #expect(error.line == 5 && error.keyPath == "cameras.backends[1]")
        let output = try #require(Self.error("outputs:\n  - rtmp://h/a/k\n  - [x]\n"))
        #expect(output.line == 3 && output.keyPath == "outputs[1]" && output.message == "expected a mapping with url (and optional name), got a sequence")
    }

    /// Every section refuses keys its CodingKeys do not have, listing them, with a suggestion when one is close.
    @Test(arguments: [
        ("program:\n  sise: 640x360\n", "program.sise", "size", "size, format, fps"),
        ("video:\n  encodr: x264\n", "video.encodr", "encoder", "encoder, preset, bitrate, keyframe_interval"),
        ("audio:\n  sourse: tone\n", "audio.sourse", "source", "source, bitrate, master, inputs"),
        ("outputs:\n  - {url: rtmp://h/a/k, nme: x}\n", "outputs[0].nme", "name", "url, name"),
        ("cameras:\n  dmeo: 2\n", "cameras.dmeo", "demo", "backends, demo, pins, iso, iso_preset, iso_encoder"),
        ("cameras:\n  pins:\n    - {match: a, name: b, fpss: 30}\n", "cameras.pins[0].fpss", "fps", "match, name, iso, encoder, size, fps, controls, picture, backup, back, index"),
        ("socket_gruop: studio\n", "socket_gruop", "socket_group", "program, video, audio, outputs, record, database, socket, socket_group, cameras, scenes, overlays, transition, http, network, tally, osc, players, node"),
        ("network:\n  pull:\n    - {name: ptz1, url: rtsp://h/s, latency_sm: 200}\n", "network.pull[0].latency_sm", "latency_ms", "name, url, latency_ms"),
    ])
    func unknownKeysSuggestAndList(_ yaml: String, _ keyPath: String, _ suggestion: String, _ known: String) throws {
        let error = try #require(Self.error(yaml))
        #expect(error.keyPath == keyPath)
        #expect(error.message == "unknown key (did you mean \(suggestion)?); known keys here: \(known)")
    }

    @Test func aFarOffKeyGetsNoSuggestion() throws {
        let error = try #require(Self.error("video:\n  colour: red\n"))
        #expect(error.line == 2 && error.message == "unknown key; known keys here: encoder, preset, bitrate, keyframe_interval")
    }

    /// Every key, given with no value, keeps its default.
    @Test func nullKeepsEveryDefault() throws {
        let yaml = """
        program: {size: ~, format: ~, fps: ~}
        video: {encoder: ~, preset: ~, bitrate: ~, keyframe_interval: ~}
        audio: {source: ~, bitrate: ~}
        outputs: ~
        record: ~
        database: ~
        socket: ~
        socket_group: ~
        cameras: {backends: ~, demo: ~, pins: ~, iso: ~, iso_preset: ~, iso_encoder: ~}
        """
        #expect(try StudioConfiguration.parse(yaml: yaml, source: "t.yaml") == StudioConfiguration())
    }

    @Test func conflictsAreFoundWhateverTheOrder() throws {
        let sizeLast = try #require(Self.error("program:\n  format: 1920x1080@30\n  size: 1280x720\n"))
        #expect(sizeLast.keyPath == "program.format" && sizeLast.line == 2 && sizeLast.message.hasPrefix("conflicts with program.size"))
        let fpsFirst = try #require(Self.error("program:\n  fps: 25\n  format: 1920x1080@30\n"))
        #expect(fpsFirst.keyPath == "program.fps" && fpsFirst.line == 2 && fpsFirst.message.hasPrefix("conflicts with program.format"))
        // A format without a rate is a size, and goes with fps.
        let config = try StudioConfiguration.parse(yaml: "program:\n  format: 640x360\n  fps: 25\n", source: "t")
        #expect(config.program == ProgramFormat(width: 640, height: 360, frameRate: Rational(25)))
    }

    @Test func duplicateNamesPointAtBothLines() throws {
        let defaultName = try #require(Self.error("outputs:\n  - rtmp://h/a/k1\n  - url: rtmp://h/a/k2\n\n    name: output1\n"))
        #expect(defaultName.line == 5 && defaultName.keyPath == "outputs[1].name")
        #expect(defaultName.message == "the name \"output1\" is already used by the output on line 2")
        let pinned = try #require(Self.error("cameras:\n  pins:\n    - {match: a, name: cam1}\n    - match: a\n      name: cam2\n"))
        #expect(pinned.line == 4 && pinned.keyPath == "cameras.pins[1].match" && pinned.message == "\"a\" is already pinned on line 3")
    }

    @Test func valueErrorsAreTheValueSyntaxWords() throws {
        let error = try #require(Self.error("video:\n  bitrate: 200M\n"))
        do {
            _ = try ValueSyntax.videoBitRate.parse("200M")
            Issue.record("expected a refusal")
        } catch {
            #expect(error.message == "200M bit/s is outside the range 100k to 100M")
        }
        #expect(error.description == "t.yaml:2: video.bitrate: 200M bit/s is outside the range 100k to 100M")
    }

    /// Decoding the snapshot's own text is not the point, but encoding what was decoded keeps every key.
    @Test func encodingWritesEveryDecodedSection() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(StudioConfiguration().jsonSnapshot().utf8)) as? [String: Any])
        let leftOutWhileEmpty: Set<String> = ["socket_group", "network", "tally", "osc", "players", "node"]
        let sections = StudioConfiguration.CodingKeys.allCases.map(\.stringValue).filter { !leftOutWhileEmpty.contains($0) }
        #expect(Set(object.keys) == Set(sections))
        #expect(Set((object["video"] as? [String: Any])?.keys ?? [:].keys) == Set(VideoSettings.CodingKeys.allCases.map(\.stringValue)))
        #expect(Set((object["audio"] as? [String: Any])?.keys ?? [:].keys) == Set(AudioSettings.CodingKeys.allCases.map(\.stringValue)))
    }
}
