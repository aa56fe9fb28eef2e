import Foundation
import Testing
import Control
import StudioCore
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A strict CMX3600 reader, written for the tests (not the exporter's code read back): the title and
/// `FCM: NON-DROP FRAME`, then only blank lines, comments (`* `) and event lines in CMX3600's fixed
/// columns; event numbers 001, 002... (the two lines of a transition share one), valid timecodes at the
/// frame base, a transition's outgoing line a cut of no length, record and source of equal length, and
/// the record times contiguous from the first event to the last.
struct CMX3600 {
    struct Line: CustomStringConvertible {
        var number: Int
        var reel: String
        var code: String
        var length: Int?
        var sourceIn: Int, sourceOut: Int, recordIn: Int, recordOut: Int
        var description: String { "\(number) \(reel) \(code) \(length ?? -1) \(sourceIn)-\(sourceOut) \(recordIn)-\(recordOut)" }
    }

    var title: String
    var lines: [Line] = []
    /// Comment lines after each event number.
    var comments: [Int: [String]] = [:]

    init(parsing text: String, base: Int) throws {
        var rows = text.components(separatedBy: "\n")
        try #require(rows.last == "", "the file ends with a newline")
        rows.removeLast()
        try #require(rows.count >= 3, "\(text)")
        try #require(rows[0].hasPrefix("TITLE: ") && rows[0].count > 7 && rows[0].count <= 77, "title line: \(rows[0])")
        title = String(rows[0].dropFirst(7))
        try #require(rows[1] == "FCM: NON-DROP FRAME", "frame code mode: \(rows[1])")
        var position: Int?
        for (index, row) in rows.enumerated().dropFirst(2) {
            if row.isEmpty { continue }
            if row.hasPrefix("* ") {
                let event = try #require(lines.last?.number, "line \(index + 1): a comment before the first event")
                comments[event, default: []].append(String(row.dropFirst(2)))
                continue
            }
            let line = try Self.event(row, base: base, at: index + 1)
            if let previous = lines.last, previous.number == line.number {
                // The second line of a transition: after a cut of no length, itself a D or W with a length.
                try #require(previous.code == "C" && previous.recordIn == previous.recordOut && previous.sourceIn == previous.sourceOut,
                             "line \(index + 1): event \(line.number) repeated without a transition's outgoing line")
                try #require(line.code != "C" && line.length != nil && line.recordIn == previous.recordOut,
                             "line \(index + 1): the incoming line of a transition")
                try #require((line.length ?? 0) > 0 && (line.length ?? 0) < line.recordOut - line.recordIn,
                             "line \(index + 1): the transition fits its event")
            } else {
                try #require(line.number == (lines.last?.number ?? 0) + 1, "line \(index + 1): event \(line.number) after \(lines.last?.number ?? 0)")
                try #require(line.code == "C", "line \(index + 1): a transition needs its outgoing line first")
                try #require(position == nil || line.recordIn == position, "line \(index + 1): record in \(line.recordIn), expected \(position ?? -1) (contiguous)")
            }
            try #require(line.sourceOut - line.sourceIn == line.recordOut - line.recordIn && line.recordOut >= line.recordIn,
                         "line \(index + 1): source and record lengths differ")
            position = line.recordOut
            lines.append(line)
        }
        try #require(!lines.isEmpty, "no events")
    }

    /// `NNN  REEL____ V     CODE LEN HH:MM:SS:FF HH:MM:SS:FF HH:MM:SS:FF HH:MM:SS:FF`, column by column.
    static func event(_ row: String, base: Int, at number: Int) throws -> Line {
        let c = Array(row)
        try #require(c.count == 76, "line \(number): \(c.count) characters, CMX3600 has 76: \(row)")
        func field(_ from: Int, _ count: Int) -> String { String(c[from..<(from + count)]) }
        func blank(_ from: Int, _ count: Int) throws { try #require(field(from, count).allSatisfy { $0 == " " }, "line \(number): column \(from + 1) must be blank: \(row)") }
        let event = field(0, 3)
        let numbered = event.allSatisfy { $0.isNumber }
        try #require(numbered, "line \(number): event number \(event)")
        try blank(3, 2)
        let reel = field(5, 8).trimmingCharacters(in: .whitespaces)
        try #require(!reel.isEmpty && field(5, reel.count) == reel && reel.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) },
                     "line \(number): reel \(field(5, 8))")
        try blank(13, 1)
        try #require(field(14, 1) == "V", "line \(number): track \(field(14, 4))")
        try blank(15, 5)
        let code = field(20, 4).trimmingCharacters(in: .whitespaces)
        try #require(["C", "D"].contains(code) || (code.count == 4 && code.hasPrefix("W") && code.dropFirst().allSatisfy(\.isNumber)),
                     "line \(number): transition \(field(20, 4))")
        try blank(24, 1)
        let lengthText = field(25, 3)
        var length: Int?
        if code == "C" { try blank(25, 3) } else {
            let digits = lengthText.allSatisfy { $0.isNumber }
            try #require(digits, "line \(number): transition length \(lengthText)")
            length = Int(lengthText)
        }
        var times: [Int] = []
        for index in 0..<4 {
            let start = 29 + index * 12
            try blank(start - 1, 1)
            times.append(try timecode(field(start, 11), base: base, line: number))
        }
        return Line(number: Int(event) ?? -1, reel: reel, code: code, length: length,
                    sourceIn: times[0], sourceOut: times[1], recordIn: times[2], recordOut: times[3])
    }

    /// `HH:MM:SS:FF` (non-drop: colons only) as frames at `base` frames per second.
    static func timecode(_ text: String, base: Int, line: Int) throws -> Int {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        try #require(parts.count == 4 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isNumber) }, "line \(line): timecode \(text)")
        let (h, m, s, f) = (Int(parts[0])!, Int(parts[1])!, Int(parts[2])!, Int(parts[3])!)
        try #require(h < 24 && m < 60 && s < 60 && f < base, "line \(line): timecode \(text) out of range")
        return ((h * 60 + m) * 60 + s) * base + f
    }
}

/// The parts of an FCPXML file the tests check, read with an XML parser (FoundationXML's XMLDocument).
struct FCPXMLSpine {
    struct Item {
        var element: String
        var name: String
        var offset: String
        var start: String
        var duration: String
        /// For an asset-clip: the file name of the asset it references.
        var asset: String
    }

    var version: String
    var frameDuration: String
    var sequenceDuration: String
    var items: [Item] = []
    var markers: Int

    /// An FCPXML time (`1001/30000s`, `3s`) in frames at `rate`, refused unless whole.
    static func frames(_ time: String, rate: Int) throws -> Int {
        guard time.hasSuffix("s") else { throw HarnessError("\(time) is no FCPXML time") }
        let parts = time.dropLast().split(separator: "/").map { Int($0) }
        guard let numerator = parts.first ?? nil else { throw HarnessError("\(time) is no FCPXML time") }
        let denominator = parts.count == 2 ? (parts[1] ?? 0) : 1
        try #require(denominator > 0 && (numerator * rate) % denominator == 0, "\(time) is not a whole frame at \(rate) fps")
        return numerator * rate / denominator
    }

    init(_ text: String) throws {
        #if canImport(FoundationXML)
        let document = try XMLDocument(data: Data(text.utf8), options: [])
        let root = try #require(document.rootElement())
        try #require(root.name == "fcpxml")
        version = root.attribute(forName: "version")?.stringValue ?? ""
        let format = try #require(try root.nodes(forXPath: "resources/format").first as? XMLElement)
        frameDuration = format.attribute(forName: "frameDuration")?.stringValue ?? ""
        var files: [String: String] = [:]
        for case let asset as XMLElement in try root.nodes(forXPath: "resources/asset") {
            let source = (try asset.nodes(forXPath: "media-rep").first as? XMLElement)?.attribute(forName: "src")?.stringValue ?? ""
            files[asset.attribute(forName: "id")?.stringValue ?? ""] = URL(string: source)?.lastPathComponent ?? ""
        }
        let sequence = try #require(try root.nodes(forXPath: "library/event/project/sequence").first as? XMLElement)
        sequenceDuration = sequence.attribute(forName: "duration")?.stringValue ?? ""
        let spine = try #require(try sequence.nodes(forXPath: "spine").first as? XMLElement)
        for case let element as XMLElement in spine.children ?? [] {
            func value(_ name: String) -> String { element.attribute(forName: name)?.stringValue ?? "" }
            items.append(Item(element: element.name ?? "", name: value("name"), offset: value("offset"), start: value("start"),
                              duration: value("duration"), asset: files[value("ref")] ?? ""))
        }
        markers = try spine.nodes(forXPath: "asset-clip/marker").count
        #else
        throw HarnessError("FoundationXML is not available")
        #endif
    }
}

/// RFC 4180 CSV (quoted fields with doubled quotes, CRLF rows), strictly: every row as long as the first.
enum CSV {
    static func parse(_ text: String) throws -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false, wasQuoted = false
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" { field.append("\""); characters.removeFirst() } else { quoted = false }
                } else { field.append(character) }
            } else if character == "\"" {
                try #require(field.isEmpty && !wasQuoted, "a quote inside an unquoted field")
                quoted = true
                wasQuoted = true
            } else if character == "," {
                row.append(field); field = ""; wasQuoted = false
            } else if character == "\r\n" || character == "\n" {
                row.append(field); field = ""; wasQuoted = false
                rows.append(row); row = []
            } else { field.append(character) }
        }
        try #require(!quoted && field.isEmpty && row.isEmpty, "the CSV ends inside a row")
        try #require(rows.allSatisfy { $0.count == rows.first?.count }, "rows of different lengths")
        return rows
    }
}

/// The real `opentimelineio` (PyPI), in the venv scripts/setup.sh makes.
enum OTIO {
    static var venv: String {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? "/root") + "/.cache")
        return cache + "/studio/otio-venv"
    }

    /// The venv's python when it imports opentimelineio.
    static let python: String? = {
        let python = venv + "/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python),
              let child = try? ChildProcess(executable: python, arguments: ["-c", "import opentimelineio"]),
              child.wait(timeout: 30) == .exited(0) else { return nil }
        return python
    }()

    /// The venv's python when it also imports OpenTimelineIO's FCPXML reader (`otio-fcpx-xml-adapter`).
    static let fcpxmlReader: String? = {
        guard let python, let child = try? ChildProcess(executable: python, arguments: ["-c", "import otio_fcpx_xml_adapter"]),
              child.wait(timeout: 30) == .exited(0) else { return nil }
        return python
    }()

    /// What opentimelineio reads from `file`: the timeline's duration and rate, each item of its first track,
    /// every track's name and its clips' URLs.
    static func read(_ file: String) throws -> JSONValue {
        let script = """
        import json, sys
        import opentimelineio as otio
        timeline = otio.adapters.read_from_file(sys.argv[1])
        track = timeline.tracks[0]
        items = []
        for item in track:
            if isinstance(item, otio.schema.Clip):
                available = item.media_reference.available_range
                items.append({"type": "Clip", "name": item.name, "start": item.source_range.start_time.value,
                              "duration": item.source_range.duration.value, "rate": item.source_range.start_time.rate,
                              "url": item.media_reference.target_url, "markers": len(item.markers),
                              "available_start": available.start_time.value, "available_duration": available.duration.value})
            else:
                items.append({"type": type(item).__name__, "transition_type": item.transition_type,
                              "in": item.in_offset.value, "out": item.out_offset.value})
        tracks = [{"name": t.name, "urls": [c.media_reference.target_url for c in t if isinstance(c, otio.schema.Clip)]} for t in timeline.tracks]
        print(json.dumps({"duration": timeline.duration().value, "rate": timeline.duration().rate, "items": items, "tracks": tracks}))
        """
        let child = try ChildProcess(executable: try #require(python), arguments: ["-c", script, file])
        let exit = child.wait(timeout: 60)
        try #require(exit == .exited(0), "opentimelineio refused \(file): \(child.errorText())")
        return try JSONValue(parsing: child.outputText())
    }
}

/// An ISO file's timecode, which `export --iso` counts its source times on (docs/export.md).
enum IsoTimecode {
    /// Frames (at `rate`, whole) from a program-time frame of `path` to the same frame on the file's timecode:
    /// its `TIMECODE` tag (read by ffprobe) less its first frame's program time (`firstMilliseconds`).
    static func shift(ofFile path: String, firstMilliseconds: Double, rate: Int) throws -> Int {
        let probe = try MediaProbe.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format_tags=TIMECODE", "-of", "json", path])
        let text = try JSONValue(parsing: String(decoding: probe, as: UTF8.self))["format"]?["tags"]?["TIMECODE"]?.stringValue
        let timecode = try #require(text.flatMap { Timecode.frames($0, rate: Rational(Int32(rate))) }, "\(path)'s TIMECODE: \(text ?? "none")")
        return Int(timecode.frames) - Int((firstMilliseconds * Double(rate) / 1000).rounded())
    }
}
