import Foundation
import Testing
import Control
import TestSupport

/// Issue 34, item 3: every error a person can meet is a sentence. This walks the error paths it can
/// reach through the real binary and a real server (the CLI with bad arguments, with no server and with
/// one that refuses; reloads of broken configs, with their `config_reload_failed` events; bad control
/// requests on the socket and over HTTP) and fails on a Swift type name, a Foundation error domain or a
/// decoder's internals in any of them. The config loader's own paths are in StudioConfigTests'
/// ConfigSentenceTests. In the serialized end-to-end suite (it runs the real server).
extension EndToEndTests {
    static let notSentences = ["ClientFailure(", "NSCocoaErrorDomain", "Dictionary<", "Optional(", "DecodingError", "Swift.",
                               "Error Domain=", "UsageError(", "ControlError(", "ConfigError("]

    static func expectSentence(_ text: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.isEmpty, "\(context): no message", sourceLocation: sourceLocation)
        let found = notSentences.filter { text.contains($0) }
        #expect(found.isEmpty, "\(context): \(found) in \(text)", sourceLocation: sourceLocation)
    }

    @Test func everyErrorAPersonMeetsIsASentence() throws {
        let studio = try StudioHarness()
        let nowhere = studio.directory.appendingPathComponent("none.sock").path
        // The CLI alone: bad arguments, and commands with no server to ask.
        let refused: [[String]] = [
            ["prune", "--older-than", "99999999999d"], ["prune", "--older-than", "1e3d"], ["prune", "--older-than", "0d"],
            ["log", "--since", "yesterday"], ["log", "--kind", "nonsense"], ["log", "--limit", "-1"], ["log", "--limit", "99999999999999999999"],
            ["sessions", "--limit", "x"], ["report", "0"], ["report", "99999999999999999999"], ["export", "--format", "avi"],
            ["serve", "--program", "1e309x720@30"], ["serve", "--bitrate", "1e309"], ["serve", "--cameras", "1e309"],
            ["serve", "--config", studio.directory.path], ["serve", "--http", "[::1"], ["audio", "tone", "--gain", "1e309"],
            ["audio", "tone", "--pan", "nan"], ["transition", "mix", "--frames", "99999999999999999999"], ["switch"],
            ["switch", "cam1", "--socket", nowhere], ["status", "--socket", nowhere], ["reload", "--socket", nowhere],
            ["nonsense"], ["camera", "cam1", "--mode", "huge", "--socket", nowhere],
            ["sessions", "--socket", nowhere, "--db", studio.directory.path], ["transcode", "/nonexistent.mkv"],
        ]
        for words in refused {
            let result = try studio.run(words + (words.contains("--socket") || ["serve", "transcode"].contains(words.first ?? "") ? [] : ["--db", studio.database]))
            #expect(result.status != 0, "\(words) succeeded: \(result)")
            Self.expectSentence(result.error, "studio \(words.joined(separator: " "))")
        }
        let directory = try studio.run(["sessions", "--socket", nowhere, "--db", studio.directory.path])
        #expect(directory.error.contains("cannot read the event database \(studio.directory.path): it is a directory"), "\(directory)")
        let age = try studio.run(["prune", "--older-than", "99999999999d", "--db", studio.database])
        #expect(age.error.contains("longer than 100 years"), "\(age)")

        // A server with a config file, then broken configs reloaded: each refused in a sentence, with the
        // same sentence in its config_reload_failed event, and nothing changed.
        let config = studio.directory.appendingPathComponent("studio.yaml")
        let good = "scenes:\n  - {name: two, layout: side-by-side, sources: [cam1, cam2]}\n"
        try good.write(to: config, atomically: true, encoding: .utf8)
        let port = try NginxRTMP.freePort()
        try studio.serve(["--config", config.path, "--cameras", "2", "--http", "127.0.0.1:\(port)"] + Self.smallProgram)
        let broken: [(yaml: String?, fragment: String)] = [
            ("scenes:\n  - {name: cam1, layout: full, sources: [cam2]}\n", "studio.yaml:2: scenes[0].name: \"cam1\" is a camera's name"),
            ("scenes:\n  - {name: a, layout: full, sources: [b]}\n  - {name: b, layout: full, sources: [a]}\n", "scene a -> b -> a"),
            (String(repeating: "# comment\n", count: 12) + "video: {preset: fa\u{0}st}\n", "studio.yaml:13: invalid YAML: a NUL byte"),
            (good + "audio:\n  master: {gain: 1e309}\n", "studio.yaml:4: audio.master.gain"),
            (good + "audio: {bitrate: 96k}\n", "audio.bitrate cannot change while the server runs"),
            ("video: [\n", "invalid YAML"),
            (nil, "a loop of symbolic links"),
        ]
        for (yaml, fragment) in broken {
            try? FileManager.default.removeItem(at: config)
            if let yaml { try yaml.write(to: config, atomically: true, encoding: .utf8) } else {
                try FileManager.default.createSymbolicLink(atPath: config.path, withDestinationPath: config.path)
            }
            let result = try studio.run(["reload", "--socket", studio.socket])
            #expect(result.status == 1 && result.error.hasPrefix("studio: ") && result.error.contains(fragment)
                    && result.error.hasSuffix("; nothing was changed\n"), "\(result)")
            Self.expectSentence(result.error, "reload of \(fragment)")
        }
        let failures = EndToEndTests.events(try studio.json(["log", "--kind", "config_reload_failed"]), kind: "config_reload_failed")
        #expect(failures.count == broken.count, "\(failures)")
        for failure in failures { Self.expectSentence(failure["details"]?["reason"]?.stringValue ?? "", "config_reload_failed") }
        #expect(try studio.json(["scenes"])["scenes"]?.arrayValue?.map { $0["name"]?.stringValue } == ["two"], "nothing changed")

        // A scene showing a camera that is not there reloads, with a warning that says so.
        try? FileManager.default.removeItem(at: config)
        try "scenes:\n  - {name: two, layout: side-by-side, sources: [cam1, cam9]}\n".write(to: config, atomically: true, encoding: .utf8)
        let warned = try studio.run(["reload", "--socket", studio.socket])
        #expect(warned.status == 0 && warned.error.contains("studio: warning: scene two shows cam9, which is not connected"), "\(warned)")

        // The server refuses: unknown names, values out of range, arguments of the wrong type.
        let serverRefusals: [[String]] = [
            ["switch", "cam9"], ["scene", "nope"], ["audio", "nope", "--gain", "-6"], ["audio", "tone", "--gain", "99"],
            ["picture", "cam9", "--mirror", "on"], ["overlay", "nope", "on"], ["cut"], ["log", "--camera", "cam9"],
            ["report", "999"], ["export", "999"], ["camera", "cam9", "--mode", "640x480"],
        ]
        for words in serverRefusals {
            let result = try studio.run(words + ["--socket", studio.socket])
            #expect(result.status != 0, "\(words) succeeded: \(result)")
            Self.expectSentence(result.error, "studio \(words.joined(separator: " "))")
        }

        // Bad requests on the socket, as raw lines.
        let lines: [String] = [
            #"{"id": 1, "command": "audio", "arguments": {"input": "tone", "gain": 1e309}}"#,
            #"{"id": 2, "command": "audio", "arguments": {"input": "tone", "gain": {"a": 1}}}"#,
            #"{"id": 3, "command": "switch", "arguments": {"source": [1]}}"#,
            #"{"id": 4, "command": "switch", "arguments": {"source": null}}"#,
            #"{"id": 5, "command": "sessions", "arguments": {"limit": 1e400}}"#,
            #"{"id": 6, "command": "transition", "arguments": {"kind": "mix", "frames": 99999999999999999999}}"#,
            #"{"id": 7, "command": "picture", "arguments": {"camera": "cam1", "crop": "a"}}"#,
            #"{"id": 8, "command": "nonsense"}"#, #"{"id": 9}"#, #"[1, 2]"#, #"{"id": 10, "command": "switch", "arguments": 5}"#,
            "{\"id\": 11, \"command\": \"swi\u{0}tch\"}", "not json",
            // Found by the long fuzz (2026-12-06): a wall time near Int64's ends crashed the store thread.
            #"{"id": 12, "command": "sessions", "arguments": {"since_ms": 9223372036854775807}}"#,
            #"{"id": 13, "command": "sessions", "arguments": {"until_ms": 9223372036854775295}}"#,
            #"{"id": 14, "command": "log", "arguments": {"since_ms": -9223372036854775808}}"#,
        ]
        for line in lines {
            // One connection each: replies to a worker's commands may come after later lines' replies.
            let replies = try RawControlConnection(path: studio.socket).exchange([Array((line + "\n").utf8)], expectedLines: 1)
            let reply = try #require(replies.first, "\(line): no reply")
            #expect(reply["ok"] == false, "\(line): \(reply)")
            Self.expectSentence(reply["error"]?["message"]?.stringValue ?? "", "socket \(line)")
        }

        // The same over HTTP, bodies included.
        let requests: [(String, String, String?)] = [
            ("POST", "/api/v1/audio/tone", #"{"gain": 1e309}"#), ("POST", "/api/v1/audio/tone", #"{"gain": [1]}"#),
            ("POST", "/api/v1/audio/tone", "{\"gain\": "), ("POST", "/api/v1/switch", #"{"source": 1e309}"#),
            ("POST", "/api/v1/switch", #"["cam1"]"#), ("POST", "/api/v1/transition", #"{"kind": "mix", "frames": 1e30}"#),
            ("POST", "/api/v1/picture/cam1", #"{"crop": {"x": 1}}"#), ("POST", "/api/v1/switch", "\u{FF}"),
            ("GET", "/api/v1/sessions/abc", nil), ("GET", "/api/v1/sessions/99999999999999999999", nil), ("GET", "/api/v1/nothing", nil),
        ]
        for (method, path, body) in requests {
            let response = try HTTPTestClient.fetch(port: port, method, path, headers: body == nil ? [:] : ["Content-Type": "application/json"],
                                                    body: body.map { Array($0.utf8) })
            #expect(response.status >= 400, "\(method) \(path) \(body ?? ""): \(response)")
            Self.expectSentence(response.text, "\(method) \(path) \(body ?? "")")
        }
        #expect(studio.stopServer() == .exited(0))

        // Files that cannot be written: errno in words, not Foundation's error codes.
        let missing = studio.directory.appendingPathComponent("missing/x").path
        for words in [["report", "1", "--svg", missing], ["export", "1", "--format", "csv", "--output", missing]] {
            let result = try studio.run(words + ["--db", studio.database])
            #expect(result.status == 1 && result.error.contains("No such file or directory"), "\(words): \(result)")
            Self.expectSentence(result.error, "studio \(words.joined(separator: " "))")
        }
    }
}
