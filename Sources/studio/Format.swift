import Foundation
import Control
import StudioCore
import StudioCLI
import StudioViews

/// Tables and lines for people; `--json` prints the replies as they are.
enum Format {
    static func programTime(_ ms: Int64) -> String { HistoryTime.programText(ms) }

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

    /// A reply decoded as its type and formatted; a reply this studio cannot read (a newer server's, or
    /// not a reply at all) is shown as JSON with the reason.
    static func decoded<Reply: Decodable>(_ result: JSONValue, as type: Reply.Type, _ format: (Reply) -> String) -> String {
        do { return format(try result.decode(type)) } catch {
            return "cannot read the reply as \(type) (\(error)):\n\(result.jsonText)"
        }
    }

    static func text(_ value: String?) -> String { value ?? "-" }

    /// A number as JSON writes it: integral values without a fraction (`30`, `29.97`).
    static func number(_ value: Double) -> String {
        if value.rounded() == value, let integer = Int(exactly: value) { return String(integer) }
        return String(value)
    }

    static func time(_ date: Date) -> String { ISO8601Time.format(date) }

    static func cameras(_ result: JSONValue) -> String {
        decoded(result, as: CamerasReply.self) { reply in
            if reply.cameras.isEmpty { return "no cameras" }
            return table(["NAME", "BACKEND", "STATE", "FORMAT", "TALLY", "DEVICE"], reply.cameras.map { camera in
                var format = "-"
                if let f = camera.format {
                    format = "\(f.width)x\(f.height) \(f.pixelFormat) @\(String(format: f.fps.rounded() == f.fps ? "%.0f" : "%.2f", f.fps))"
                }
                var state = camera.state
                if let reason = camera.lostReason { state += " (\(reason))" }
                return [camera.name, camera.backend, state, format, tally(camera.tally), camera.displayName]
            }) + reply.cameras.compactMap { camera in camera.network.map { "\n\(camera.name): \($0.summary)" } }.joined()
                + reply.cameras.compactMap { camera in camera.player.map { "\n\(camera.name): \($0.summary)" } }.joined()
                + (reply.switcherClock.map { "\n" + $0.summary } ?? "")
        }
    }

    /// `studio camera`: what the device granted.
    static func cameraMode(_ result: JSONValue) -> String {
        decoded(result, as: CameraModeReply.self) { reply in
            guard let granted = reply.granted else { return "\(reply.camera): no format yet" }
            let mode = "\(granted.width)x\(granted.height) \(granted.pixelFormat) @\(granted.fpsText)"
            let warning = reply.warning.map { "\nwarning: \($0)" } ?? ""
            if let requested = reply.requested { return "\(reply.camera): asked for \(requested); the device granted \(mode)" + warning }
            return "\(reply.camera): \(mode)" + warning
        }
    }

    /// `studio controls`: one control a line with type, value, range or menu.
    static func controls(_ result: JSONValue) -> String {
        decoded(result, as: ControlsReply.self) { reply in
            if reply.controls.isEmpty { return "\(reply.camera): no controls" }
            return reply.controls.map(\.summary).joined(separator: "\n")
        }
    }

    /// `studio focus`: the method the camera used, and why not better.
    static func focus(_ reply: FocusReply) -> String {
        var line = "\(reply.camera): focus on (\(reply.x), \(reply.y)) by \(reply.method)"
        if let region = reply.region { line += ", region \(region.map(String.init).joined(separator: " ")) (left top width height)" }
        if let exposure = reply.exposure { line += "; exposure \(exposure)" }
        if let reason = reply.reason { line += "\n  \(reason)" }
        return line
    }

    /// A tally as on a switcher panel: `PROGRAM` (red), `PREVIEW` (green), `PGM+PVW`.
    static func tally(_ state: String?) -> String {
        switch state {
        case "program": return "PROGRAM"
        case "preview": return "PREVIEW"
        case "both": return "PGM+PVW"
        default: return ""
        }
    }

    /// `studio scenes`: one scene a line.
    static func scenes(_ result: JSONValue) -> String {
        decoded(result, as: ScenesReply.self) { reply in
            var text = reply.scenes.isEmpty ? "no scenes (declare them under scenes: in the config file)"
                : table(["SCENE", "LAYOUT", "SOURCES", "LAYERS", "TALLY"], reply.scenes.map { scene in
                    [scene.name, scene.layout ?? "layers", scene.sources.joined(separator: ","), String(scene.layers.count), tally(scene.tally)]
                })
            if !reply.overlays.isEmpty {
                text += "\n\n" + table(["OVERLAY", "STATE", "LAYERS"], reply.overlays.map { overlay in
                    [overlay.name, overlay.on ? "on" : "off", overlay.layers.map(\.source).joined(separator: ", ")]
                })
            }
            return text
        }
    }

    /// "logo on · lower-third off", or "none".
    private static func overlays(_ overlays: [StatusReply.ProgramView.OverlayView]) -> String {
        overlays.isEmpty ? "none" : overlays.map { overlay in "\(overlay.name) \(overlay.on ? "on" : "off")" }.joined(separator: " · ")
    }

    static func status(_ result: JSONValue) -> String {
        decoded(result, as: StatusReply.self) { reply in
            let program = reply.program, encoder = reply.encoder
            var lines = [
                "session   \(reply.session) (up \(number(reply.uptimeSeconds)) s)",
                "program   \(text(program.source)) · preview \(text(program.preview))"
                    + (program.transition.map { " · \($0.kind) to \($0.to): \($0.shown)/\($0.frames) frames" } ?? "")
                    + " · auto: \(program.defaultTransition.kind) \(program.defaultTransition.frames) frames",
                "          \(program.format) · delivering \(number(program.fps)) fps · \(program.frames) frames (\(program.slateFrames) slate, \(program.lateTicks) late)",
                "overlays  " + overlays(program.overlays),
                "encoder   \(encoder.video) \(encoder.preset) · \(encoder.framesEncoded) frames, \(encoder.framesDropped) dropped · audio \(encoder.audio)",
            ]
            if let backup = program.backup {
                lines.insert("backup    \(backup.onAir) is on air for lost \(backup.lost) · back: \(backup.back) · cut back: \(backup.cutBack)", at: 2)
            }
            if let reason = encoder.fallbackReason {
                lines.append("          (\(encoder.choice): software encoding because \(reason))")
            }
            if encoder.generation > 0 {
                lines.append("          (the encoder was replaced \(encoder.generation) time(s) mid-show: see `studio log`, encoder_fallback)")
            }
            let input = reply.audioInput
            var line = "audio in  \(input.source)"
            if let state = input.state {
                line += " · node \(text(input.node?.wrappedValue)) · \(state) · \(input.capturedSeconds.map(number) ?? "-") s captured, \(input.silenceSeconds.map(number) ?? "-") s silence (mic missing)"
            }
            if let reason = reply.audio.mixer.silenceReason { line += " · the program is silence: \(reason)" }
            lines.append(line)
            let levels = reply.audio.levels
            func dbfs(_ values: [Double]) -> String {
                values.map { $0 <= levels.floorDBFS ? "-inf" : String(format: "%.1f", $0) }.joined(separator: " / ")
            }
            lines.append("levels    peak \(dbfs(levels.peakDBFS)) dBFS · rms \(dbfs(levels.rmsDBFS)) · hold \(dbfs(levels.peakHoldDBFS))")
            if reply.outputs.isEmpty { lines.append("outputs   none") }
            for output in reply.outputs { lines.append("output    " + Format.output(output)) }
            let store = reply.store
            var storeLine = "store     \(store.written) events written · \(store.queued) queued · \(store.lost) lost"
            if let since = store.retryingSince { storeLine += " · RETRYING since \(time(since)): \(text(store.lastError))" }
            if store.replacements > 0 { storeLine += " · database file REPLACED \(store.replacements) time(s) mid-show" }
            if let problem = store.fileProblem { storeLine += " · DATABASE FILE: \(problem)" }
            lines.append(storeLine)
            if let clock = reply.switcherClock { lines.append("node      " + clock.summary) }
            if let disk = reply.disk {
                let free = disk.freeBytes.map { String(format: "%.1f GB free", Double($0) / 1e9) } ?? "free space unknown"
                lines.append("disk      \(free) at \(disk.path)")
            }
            for (camera, settings) in program.pictures.sorted(by: { $0.key < $1.key }) {
                lines.append("picture   \(camera): \(pictureSettings(settings))")
            }
            for iso in reply.iso {
                let how = iso.mode == "passthrough" ? "passthrough \(iso.codec)" : iso.preset
                lines.append("iso       \(iso.camera) \(text(iso.size)) \(how): \(iso.framesEncoded) frames, \(iso.framesSkipped) skipped\(iso.soundPackets > 0 ? ", \(iso.soundPackets) packets of its own sound" : "") · \(iso.state) · \(iso.path)")
            }
            for sender in reply.senders {
                let feed = sender.feed
                lines.append("sender    \(sender.camera) as \(sender.streamID) \(text(feed.size)) \(feed.encoder): \(feed.framesEncoded) frames, \(feed.framesSkipped) skipped · "
                             + Format.output(sender.output))
            }
            return lines.joined(separator: "\n")
        }
    }

    static func recordings(_ result: JSONValue) -> String {
        decoded(result, as: RecordingsReply.self) { reply in
            let session = reply.session
            let header = "session \(session.id) · started \(time(session.startedAt)) · " + (session.endedAt.map { "ended \(time($0))" } ?? "running")
            var text = header + "\n" + (reply.recordings.isEmpty ? "no recordings (start the server with --record DIR)"
                : table(["CAMERA", "STARTED", "ENDED", "SIZE", "PATH"], reply.recordings.map { r in
                    [r.camera, time(r.startedAt), r.endedAt.map(time) ?? "recording", r.bytes.map(ByteCount.text) ?? "missing", r.path]
                }))
            for node in reply.nodes {
                let session = node.nodeSession.map { "its session \($0)" } ?? "its session unknown"
                let state = node.state == "answered" ? "asked \(time(node.askedAt))" : "\(node.state.uppercased()) at \(time(node.askedAt)): \(node.reason ?? "")"
                text += "\n\nnode \(node.node) · \(session) · \(state)\n"
                text += node.recordings.isEmpty ? "no recordings on the node"
                    : table(["CAMERA", "STARTED", "ENDED", "SIZE", "PATH ON THE NODE"], node.recordings.map { r in
                        [r.camera, time(r.startedAt), r.endedAt.map(time) ?? "recording", r.bytes.map(ByteCount.text) ?? "-", r.path]
                    })
            }
            return text
        }
    }

    static func sessions(_ result: JSONValue) -> String {
        decoded(result, as: SessionsReply.self) { reply in
            if reply.sessions.isEmpty { return "no sessions" }
            // The program's loudness (integrated, LUFS) and peak (dBFS), kept when the session stopped.
            func loudness(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "-" }
            return table(["ID", "STARTED", "ENDED", "HOW", "SWITCHES", "EVENTS", "LUFS", "PEAK"], reply.sessions.map { s in
                [String(s.id), time(s.startedAt), s.endedAt.map(time) ?? "running", s.endReason ?? "-",
                 String(s.switchCount), String(s.eventCount), loudness(s.integratedLUFS), loudness(s.peakDBFS)]
            })
        }
    }

    static func log(_ result: JSONValue) -> String {
        decoded(result, as: LogReply.self) { reply in
            guard let session = reply.session else {
                // Every session searched: each line says its session.
                if reply.events.isEmpty { return "no events match" }
                return table(["SESSION"] + logColumns,
                             reply.events.map { [$0.session.map(String.init) ?? "-"] + eventRow($0) })
            }
            return logHeader(session) + "\n" + table(logColumns, reply.events.map(eventRow))
        }
    }

    /// `studio log`'s columns; with every session searched, `SESSION` comes first.
    static let logColumns = ["WALL TIME", "PROGRAM", "EVENT", "CAMERA", "DETAILS"]

    /// `studio log`'s first line about its session.
    static func logHeader(_ session: SessionView) -> String {
        "session \(session.id) · started \(time(session.startedAt)) · " +
            (session.endedAt.map { "ended \(time($0)) (\(text(session.endReason)))" } ?? "running")
    }

    /// `studio onair`: the intervals and the totals, or with --at the one moment.
    static func onAir(_ result: JSONValue) -> String {
        decoded(result, as: OnAirReply.self) { reply in
            let session = reply.session.id
            func ending(_ interval: OnAirReply.Interval) -> String {
                guard let endedBy = interval.endedBy else { return "on air" }
                return interval.via.map { "\(endedBy) (\($0))" } ?? endedBy
            }
            if let moment = reply.at {
                let interval = moment.interval
                let what = interval.sourceKind == "slate" ? "the slate (\(text(interval.camera)) lost)" : "\(interval.source) (\(interval.sourceKind))"
                let until = interval.endedBy == nil ? "still on air" : "until \(programTime(interval.toMilliseconds)), then \(ending(interval))"
                return "at \(programTime(moment.atMilliseconds)) of session \(session): \(what), on air since "
                    + "\(programTime(interval.fromMilliseconds)), \(until)"
            }
            guard let from = reply.programFromMilliseconds, let to = reply.programToMilliseconds else {
                return "nothing was on program in session \(session)"
            }
            let header = "session \(session) · program \(programTime(from)) to \(programTime(to)) (\(programTime(reply.programMilliseconds)))"
                + (reply.session.endedAt == nil ? " · running" : "")
            let intervals = table(["FROM", "TO", "DURATION", "SOURCE", "ENDED BY"], reply.intervals.map { interval in
                [programTime(interval.fromMilliseconds), programTime(interval.toMilliseconds), programTime(interval.durationMilliseconds),
                 interval.sourceKind == "slate" ? "slate (\(text(interval.camera)) lost)" : interval.source, ending(interval)]
            })
            let totals = table(["SOURCE", "ON AIR", "SHARE", "INTERVALS"], reply.totals.map { total in
                [total.source, programTime(total.onAirMilliseconds), String(format: "%.1f %%", total.share * 100), String(total.intervals)]
            })
            return header + "\n" + intervals + "\n\n" + totals
        }
    }

    static func eventRow(_ event: EventView) -> [String] {
        let programMS = event.programMilliseconds.map(programTime) ?? "-"
        let details = event.details.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return [time(event.wallTime), programMS, event.kind.rawValue, text(event.camera), details]
    }

    /// `studio watch`: one event a line.
    static func eventLine(_ event: JSONValue) -> String {
        decoded(event, as: EventView.self) { eventRow($0).joined(separator: "  ") }
    }
}
