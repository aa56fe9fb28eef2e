import Foundation
import StudioCore
import StudioViews

/// `studio report` and `studio prune` for an engineer's terminal.
enum ReportText {
    static func text(_ report: ReportReply) -> String {
        let t = Format.programTime
        let session = report.session
        var lines = ["session \(session.id) · started \(Format.time(session.startedAt)) · ran \(t(report.durationMilliseconds)) · "
            + (report.ended == "running" ? "running" : "ended: \(report.ended)") + (session.endedAt.map { " at \(Format.time($0))" } ?? "")]

        let program = report.program
        lines.append("")
        if let from = program.fromMilliseconds, let to = program.toMilliseconds {
            lines.append("PROGRAM  \(t(from)) to \(t(to)) (\(t(program.programMilliseconds))) · \(program.switches) switches: "
                + "\(program.cuts) cuts, \(program.transitions) transitions")
            lines.append(indent(Format.table(["SOURCE", "ON AIR", "SHARE", "INTERVALS"], program.totals.map { total in
                [total.source, t(total.onAirMilliseconds), String(format: "%.1f %%", total.share * 100), String(total.intervals)]
            })))
        } else {
            lines.append("PROGRAM  nothing was on program")
        }

        lines += section("CAMERAS", ["CAMERA", "LOSSES", "RETURNS", "TIME LOST", "OUTAGES (program time, why)"], report.cameras.map { camera in
            [camera.camera, String(camera.losses), String(camera.returns), t(camera.lostMilliseconds),
             camera.outages.map { "\(t($0.fromProgramMilliseconds))+\(seconds($0.durationMilliseconds))\($0.reason.map { " \($0)" } ?? "")" }
                .joined(separator: ", ")]
        })
        lines += section("OUTPUTS", ["OUTPUT", "DISCONNECTS", "RECONNECTS", "ATTEMPTS", "OFF AIR"], report.outputs.map { output in
            [output.output, String(output.disconnects), String(output.reconnects), String(output.attempts), t(output.offAirMilliseconds)]
        })
        lines += section("ENCODER FALLBACKS", ["AT", "ENCODER", "FROM", "TO", "REASON"], report.encoderFallbacks.map { fallback in
            [fallback.programMilliseconds.map(t) ?? Format.time(fallback.wallTime), fallback.camera.map { "ISO \($0)" } ?? "program",
             fallback.from, fallback.to, fallback.reason]
        })
        lines += section("DROPPED FRAMES", ["STAGE", "DROPPED", "REPORTS"], report.drops.map { [$0.stage, String($0.dropped), String($0.reports)] })

        lines.append("")
        if report.loudness.isEmpty {
            lines.append("LOUDNESS  not measured in this database")
        } else {
            lines.append("LOUDNESS  " + report.loudness.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.1f", $0.value))" }
                .joined(separator: " · "))
        }

        lines.append("")
        if report.recordings.isEmpty {
            lines.append("RECORDINGS  none")
        } else {
            let total = report.recordings.compactMap(\.bytes).reduce(0, +)
            lines.append("RECORDINGS  \(report.recordings.count) files, \(bytes(Int64(total)))")
            lines.append(indent(Format.table(["CAMERA", "SIZE", "PATH"], report.recordings.map { recording in
                [recording.camera, recording.bytes.map { bytes(Int64($0)) } ?? "missing", recording.path]
            })))
        }
        return lines.joined(separator: "\n")
    }

    /// A blank line, then `TITLE  none`, or the title and its table indented.
    static func section(_ title: String, _ header: [String], _ rows: [[String]]) -> [String] {
        rows.isEmpty ? ["", "\(title)  none"] : ["", title, indent(Format.table(header, rows))]
    }

    static func prune(_ reply: PruneReply) -> String {
        let verb = reply.dryRun ? "would remove" : "removed"
        var lines: [String] = []
        if reply.sessions.isEmpty {
            lines.append("no session ended before \(Format.time(reply.cutoff)): nothing to remove")
        } else {
            lines.append("\(verb) \(reply.sessions.count) sessions (\(ranges(reply.sessions))) that ended before \(Format.time(reply.cutoff)): "
                + "\(reply.events) events, \(reply.recordings) recording rows")
        }
        if !reply.files.isEmpty {
            let would = reply.files.filter { $0.outcome == "would delete" }
            if reply.dryRun {
                lines.append("would delete \(would.count) files, \(bytes(would.compactMap(\.bytes).reduce(0, +)))")
            } else {
                lines.append("deleted \(reply.filesDeleted) files, \(bytes(reply.bytesDeleted))")
            }
            for file in reply.files where file.outcome != "deleted" && file.outcome != "would delete" {
                lines.append("  \(file.outcome): \(file.path)\(file.reason.map { " (\($0))" } ?? "")")
            }
        }
        if let vacuum = reply.vacuum {
            lines.append("database \(bytes(reply.databaseBytesBefore)) -> \(bytes(reply.databaseBytesAfter)) (\(vacuum))")
        } else if let error = reply.vacuumError {
            lines.append("database not vacuumed: \(error)")
        }
        return lines.joined(separator: "\n")
    }

    /// `1-4, 7, 9-10`.
    static func ranges(_ ids: [Int64]) -> String {
        var parts: [String] = []
        var start: Int64?, last: Int64?
        func close() {
            guard let start, let last else { return }
            parts.append(start == last ? "\(start)" : "\(start)-\(last)")
        }
        for id in ids.sorted() {
            if let current = last, id == current + 1 { last = id; continue }
            close()
            start = id
            last = id
        }
        close()
        return parts.joined(separator: ", ")
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["bytes", "kB", "MB", "GB", "TB"]
        var value = Double(count), unit = 0
        while value >= 1000 && unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(count) bytes" : String(format: "%.1f ", value) + units[unit]
    }

    static func seconds(_ milliseconds: Int64) -> String { String(format: "%.1fs", Double(milliseconds) / 1000) }

    static func indent(_ text: String) -> String { text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n") }
}
