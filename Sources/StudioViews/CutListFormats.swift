import Foundation
import StudioCore

/// The formats `studio export` writes, each declared once: the CLI's `--format` parsing, its help, the
/// default file name and docs/export.md's table come from here.
public enum ExportFormat: String, Sendable, CaseIterable {
    case edl, fcpxml, otio, csv

    /// The file name extension of a file in this format.
    public var fileExtension: String { rawValue }

    /// One line for the help and the docs.
    public var summary: String {
        switch self {
        case .edl: "CMX3600 edit decision list (one video track, reels of at most 8 characters, dissolves and wipes)"
        case .fcpxml: "Final Cut Pro XML 1.10 (assets with file URLs, a spine of asset-clips and transitions, capture nodes' ISO files on lanes)"
        case .otio: "OpenTimelineIO JSON (a Timeline with one video Track of Clips and Transitions)"
        case .csv: "one row per program interval: source, from, to, duration, how it ended, file"
        }
    }

    /// `edl, fcpxml, otio, csv`.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The cut list written in this format.
    public func render(_ list: CutList) -> String {
        switch self {
        case .edl: CutListText.edl(list)
        case .fcpxml: CutListInterchange.fcpxml(list)
        case .otio: CutListInterchange.otio(list)
        case .csv: CutListText.csv(list)
        }
    }

    /// The file name `--output DIR` writes in DIR: `session-N-program.edl`, `session-N-iso.fcpxml`.
    public func fileName(session: Int64, iso: Bool) -> String {
        "session-\(session)-\(iso ? "iso" : "program").\(fileExtension)"
    }
}

/// The text formats: CMX3600 and CSV.
enum CutListText {
    /// CMX3600: `TITLE:`, `FCM: NON-DROP FRAME`, then one event per clip (`NNN  REEL     V     C        SRC-IN
    /// SRC-OUT REC-IN REC-OUT`), each followed by comments naming its file (`* FROM CLIP NAME:`, `* SOURCE
    /// FILE:`). A transition is an event of two lines with one number: the outgoing reel as a cut of no
    /// length at the transition's first frame, then the incoming reel with `D` (dissolve) or `W001`/`W002`
    /// (horizontal / vertical wipe) and its length in frames.
    static func edl(_ list: CutList) -> String {
        let rate = list.rate
        func tc(_ frames: FrameCount) -> String { Timecode.text(frames, rate: rate) }
        func record(_ frames: FrameCount) -> String { tc(frames + list.timelineStart) }
        func line(_ number: Int, _ reel: String, _ code: String, _ length: String, source: (FrameCount, FrameCount),
                  record recorded: (FrameCount, FrameCount)) -> String {
            let event = number < 1000 ? String(format: "%03d", number) : String(number)
            return event + "  " + pad(reel, 8) + " V     " + pad(code, 4) + " " + pad(length, 3, right: true) + " "
                + tc(source.0) + " " + tc(source.1) + " " + record(recorded.0) + " " + record(recorded.1)
        }
        var lines = ["TITLE: \(list.title)", "FCM: NON-DROP FRAME", ""]
        let clips = list.timelineClips
        for (index, clip) in clips.enumerated() {
            let number = index + 1
            let file = clip.media.map { list.media[$0] }
            let reel = file?.reel ?? "AX"
            if let transition = clip.incoming, index > 0 {
                let previous = clips[index - 1]
                let outgoing = previous.media.map { list.media[$0].reel } ?? "AX"
                let outgoingFrom = list.source(of: previous, at: clip.from)
                lines.append(line(number, outgoing, "C", "", source: (outgoingFrom, outgoingFrom), record: (clip.from, clip.from)))
                lines.append(line(number, reel, edlCode(transition.kind), String(format: "%03lld", transition.frames.frames),
                                  source: (list.source(of: clip), list.source(of: clip, at: clip.to)), record: (clip.from, clip.to)))
                if let name = previous.media.map({ list.media[$0].name }) { lines.append("* FROM CLIP NAME: \(name)") }
                if let file { lines.append("* TO CLIP NAME: \(file.name)") }
                lines.append("* EFFECT NAME: \(transition.kind) \(transition.frames.frames) frames")
            } else {
                lines.append(line(number, reel, "C", "", source: (list.source(of: clip), list.source(of: clip, at: clip.to)),
                                  record: (clip.from, clip.to)))
                if let file { lines.append("* FROM CLIP NAME: \(file.name)") }
            }
            if let file { lines.append("* SOURCE FILE: \(file.path)") }
            lines.append("* \(describe(clip))")
            if let note = clip.note { lines.append("* \(note)") }
        }
        // CMX3600 has one video track: the capture nodes' ISO files are named for the editor to lay beside it.
        for media in list.nodeMedia {
            lines.append("* NODE ISO: \(media.camera) \(media.collectedPath) from \(tc(media.start + list.timelineStart)) (node path \(media.nodePath)"
                         + (media.url.map { ", \($0)" } ?? "") + ")")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// CMX3600's transition code for a studio transition: `D` for a mix, a dip or a stinger (the dip's
    /// black and the sting's clip are not in CMX3600: the comment says which it was), a SMPTE wipe number
    /// for wipes and pushes.
    static func edlCode(_ kind: String) -> String {
        switch kind {
        case "wipe-left", "wipe-right", "push-left", "push-right": "W001"
        case "wipe-up", "wipe-down", "push-up", "push-down": "W002"
        default: "D"
        }
    }

    /// `cam2 (camera), program 00:00:10.000 to 00:00:20.000, ended by transition (mix)`.
    static func describe(_ clip: CutList.Clip) -> String {
        "\(clip.source) (\(clip.sourceKind)), program \(HistoryTime.programText(clip.fromMilliseconds)) to "
            + "\(HistoryTime.programText(clip.toMilliseconds)), " + (clip.endedBy.map { "ended by \($0)" } ?? "on air")
            + (clip.via.map { " (\($0))" } ?? "")
    }

    /// RFC 4180, one row per interval of `program_intervals` (whatever `--iso` did to the transitions):
    /// timecodes on the timeline's clock, the same times in program milliseconds, and the file.
    static func csv(_ list: CutList) -> String {
        var rows = [["seq", "source", "source_kind", "from", "to", "duration", "from_ms", "to_ms", "duration_ms", "ended_by", "via", "file"]]
        for clip in list.clips {
            let from = FrameCount(milliseconds: clip.fromMilliseconds, rate: list.rate)
            let to = FrameCount(milliseconds: clip.toMilliseconds, rate: list.rate)
            rows.append([String(clip.sequence), clip.source, clip.sourceKind,
                         Timecode.text(from + list.timelineStart, rate: list.rate), Timecode.text(to + list.timelineStart, rate: list.rate),
                         Timecode.text(to - from, rate: list.rate), String(clip.fromMilliseconds), String(clip.toMilliseconds),
                         String(clip.toMilliseconds - clip.fromMilliseconds), clip.endedBy ?? "", clip.via ?? "",
                         clip.media.map { list.media[$0].path } ?? ""])
        }
        return rows.map { $0.map(csvField).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text }
        let fill = String(repeating: " ", count: width - text.count)
        return right ? fill + text : text + fill
    }
}
