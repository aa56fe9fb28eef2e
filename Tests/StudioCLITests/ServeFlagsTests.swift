import Foundation
import Testing
@testable import StudioCLI
import StudioEngine
import StudioConfig
import StudioCore

@Suite struct ServeFlagsTests {
    static let serve = CommandSpec("serve", abstract: "", summary: "", options: ServeFlags.options)

    static func settings(_ words: [String]) throws -> ServeSettings {
        try ServeFlags.settings(ParsedArguments(words, for: serve))
    }

    /// The message after `studio serve: --flag VALUE: `, or nil when the flag took the value.
    static func flagError(_ flag: String, _ value: String) -> String? {
        do {
            _ = try settings(["--" + flag, value])
            return nil
        } catch let error as UsageError {
            // A URL is not echoed (the message shows it masked where that is safe).
            let prefix = "studio serve: --\(flag)" + (value.contains("://") ? "" : " " + value) + ": "
            #expect(error.message.hasPrefix(prefix), "\(error.message)")
            return String(error.message.dropFirst(prefix.count))
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    /// The message after `s.yaml:LINE: KEY: `, or nil when the config took the value.
    static func configError(_ key: String, _ value: String) -> String? {
        var parts = key.split(separator: ".").map(String.init)
        let last = parts.removeLast()
        var yaml = ""
        for (depth, part) in parts.enumerated() { yaml += String(repeating: "  ", count: depth) + part + ":\n" }
        let quotedValue = "\"" + value.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        if last == "outputs" {
            yaml += "outputs:\n  - \(quotedValue)\n"
        } else {
            yaml += String(repeating: "  ", count: parts.count) + last + ": " + quotedValue + "\n"
        }
        do {
            _ = try StudioConfiguration.parse(yaml: yaml, source: "s.yaml")
            return nil
        } catch {
            return error.message
        }
    }

    /// Values that a flag and its config key both refuse, with the same words.
    static let refused: [String: [String]] = [
        "http": ["8080", "host:8080", "127.0.0.1:99999", "1.2.3:80", "127.0.0.1:", ""],
        "bitrate": ["10", "99k", "100.5M", "200M", "4500kb", "fast", ""],
        "audio": ["mic", "pipewire:", "pipewire: ", "Tone", ""],
        "rtmp": ["http://host/app/key", "rtmp://", "rtmp://host", "rtmp://host/", "rtmp://host/app key", "host/app/key"],
        "program": ["1280x720@abc", "1281x720@30", "1280x720@500", "8000x720@30", "@30"],
        "preset": ["quick", "VERYFAST", ""],
        "iso-preset": ["quick", ""],
        "encoder": ["nvenc", "X264", ""],
        "backends": ["usb", "v4l2,usb", "", ","],
        "cameras": ["17", "-1", "many", ""],
        "socket": ["run/studio.sock", ""],
        "socket-group": ["a b", "a/b", "a:b", ""],
        "record": [""],
        "db": [""],
        "node": ["pc 2", "pc2/cam1", ""],
        "send": ["rtmp://host/app/key", "srt://host", "srt://host:9710?streamid=pc2/cam1", "srt://host:9710?mode=listener"],
    ]

    /// Values both take.
    static let accepted: [String: [String]] = [
        "bitrate": ["100k", "100M", "4.5M", "4500000"],
        "audio": ["tone", "silence", "pipewire", "pipewire:alsa_input.usb"],
        "rtmp": ["rtmp://127.0.0.1/live/key", "rtmps://live.example.com:443/app/key2"],
        "program": ["1920x1080@30000/1001", "640x360@25"],
        "encoder": ["auto", "vaapi", "x264"],
        "backends": ["none", "v4l2,pipewire", "pipewire"],
        "cameras": ["0", "16"],
        "socket-group": ["studio"],
        "http": ["127.0.0.1:8080", "0.0.0.0:0", "localhost:9000"],
    ]

    @Test func everyFlagWithAConfigKeyIsTested() {
        let related = Set(ServeFlags.all.filter { $0.configKey != nil && $0.option.takesValue }.map(\.option.name))
        #expect(related == Set(Self.refused.keys))
    }

    @Test(arguments: refusedPairs)
    func aFlagAndItsConfigKeyRefuseTheSameValues(_ flag: String, _ value: String) throws {
        let key = try #require(ServeFlags.all.first { $0.option.name == flag }?.configKey)
        let fromFlag = Self.flagError(flag, value)
        let fromConfig = Self.configError(key, value)
        #expect(fromFlag != nil, "--\(flag) took \(value)")
        #expect(fromFlag == fromConfig, "--\(flag) \(value) vs \(key)")
    }

    static var refusedPairs: [(String, String)] { refused.flatMap { flag, values in values.map { (flag, $0) } } }
    static var acceptedPairs: [(String, String)] { accepted.flatMap { flag, values in values.map { (flag, $0) } } }

    @Test(arguments: acceptedPairs)
    func aFlagAndItsConfigKeyTakeTheSameValues(_ flag: String, _ value: String) throws {
        let key = try #require(ServeFlags.all.first { $0.option.name == flag }?.configKey)
        #expect(Self.flagError(flag, value) == nil)
        #expect(Self.configError(key, value) == nil)
    }

    /// `--node NAME --send URL`: a capture node; one without the other is refused, naming what is missing.
    @Test func aNodeNeedsItsNameAndWhereItSends() throws {
        let settings = try Self.settings(["--node", "pc2", "--send", "srt://192.0.2.1:9710?passphrase=node-secret-123"])
        let node = try #require(settings.configuration.node)
        #expect(node.name == "pc2" && node.send == "srt://192.0.2.1:9710?passphrase=node-secret-123" && node.bitRate == NodeSettings.defaultBitRate)
        #expect(node.url(of: "cam1") == "srt://192.0.2.1:9710?passphrase=node-secret-123&streamid=pc2/cam1")
        func refusal(_ words: [String]) -> String? {
            do { _ = try Self.settings(words) } catch let error as UsageError { return error.message } catch { return "\(error)" }
            return nil
        }
        #expect(refusal(["--send", "srt://192.0.2.1:9710"])?.contains("--send needs --node NAME") == true)
        #expect(refusal(["--node", "pc2"])?.contains("--node needs --send") == true)
    }

    @Test func flagsOverrideTheConfigFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("studio.yaml").path
        try """
        video:
          bitrate: 3M
          preset: fast
        outputs:
          - url: rtmp://h/app/from-config
        cameras:
          demo: 2
          pins:
            - {match: a, name: cam1, iso: true}
        """.write(toFile: path, atomically: true, encoding: .utf8)

        let fromFile = try Self.settings(["--config", path])
        #expect(fromFile.configuration.video.bitRate == 3_000_000 && fromFile.configuration.video.preset == "fast")
        let options = try fromFile.serverOptions(environment: [:])
        #expect(options.testCameraCount == 0 && options.configuration.cameras.backends == [.v4l2, .pipewire])

        let flagged = try Self.settings(["--config", path, "--bitrate", "6M", "--rtmp", "rtmp://h/a/k1", "--rtmp", "rtmp://h/a/k2",
                                         "--no-iso", "--demo", "--socket", "/tmp/x.sock", "--db", "/tmp/x.db"])
        #expect(flagged.configuration.video.bitRate == 6_000_000 && flagged.configuration.video.preset == "fast")
        #expect(flagged.configuration.outputs == [OutputTarget(name: "rtmp1", url: "rtmp://h/a/k1"), OutputTarget(name: "rtmp2", url: "rtmp://h/a/k2")])
        // Named by kind: an SRT destination is srt1, not rtmp3.
        let mixed = try Self.settings(["--rtmp", "rtmp://h/a/k1", "--rtmp", "srt://h:9000?streamid=s", "--rtmp", "rtmps://h/a/k2",
                                       "--rtmp", "rtmp://h/a/k3"])
        #expect(mixed.configuration.outputs.map(\.name) == ["rtmp1", "srt1", "rtmps1", "rtmp2"])
        #expect(flagged.configuration.cameras.iso == .off && flagged.configuration.cameras.pins.map(\.iso) == [.off])
        let demo = try flagged.serverOptions(environment: ["STUDIO_SOCKET": "/tmp/env.sock", "STUDIO_DB": "/tmp/env.db"])
        #expect(demo.testCameraCount == 2, "--demo runs the config's cameras.demo test cameras")
        #expect(demo.configuration.cameras.backends.isEmpty, "test cameras stand in for the real ones")
        #expect(demo.socketPath == "/tmp/x.sock" && demo.databasePath == "/tmp/x.db", "flags win over the environment")

        let both = try Self.settings(["--cameras", "1", "--backends", "pipewire", "--camera-size", "640x360", "--inject-encoder-fault", "5"])
            .serverOptions(environment: [:])
        #expect(both.testCameraCount == 1 && both.configuration.cameras.backends == [.pipewire])
        #expect(both.testCameraSize?.width == 640 && both.testCameraSize?.height == 360 && both.injectEncoderFaultAfterFrames == 5)
    }

    @Test func aBadConfigFileIsAFailureWithItsLine() throws {
        do {
            _ = try Self.settings(["--config", "/nonexistent-studio/studio.yaml"])
            Issue.record("expected an error")
        } catch let error as ClientFailure {
            #expect(error.exitCode == 2 && error.message == "/nonexistent-studio/studio.yaml: cannot read the config file: no such file")
        }
    }

    /// The `studio serve [...]` synopsis of the README and of the config reference lists the declared
    /// options (all but the testing aids).
    @Test(arguments: ["README.md", "docs/config.md"])
    func synopsisMatchesTheDeclarations(_ document: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        let start = try #require(text.range(of: "    studio serve [--config"), "\(document) has the synopsis")
        let lines = text[start.lowerBound...].split(separator: "\n", omittingEmptySubsequences: false).prefix { $0.hasPrefix("    ") }
        var documented: [String] = []
        for line in lines {
            var rest = Substring(line)
            while let open = rest.firstIndex(of: "["), let close = rest[open...].firstIndex(of: "]") {
                var token = String(rest[open...close])
                rest = rest[rest.index(after: close)...]
                if rest.hasPrefix("...") { token += "..."; rest = rest.dropFirst(3) }
                documented.append(token)
            }
        }
        let declared = ServeFlags.options.filter { !["inject-encoder-fault", "inject-clock-offset"].contains($0.name) }.map(\.synopsis)
        #expect(Set(documented) == Set(declared), "\(document): \(documented)")
        #expect(documented.count == declared.count)
    }
}
