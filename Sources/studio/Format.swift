import Foundation
import Control

/// Tables and lines for people; `--json` prints the replies as they are.
enum Format {
    static func programTime(_ ms: Int64) -> String {
        let total = ms / 1000
        return String(format: "%02d:%02d:%02d.%03d", total / 3600, (total / 60) % 60, total % 60, ms % 1000)
    }

    static func table(_ header: [String], _ rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == cells.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }

    static func text(_ value: JSONValue?) -> String {
        switch value {
        case .none, .some(.null): return "-"
        case .some(let v):
            if let s = v.stringValue { return s }
            if let i = v.intValue { return String(i) }
            if let d = v.doubleValue { return String(d) }
            if let b = v.boolValue { return b ? "yes" : "no" }
            return v.jsonText
        }
    }

    static func cameras(_ result: JSONValue) -> String {
        let cameras = result["cameras"]?.arrayValue ?? []
        if cameras.isEmpty { return "no cameras" }
        return table(["NAME", "BACKEND", "STATE", "FORMAT", "PROGRAM", "DEVICE"], cameras.map { camera in
            var format = "-"
            if let f = camera["format"], f != .null {
                let fps = f["fps"]?.doubleValue ?? 0
                format = "\(text(f["width"]))x\(text(f["height"])) \(text(f["pixel_format"])) @\(String(format: fps.rounded() == fps ? "%.0f" : "%.2f", fps))"
            }
            var state = text(camera["state"])
            if let reason = camera["lost_reason"]?.stringValue { state += " (\(reason))" }
            return [text(camera["name"]), text(camera["backend"]), state, format,
                    camera["on_program"]?.boolValue == true ? "ON AIR" : "", text(camera["display_name"])]
        })
    }

    /// `studio camera`: what the device granted.
    static func cameraMode(_ result: JSONValue) -> String {
        let name = text(result["camera"])
        guard let granted = result["granted"], granted != .null else { return "\(name): no format yet" }
        let mode = "\(text(granted["width"]))x\(text(granted["height"])) \(text(granted["pixel_format"])) @\(text(granted["fps_text"]))"
        if let requested = result["requested"]?.stringValue { return "\(name): asked for \(requested); the device granted \(mode)" }
        return "\(name): \(mode)"
    }

    /// `studio controls`: one control a line with type, value, range or menu.
    static func controls(_ result: JSONValue) -> String {
        let controls = result["controls"]?.arrayValue ?? []
        if controls.isEmpty { return "\(text(result["camera"])): no controls" }
        return controls.map { text($0["summary"]) }.joined(separator: "\n")
    }

    static func status(_ result: JSONValue) -> String {
        let program = result["program"]
        let encoder = result["encoder"]
        var lines = [
            "session   \(text(result["session"])) (up \(text(result["uptime_s"])) s)",
            "program   \(text(program?["source"])) · \(text(program?["format"])) · delivering \(text(program?["fps"])) fps · \(text(program?["frames"])) frames (\(text(program?["slate_frames"])) slate, \(text(program?["late_ticks"])) late)",
            "encoder   \(text(encoder?["video"])) \(text(encoder?["preset"])) · \(text(encoder?["frames_encoded"])) frames, \(text(encoder?["frames_dropped"])) dropped · audio \(text(encoder?["audio"]))",
        ]
        if let reason = encoder?["fallback_reason"]?.stringValue {
            lines.append("          (\(text(encoder?["choice"])): software encoding because \(reason))")
        }
        if let generation = encoder?["generation"]?.intValue, generation > 0 {
            lines.append("          (the encoder was replaced \(generation) time(s) mid-show: see `studio log`, encoder_fallback)")
        }
        if let input = result["audio_input"], input != .null {
            var line = "audio in  \(text(input["source"]))"
            if input["state"] != nil {
                line += " · node \(text(input["node"])) · \(text(input["state"])) · \(text(input["captured_s"])) s captured, \(text(input["silence_s"])) s silence (mic missing)"
            }
            lines.append(line)
        }
        let outputs = result["outputs"]?.arrayValue ?? []
        if outputs.isEmpty { lines.append("outputs   none") }
        for output in outputs {
            var line = "output    \(text(output["name"])) \(text(output["url"])): \(text(output["state"])) · \(text(output["bytes_sent"])) bytes · dropped \(text(output["dropped_video"])) video / \(text(output["dropped_audio"])) audio · \(text(output["reconnects"])) reconnects"
            if let error = output["last_error"]?.stringValue { line += " · last error: \(error)" }
            lines.append(line)
        }
        for iso in result["iso"]?.arrayValue ?? [] {
            lines.append("iso       \(text(iso["camera"])) \(text(iso["size"])) \(text(iso["preset"])): \(text(iso["frames_encoded"])) frames, \(text(iso["frames_skipped"])) skipped · \(text(iso["state"])) · \(text(iso["path"]))")
        }
        return lines.joined(separator: "\n")
    }

    static func recordings(_ result: JSONValue) -> String {
        let session = result["session"]
        let recordings = result["recordings"]?.arrayValue ?? []
        let header = "session \(text(session?["id"])) · started \(text(session?["started_at"])) · " +
            (session?["ended_at"]?.stringValue.map { "ended \($0)" } ?? "running")
        if recordings.isEmpty { return header + "\nno recordings (start the server with --record DIR)" }
        return header + "\n" + table(["CAMERA", "STARTED", "ENDED", "SIZE", "PATH"], recordings.map { r in
            [text(r["camera"]), text(r["started_at"]), r["ended_at"]?.stringValue ?? "recording",
             r["bytes"]?.intValue.map(byteCount) ?? "missing", text(r["path"])]
        })
    }

    static func byteCount(_ bytes: Int) -> String {
        if bytes >= 1 << 30 { return String(format: "%.1f GiB", Double(bytes) / Double(1 << 30)) }
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
        if bytes >= 1 << 10 { return String(format: "%.1f KiB", Double(bytes) / Double(1 << 10)) }
        return "\(bytes) B"
    }

    static func sessions(_ result: JSONValue) -> String {
        let sessions = result["sessions"]?.arrayValue ?? []
        if sessions.isEmpty { return "no sessions yet" }
        return table(["ID", "STARTED", "ENDED", "HOW", "SWITCHES", "EVENTS"], sessions.map { s in
            [text(s["id"]), text(s["started_at"]), s["ended_at"]?.stringValue ?? "running", s["end_reason"]?.stringValue ?? "-",
             text(s["switch_count"]), text(s["event_count"])]
        })
    }

    static func log(_ result: JSONValue) -> String {
        let session = result["session"]
        let events = result["events"]?.arrayValue ?? []
        let header = "session \(text(session?["id"])) · started \(text(session?["started_at"])) · " +
            (session?["ended_at"]?.stringValue.map { "ended \($0) (\(text(session?["end_reason"])))" } ?? "running")
        return header + "\n" + table(["WALL TIME", "PROGRAM", "EVENT", "CAMERA", "DETAILS"], events.map(eventRow))
    }

    static func eventRow(_ event: JSONValue) -> [String] {
        let programMS = event["program_ms"]?.intValue.map { programTime(Int64($0)) } ?? "-"
        let details = (event["details"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\(text($0.value))" }.joined(separator: " ")
        return [text(event["wall_time"]), programMS, text(event["kind"]), text(event["camera"]), details]
    }

    static func eventLine(_ event: JSONValue) -> String { eventRow(event).joined(separator: "  ") }
}
