import Foundation
import StudioCore
import Testing
@testable import StudioConfig

@Suite struct ConfigParseTests {
    @Test(arguments: ["", "\n", "# only a comment\n", "---\n", "---\n...\n", "~\n"])
    func emptyInputGivesDefaults(_ yaml: String) throws {
        let config = try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml")
        #expect(config == StudioConfiguration())
        #expect(config.program == ProgramFormat(width: 1280, height: 720, frameRate: Rational(30)))
        #expect(config.video.encoder == .auto)
        #expect(config.video.preset == "veryfast")
        #expect(config.video.bitRate == 4_500_000)
        #expect(config.video.keyframeIntervalSeconds == 2)
        // Unset: the microphones for a real show, the tone beside test-pattern cameras (--demo).
        #expect(config.audio.source == nil)
        #expect(config.audio.source(testCameras: false) == .microphones && config.audio.source(testCameras: true) == .tone)
        #expect(try StudioConfiguration.parse(yaml: "audio:\n  source: microphones\n", source: "t").audio.source(testCameras: true) == .microphones)
        #expect(config.audio.bitRate == 128_000)
        #expect(config.outputs.isEmpty)
        #expect(config.recordDirectory == nil && config.databasePath == nil && config.socketPath == nil)
        #expect(config.cameras.demoCount == 3 && config.cameras.pins.isEmpty)
        #expect(config.cameras.iso == .auto && config.cameras.isoPreset == "ultrafast")
    }

    @Test func isoRecordingsCanBeTurnedOffGloballyAndPerPin() throws {
        let yaml = """
        cameras:
          iso: false
          iso_preset: superfast
          pins:
            - match: test-pattern:1
              name: cam1
              iso: true
            - match: test-pattern:2
              name: cam2
        """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "s.yaml")
        #expect(config.cameras.iso == .off && config.cameras.isoPreset == "superfast")
        #expect(config.cameras.pins.map(\.iso) == [.auto, nil])
        #expect(config.cameras.isoEnabled(forIdentity: "test-pattern:1"))
        #expect(!config.cameras.isoEnabled(forIdentity: "test-pattern:2"))
        #expect(!config.cameras.isoEnabled(forIdentity: "usb-unpinned"))

        let onByDefault = try StudioConfiguration.parse(yaml: "cameras:\n  pins:\n    - {match: a, name: cam1, iso: off}\n", source: "s.yaml")
        #expect(!onByDefault.cameras.isoEnabled(forIdentity: "a") && onByDefault.cameras.isoEnabled(forIdentity: "b"))

        let snapshot = try #require(try JSONSerialization.jsonObject(with: Data(config.jsonSnapshot().utf8)) as? [String: Any])
        let cameras = try #require(snapshot["cameras"] as? [String: Any])
        #expect(cameras["iso"] as? Bool == false && cameras["iso_preset"] as? String == "superfast")
        #expect((cameras["pins"] as? [[String: Any]])?.first?["iso"] as? Bool == true)
    }

    /// `iso: passthrough|encode`: how each camera's ISO is made (true leaves it to the camera).
    @Test func isoModesArePerCameraAndTrueLeavesItToTheCamera() throws {
        let yaml = """
        cameras:
          iso: encode
          pins:
            - {match: webcam-a, name: cam1, iso: passthrough}
            - {match: webcam-b, name: cam2, iso: yes}
            - {match: webcam-c, name: cam3, iso: Encode}
        """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "s.yaml")
        #expect(config.cameras.iso == .encode)
        #expect(config.cameras.pins.map(\.iso) == [.passthrough, .auto, .encode])
        #expect(["webcam-a", "webcam-b", "webcam-c", "other"].map { config.cameras.isoRecording(forIdentity: $0) }
                == [.passthrough, .auto, .encode, .encode])
        #expect(["webcam-a", "other"].allSatisfy { config.cameras.isoEnabled(forIdentity: $0) })
        let snapshot = try #require(try JSONSerialization.jsonObject(with: Data(config.jsonSnapshot().utf8)) as? [String: Any])
        let cameras = try #require(snapshot["cameras"] as? [String: Any])
        #expect(cameras["iso"] as? String == "encode")
        #expect((cameras["pins"] as? [[String: Any]])?.map { $0["iso"] as? String ?? ($0["iso"] as? Bool).map(String.init) ?? "-" }
                == ["passthrough", "true", "encode"])
        #expect(throws: ConfigError.self) { try StudioConfiguration.parse(yaml: "cameras:\n  iso: copy\n", source: "s.yaml") }
    }

    @Test func pinsCarryADeviceCamerasModeAndControls() throws {
        let config = try StudioConfiguration.parse(yaml: """
        cameras:
          pins:
            - match: usb-046d_HD_Pro_Webcam_C920
              name: cam1
              size: 1280x720
              fps: 29.97
              controls:
                focus_automatic_continuous: false
                focus_absolute: 30
            - {match: vivid-001, name: cam2}
        """, source: "s.yaml")
        let pins = config.cameras.pins
        #expect(pins[0].size?.width == 1280 && pins[0].size?.height == 720 && pins[0].fps == Rational(30000, 1001))
        #expect(pins[0].controls.map(\.name) == ["focus_automatic_continuous", "focus_absolute"])
        #expect(pins[0].controls.map(\.value) == ["false", "30"])
        #expect(pins[1].size == nil && pins[1].fps == nil && pins[1].controls.isEmpty)
        // The session's config snapshot keeps them.
        let snapshot = try #require(try JSONSerialization.jsonObject(with: Data(config.jsonSnapshot().utf8)) as? [String: Any])
        let first = try #require(((snapshot["cameras"] as? [String: Any])?["pins"] as? [[String: Any]])?.first)
        #expect(first["size"] as? String == "1280x720" && first["fps"] as? String == Rational(30000, 1001).description)
        #expect(first["controls"] as? [String: String] == ["focus_automatic_continuous": "false", "focus_absolute": "30"])
    }

    @Test func pinsCarryPictureSettings() throws {
        let config = try StudioConfiguration.parse(yaml: """
        cameras:
          pins:
            - match: C920
              name: cam1
              picture:
                crop: [0.1, 0, 0.8, 1]
                mirror: true
                flip: off
                rotate: 180
                brightness: 0.05
                contrast: 1.1
                saturation: 0.9
                gamma: 1.2
                beauty: 40
            - {match: vivid-001, name: cam2}
        """, source: "s.yaml")
        var expected = PictureSettings()
        expected.crop = RelativeRect(x: 0.1, y: 0, width: 0.8, height: 1)
        expected.mirror = true
        expected.rotation = 180
        (expected.brightness, expected.contrast, expected.saturation, expected.gamma) = (0.05, 1.1, 0.9, 1.2)
        expected.beauty = 40
        let pins = config.cameras.pins
        #expect(pins[0].picture == expected)
        #expect(pins[1].picture == PictureSettings() && pins[1].picture.isIdentity)
        #expect(config.cameras.pin(forIdentity: "usb-046d_HD_Pro_Webcam_C920_1234")?.picture == expected)
        // The session's config snapshot keeps them (for a pin that has any), under the same keys.
        let snapshot = try #require(try JSONSerialization.jsonObject(with: Data(config.jsonSnapshot().utf8)) as? [String: Any])
        let listed = try #require((snapshot["cameras"] as? [String: Any])?["pins"] as? [[String: Any]])
        let picture = try #require(listed[0]["picture"] as? [String: Any])
        #expect(Set(picture.keys) == Set(PictureSettings.Key.allCases.map(\.rawValue)))
        #expect(picture["crop"] as? [Double] == [0.1, 0, 0.8, 1] && picture["mirror"] as? Bool == true && picture["beauty"] as? Int == 40)
        #expect(listed[1]["picture"] == nil)
        // And reads back to the same settings.
        let again = try StudioConfiguration.parse(yaml: "cameras:\n  pins:\n    - match: C920\n      name: cam1\n      picture: "
            + String(decoding: try JSONSerialization.data(withJSONObject: picture, options: [.sortedKeys]), as: UTF8.self) + "\n", source: "t")
        #expect(again.cameras.pins[0].picture == expected)
    }

    @Test func cameraBackendsAndPinMatching() throws {
        #expect(try StudioConfiguration.parse(yaml: "", source: "t").cameras.backends == [.v4l2, .pipewire])
        #expect(try StudioConfiguration.parse(yaml: "cameras:\n  backends: [pipewire]\n", source: "t").cameras.backends == [.pipewire])
        #expect(try StudioConfiguration.parse(yaml: "cameras:\n  backends: []\n", source: "t").cameras.backends == [])
        #expect(try StudioConfiguration.parse(yaml: "cameras:\n  backends: none\n", source: "t").cameras.backends == [])
        #expect(try StudioConfiguration.parse(yaml: "cameras:\n  backends: v4l2,pipewire\n", source: "t").cameras.backends == [.v4l2, .pipewire])
        #expect(BackendName.parseList("v4l2,,x") == nil && BackendName.parseList("") == nil)

        let config = try StudioConfiguration.parse(yaml: """
            cameras:
              pins:
                - match: C920
                  name: wide
                  iso: false
                - match: /dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_ABC-video-index0
                  name: close
            """, source: "t")
        let settings = config.cameras
        // An exact match wins over a part; a part matches the identity or the device's name.
        #expect(settings.pin(forIdentity: "/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_ABC-video-index0")?.name.name == "close")
        #expect(settings.pin(forIdentity: "/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_XYZ-video-index0")?.name.name == "wide")
        #expect(settings.pin(forIdentity: "pipewire:node.x", displayName: "HD Pro Webcam C920")?.name.name == "wide")
        #expect(settings.pin(forIdentity: "pipewire:node.y", displayName: "Other") == nil)
        #expect(!settings.isoEnabled(forIdentity: "usb-C920-2") && settings.isoEnabled(forIdentity: "other"))
    }

    @Test func isoEncoderFollowsTheProgramUnlessSetOrPinned() throws {
        let plain = try StudioConfiguration.parse(yaml: "video:\n  encoder: vaapi\n", source: "t")
        #expect(plain.cameras.isoEncoder(forIdentity: "x", program: plain.video.encoder) == .vaapi)
        let config = try StudioConfiguration.parse(yaml: """
            cameras:
              iso_encoder: auto
              pins:
                - match: C920
                  name: wide
                  encoder: x264
            """, source: "t")
        #expect(config.cameras.isoEncoder(forIdentity: "usb-C920", program: .vaapi) == .x264)
        #expect(config.cameras.isoEncoder(forIdentity: "other", program: .vaapi) == .auto)
        #expect(throws: ConfigError.self) {
            try StudioConfiguration.parse(yaml: "cameras:\n  pins:\n    - match: a\n      name: b\n      encoder: nvenc\n", source: "t")
        }
    }

    @Test func sectionsLeftEmptyKeepTheirDefaults() throws {
        let config = try StudioConfiguration.parse(yaml: "program:\nvideo:\n  preset:\noutputs:\nrecord: ~\n", source: "s.yaml")
        #expect(config == StudioConfiguration())
    }

    @Test func fullExampleParses() throws {
        let yaml = """
        program:
          size: 1920x1080
          fps: 29.97
        video:
          encoder: x264
          preset: fast
          bitrate: 6M
          keyframe_interval: 1.5
        audio:
          source: "pipewire:alsa_input.usb-mic"
          bitrate: 160k
        outputs:
          - url: rtmp://a.rtmp.youtube.com/live2/abcd-efgh
            name: youtube
          - url: rtmps://live.example.com:443/app/key2
          - rtmp://127.0.0.1/live/third
        record: /var/lib/studio/recordings
        database: /var/lib/studio/studio.db
        socket: /run/studio/studio.sock
        cameras:
          demo: 2
          pins:
            - match: "usb-Logitech_C920_ABC123"
              name: cam1
            - {match: usb-Elgato_0005, name: wide}
        """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml")
        #expect(config.program == ProgramFormat(width: 1920, height: 1080, frameRate: Rational(30000, 1001)))
        #expect(config.video.encoder == .x264)
        #expect(config.video.preset == "fast")
        #expect(config.video.bitRate == 6_000_000)
        #expect(config.video.keyframeIntervalSeconds == 1.5)
        #expect(config.audio.source == .pipewire(node: "alsa_input.usb-mic"))
        let defaultMic = try StudioConfiguration.parse(yaml: "audio:\n  source: pipewire\n", source: "t").audio.source
        #expect(defaultMic == .pipewire(node: "") && defaultMic?.description == "pipewire")
        #expect(config.audio.bitRate == 160_000)
        #expect(config.outputs == [
            OutputTarget(name: "youtube", url: "rtmp://a.rtmp.youtube.com/live2/abcd-efgh"),
            OutputTarget(name: "output2", url: "rtmps://live.example.com:443/app/key2"),
            OutputTarget(name: "output3", url: "rtmp://127.0.0.1/live/third"),
        ])
        #expect(config.recordDirectory == "/var/lib/studio/recordings")
        #expect(config.databasePath == "/var/lib/studio/studio.db")
        #expect(config.socketPath == "/run/studio/studio.sock")
        #expect(config.cameras.demoCount == 2)
        #expect(config.cameras.pins == [CameraPin(match: "usb-Logitech_C920_ABC123", name: "cam1"),
                                        CameraPin(match: "usb-Elgato_0005", name: "wide")])
    }

    @Test func formatGivesSizeAndRateAtOnce() throws {
        let config = try StudioConfiguration.parse(yaml: "program:\n  format: 1280x720@60\n", source: "s.yaml")
        #expect(config.program == ProgramFormat(width: 1280, height: 720, frameRate: Rational(60)))
        let sizeOnly = try StudioConfiguration.parse(yaml: "program:\n  size: 640x360\n", source: "s.yaml")
        #expect(sizeOnly.program == ProgramFormat(width: 640, height: 360, frameRate: Rational(30)))
    }

    @Test func theDemoConfigParses() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/demo.yaml").path
        let config = try StudioConfiguration.load(path: path)
        #expect(config.scenes.map(\.name) == ["interview", "pip", "trio"])
        #expect(config.overlays.map(\.name) == ["caption"])
        #expect(config.transition == TransitionSpec(kind: .mix, frames: 15))
    }

    @Test func shippedExampleConfigParses() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/studio.yaml").path
        let config = try StudioConfiguration.load(path: path)
        #expect(config.program == .default)
        #expect(config.outputs.isEmpty, "the packaged /etc/studio/studio.yaml streams nowhere until a destination is set")
        #expect(config.cameras.pins.count == 1)
        #expect(config.socketPath == "/run/studio/studio.sock")
        #expect(config.http.enabled && config.http.listen == .httpDefault && config.http.token == nil && config.http.tls == nil)
    }

    /// docs/config.md's table of sections names every top-level key the parser takes, once.
    @Test func theConfigReferenceListsEverySection() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/config.md").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## The config file\n").dropFirst().first, "docs/config.md has the section")
        let documented = section.components(separatedBy: "\n## ")[0].split(separator: "\n")
            .filter { $0.hasPrefix("| `") }
            .flatMap { $0.dropFirst(2).prefix { $0 != "|" }.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) } }
        #expect(documented.sorted() == StudioConfiguration.CodingKeys.allCases.map(\.rawValue).sorted())
    }

    @Test(arguments: [
        ("4500000", 4_500_000), ("4500k", 4_500_000), ("4.5M", 4_500_000), ("4500K", 4_500_000),
        ("4.5m", 4_500_000), ("128k", 128_000), ("0.5M", 500_000), (" 2500k ", 2_500_000),
    ])
    func bitRateForms(_ text: String, _ expected: Int) throws {
        #expect(BitRate.parse(text) == expected)
        let config = try StudioConfiguration.parse(yaml: "video:\n  bitrate: \(text.trimmingCharacters(in: .whitespaces))\n", source: "s.yaml")
        #expect(config.video.bitRate == expected)
    }

    @Test(arguments: ["", "k", "M", "4.5.1M", "-5k", "1e6", "4500kb", "0", "0k", "fast", ".5M", "5.M", "inf", "4,500k"])
    func invalidBitRates(_ text: String) {
        #expect(BitRate.parse(text) == nil)
    }

    @Test func bitRateDescriptions() {
        #expect(BitRate.describe(4_500_000) == "4500k")
        #expect(BitRate.describe(6_000_000) == "6M")
        #expect(BitRate.describe(1234) == "1234")
    }

    @Test func snapshotMasksTheStreamKey() throws {
        let yaml = """
        outputs:
          - url: rtmp://a.rtmp.youtube.com/live2/abcd-efgh-SECRET
            name: youtube
        video:
          bitrate: 3M
        """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "s.yaml")
        let snapshot = config.jsonSnapshot()
        #expect(!snapshot.contains("SECRET"))
        #expect(snapshot.contains("rtmp://a.rtmp.youtube.com/live2/****"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(snapshot.utf8)) as? [String: Any])
        let outputs = try #require(object["outputs"] as? [[String: Any]])
        #expect(outputs.first?["name"] as? String == "youtube")
        #expect((object["video"] as? [String: Any])?["bitrate"] as? Int == 3_000_000)
        #expect((object["program"] as? [String: Any])?["format"] as? String == "1280x720@30")
        #expect(object["record"] is NSNull)
        #expect(Set(object.keys) == ["program", "video", "audio", "outputs", "record", "database", "socket", "cameras", "scenes", "overlays", "transition", "http"])
        // Stable: the same configuration gives the same text.
        #expect(config.jsonSnapshot() == snapshot)
    }

    @Test func nodeTreeKeepsLinesAndQuoting() throws {
        let root = try #require(try ConfigNode.parse(yaml: "a: 1\nb:\n  - \"null\"\n  - null\n", source: "t.yaml"))
        guard case .mapping(let entries) = root.value else { Issue.record("expected a mapping"); return }
        #expect(entries.map(\.key) == ["a", "b"])
        #expect(entries.map(\.keyLine) == [1, 2])
        guard case .sequence(let items) = entries[1].value.value else { Issue.record("expected a sequence"); return }
        #expect(items.map(\.line) == [3, 4])
        #expect(items[0].value == .scalar("null", isPlain: false) && !items[0].isNull)
        #expect(items[1].isNull)
    }

    @Test func missingFileErrorNamesThePath() throws {
        let path = "/nonexistent-studio-dir/studio.yaml"
        do {
            _ = try StudioConfiguration.load(path: path)
            Issue.record("expected an error")
        } catch {
            #expect(error.source == path)
            #expect(error.description == "\(path): cannot read the config file: no such file")
        }
        #expect(try StudioConfiguration.loadIfPresent(path: path) == StudioConfiguration())
    }

    @Test func fileErrorsCarryTheFilePathAndLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-config-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("studio.yaml").path
        try "video:\n  preset: fast\n  bitrate: lots\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigError(source: path, line: 3, keyPath: "video.bitrate",
                                    message: "expected a bit rate like 4500k, 4.5M or 4500000, got \"lots\"")) {
            try StudioConfiguration.load(path: path)
        }
        // A directory is not a config file.
        do {
            _ = try StudioConfiguration.load(path: directory.path)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix(directory.path + ": cannot read the config file"))
        }
    }
}
