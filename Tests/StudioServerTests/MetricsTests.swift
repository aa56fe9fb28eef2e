import Foundation
import Testing
import Control
import StudioCore
@testable import StudioServer
import TestSupport

/// The Prometheus text exposition format (0.0.4), read strictly: every line a `# HELP`, a `# TYPE` or a
/// sample; each family declared once, its TYPE before its samples and its samples together; label
/// values with only the escapes the format allows; every value a number. Anything else is an error
/// naming the line.
struct Exposition {
    struct Family {
        var type: String
        var help: String
        var samples: [(labels: [String: String], value: Double)] = []

        func value(_ labels: [String: String] = [:]) -> Double? { samples.first { $0.labels == labels }?.value }
    }

    var families: [String: Family] = [:]

    struct Problem: Error, CustomStringConvertible {
        var description: String
        init(_ line: Int, _ text: String) { description = "line \(line): \(text)" }
    }

    static let types: Set<String> = ["counter", "gauge", "histogram", "summary", "untyped"]

    static func isMetricName(_ name: Substring) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    init(parsing text: String) throws {
        guard text.hasSuffix("\n") else { throw Problem(0, "the text does not end with a newline") }
        var helps: [String: String] = [:]
        var current: String?
        var seenSeries = Set<String>()
        for (index, line) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let rest = line.dropFirst(7)
                guard let space = rest.firstIndex(of: " ") else { throw Problem(number, "no text after the name: \(line)") }
                let name = String(rest[..<space]), value = String(rest[rest.index(after: space)...])
                guard Self.isMetricName(Substring(name)) else { throw Problem(number, "bad metric name \(name)") }
                if line.hasPrefix("# HELP ") {
                    guard helps[name] == nil, families[name] == nil else { throw Problem(number, "\(name) has a second HELP") }
                    guard !value.replacingOccurrences(of: "\\\\", with: "").replacingOccurrences(of: "\\n", with: "").contains("\\") else {
                        throw Problem(number, "a HELP escape other than \\\\ and \\n")
                    }
                    helps[name] = value
                } else {
                    guard families[name] == nil else { throw Problem(number, "\(name) is declared twice") }
                    guard Self.types.contains(value) else { throw Problem(number, "unknown type \(value)") }
                    families[name] = Family(type: value, help: helps[name] ?? "")
                    current = name
                }
                continue
            }
            guard !line.hasPrefix("#"), !line.isEmpty else { throw Problem(number, "not a HELP, TYPE or sample line: \(line)") }
            // A sample: name, optional {labels}, a space, the value.
            var rest = line[...]
            let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
            let name = String(rest[..<nameEnd])
            guard Self.isMetricName(Substring(name)) else { throw Problem(number, "bad metric name in \(line)") }
            guard let family = current, family == name else {
                throw Problem(number, "sample \(name) is not under its own TYPE (the family being read is \(current ?? "none"))")
            }
            rest = rest[nameEnd...]
            var labels: [String: String] = [:]
            if rest.first == "{" {
                rest = rest.dropFirst()
                while rest.first != "}" {
                    guard let equals = rest.firstIndex(of: "=") else { throw Problem(number, "a label without a value") }
                    let label = rest[..<equals]
                    guard Self.isMetricName(label), !label.contains(":") else { throw Problem(number, "bad label name \(label)") }
                    rest = rest[rest.index(after: equals)...]
                    guard rest.first == "\"" else { throw Problem(number, "label \(label)'s value is not quoted") }
                    rest = rest.dropFirst()
                    var value = ""
                    while true {
                        guard let character = rest.first else { throw Problem(number, "label \(label)'s value never ends") }
                        rest = rest.dropFirst()
                        if character == "\"" { break }
                        if character == "\n" { throw Problem(number, "a raw newline in a label value") }
                        if character == "\\" {
                            switch rest.first {
                            case "\\": value.append("\\")
                            case "\"": value.append("\"")
                            case "n": value.append("\n")
                            default: throw Problem(number, "an escape other than \\\\, \\\" and \\n in label \(label)")
                            }
                            rest = rest.dropFirst()
                        } else {
                            value.append(character)
                        }
                    }
                    guard labels.updateValue(value, forKey: String(label)) == nil else { throw Problem(number, "label \(label) twice") }
                    if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" {
                        throw Problem(number, "labels not separated by commas in \(line)")
                    }
                }
                rest = rest.dropFirst()
            }
            guard rest.first == " " else { throw Problem(number, "no space before the value in \(line)") }
            let valueText = rest.dropFirst()
            let value: Double
            switch valueText {
            case "+Inf": value = .infinity
            case "-Inf": value = -.infinity
            case "NaN": value = .nan
            default:
                guard let number = Double(valueText), !valueText.contains(" ") else { throw Problem(number, "value '\(valueText)' is not a number") }
                value = number
            }
            let series = name + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            guard seenSeries.insert(series).inserted else { throw Problem(number, "series \(series) twice") }
            families[name]?.samples.append((labels, value))
        }
    }

    subscript(name: String) -> Family? { families[name] }
}

@Suite struct MetricsTextTests {
    @Test func labelValuesAndHelpAreEscapedAndReadBack() throws {
        var text = MetricsText()
        let awkward = "cam \"one\"\\two\nthree"
        text.gauge("studio_test_info", "help with a \\ backslash\nand a newline", [(["camera": awkward, "b": "plain"], 1)])
        text.counter("studio_test_total", "a counter", 12_345_678_901)
        text.gauge("studio_test_ratio", "a fraction", [([:], 0.25)])
        text.gauge("studio_test_infinite", "not finite", [(["sign": "plus"], .infinity), (["sign": "minus"], -.infinity)])
        #expect(text.output.contains(#"camera="cam \"one\"\\two\nthree""#), "\(text.output)")
        #expect(text.output.contains("# HELP studio_test_info help with a \\\\ backslash\\nand a newline\n"))
        #expect(text.output.contains("studio_test_total 12345678901\n"), "whole numbers have no fraction or exponent")
        let parsed = try Exposition(parsing: text.output)
        #expect(parsed["studio_test_info"]?.samples.first?.labels == ["camera": awkward, "b": "plain"])
        #expect(parsed["studio_test_total"]?.type == "counter" && parsed["studio_test_total"]?.value() == 12_345_678_901)
        #expect(parsed["studio_test_ratio"]?.value() == 0.25)
        #expect(parsed["studio_test_infinite"]?.value(["sign": "plus"]) == .infinity)
        #expect(parsed["studio_test_infinite"]?.value(["sign": "minus"]) == -.infinity)
    }

    @Test func theStrictReaderRefusesWhatTheFormatDoesNot() {
        let bad = [
            "studio_x 1\n",                                              // a sample before its TYPE
            "# TYPE studio_x gauge\n# TYPE studio_x gauge\nstudio_x 1\n",  // declared twice
            "# TYPE studio_x gauge\nstudio_x{a=\"\\t\"} 1\n",            // an escape the format has not
            "# TYPE studio_x gauge\nstudio_x one\n",                     // not a number
            "# TYPE studio_x gauge\nstudio_x 1",                         // no final newline
            "# TYPE studio_x gauge\n# TYPE studio_y gauge\nstudio_x 1\n",  // a family's samples apart from it
            "# TYPE studio_x gauge\nstudio_x{a=\"1\"} 1\nstudio_x{a=\"1\"} 2\n",  // a series twice
        ]
        for text in bad {
            #expect(throws: Exposition.Problem.self, "\(text.debugDescription)") { try Exposition(parsing: text) }
        }
    }
}

extension EndToEndTests {
    /// `studio metrics` against the real server: three cameras, the program recorded (an output) with
    /// each camera's ISO feed; every metric the console's issue names is there, with sane values.
    @Test func metricsAreValidPrometheusTextWithSaneValues() throws {
        let studio = try StudioHarness()
        let recordings = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--cameras", "3", "--camera-size", "320x180", "--record", recordings.path] + Self.smallProgram)
        #expect(studio.waitForProgramFrames(30))

        func scrape() throws -> Exposition {
            let result = try studio.run(["metrics", "--socket", studio.socket])
            try #require(result.status == 0, "studio metrics: \(result.error)")
            return try Exposition(parsing: result.output)
        }
        func bytes(_ metrics: Exposition) -> Double { metrics["studio_output_sent_bytes_total"]?.samples.map(\.value).reduce(0, +) ?? 0 }
        // The program file gets its first bytes with its first keyframe's cluster.
        var first = try scrape()
        #expect(waitUntil(seconds: 30, every: 0.1) { (try? scrape()).map { first = $0; return bytes($0) > 0 } ?? false })
        let status = try studio.json(["status"])

        for (name, family) in first.families {
            #expect(name.hasPrefix("studio_"), "\(name)")
            #expect(!family.help.isEmpty, "\(name) has no HELP")
            #expect((family.type == "counter") == name.hasSuffix("_total"), "\(name) is a \(family.type)")
        }
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? { first[name]?.value(labels) }
        #expect(value("studio_session_id") == status["session"]?.doubleValue)
        #expect((value("studio_uptime_seconds") ?? 0) > 0)
        #expect((value("studio_program_fps") ?? 0) > 0)
        #expect((value("studio_program_frames_total") ?? 0) >= 30)
        for name in ["studio_program_late_ticks_total", "studio_program_slate_frames_total", "studio_program_composed_frames_total",
                     "studio_program_transition_frames_total", "studio_encoder_frames_dropped_total", "studio_encoder_errors_total",
                     "studio_encoder_overloaded", "studio_event_store_queued_events", "studio_event_store_lost_events_total"] {
            #expect(value(name).map { $0 >= 0 } == true, "\(name): \(String(describing: value(name)))")
        }
        #expect((value("studio_encoder_frames_encoded_total") ?? 0) > 0)
        #expect(first["studio_encoder_info"]?.samples.first?.labels["video"] == status["encoder"]?["video"]?.stringValue)
        #expect((value("studio_event_store_written_events_total") ?? 0) > 0)

        // Three cameras, each live and counting frames; one state set sample per state, the live one 1.
        #expect(value("studio_cameras") == 3 && value("studio_cameras_lost") == 0)
        for camera in ["cam1", "cam2", "cam3"] {
            #expect((value("studio_camera_frames_total", ["camera": camera]) ?? 0) > 0, "\(camera)")
            #expect(value("studio_camera_dropped_frames_total", ["camera": camera]) != nil)
            #expect(value("studio_camera_corrupt_frames_total", ["camera": camera]) == 0)
            #expect(value("studio_camera_up", ["camera": camera]) == 1)
            #expect(value("studio_camera_state", ["camera": camera, "state": "live"]) == 1)
            #expect(value("studio_camera_state", ["camera": camera, "state": "lost"]) == 0)
            #expect(first["studio_camera_state"]?.samples.filter { $0.labels["camera"] == camera }.count == CameraState.allCases.count)
            #expect(value("studio_iso_frames_encoded_total", ["camera": camera]) != nil, "\(camera)'s ISO feed")
            #expect(value("studio_iso_frames_skipped_total", ["camera": camera]) != nil)
        }

        // The program recording: an output, up, with its drops by media and its reconnects.
        let outputs = status["outputs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(!outputs.isEmpty)
        for output in outputs {
            #expect(value("studio_output_up", ["output": output]) == 1, "\(output)")
            #expect(value("studio_output_state", ["output": output, "state": "connected"]) == 1)
            #expect(value("studio_output_dropped_packets_total", ["output": output, "media": "video"]) != nil)
            #expect(value("studio_output_dropped_packets_total", ["output": output, "media": "audio"]) != nil)
            #expect(value("studio_output_reconnects_total", ["output": output]) == 0)
            #expect(value("studio_output_reconnect_attempts_total", ["output": output]) != nil)
            #expect((value("studio_output_sent_packets_total", ["output": output]) ?? 0) > 0)
        }
        #expect(first["studio_audio_input_info"]?.samples.first?.labels["source"] == status["audio_input"]?["source"]?.stringValue)
        #expect(first["studio_disk_free_bytes"]?.samples.first?.labels["path"] == recordings.path)

        // Counters count on: the outputs' bytes and the cameras' frames grow between scrapes.
        let before = bytes(first), framesBefore = value("studio_camera_frames_total", ["camera": "cam2"]) ?? 0
        #expect(waitUntil(seconds: 30, every: 0.1) {
            guard let later = try? scrape() else { return false }
            return bytes(later) > before && (later["studio_camera_frames_total"]?.value(["camera": "cam2"]) ?? 0) > framesBefore
        })
        // The same text as JSON, for scripts.
        let json = try studio.json(["metrics"])
        #expect(try Exposition(parsing: json["text"]?.stringValue ?? "")["studio_cameras"]?.value() == 3)
        #expect(studio.stopServer() == .exited(0))
    }
}
