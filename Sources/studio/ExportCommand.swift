import Foundation
import StudioCore
import StudioViews
import EventStore
import Control
import StudioCLI
import StudioConfig
import StudioSystem

/// `studio export`: the program's cuts as a cut list for an editor (History.cutList, the formats in
/// CutListFormats.swift). It reads the database itself, never through the control socket: the file is the
/// operator's, written where they ask, and a running server's database is read alongside it (WAL).
enum ExportCommand: ClientCommand {
    static let format = OptionSpec("format", "FORMAT", help: "the cut list's format: \(ExportFormat.names)")
    static let iso = OptionSpec("iso", help: "each camera's clips reference its ISO file (default: the program recording)")
    static let output = OptionSpec("output", "PATH", help: "write this file (or, for a directory, session-N-iso|program.FORMAT\nin it); default: standard output")
    static let timeOfDay = OptionSpec("time-of-day", help: "the timeline's timecode starts at the local time of day of\nprogram time 0 (default: 00:00:00:00)")

    static let spec = CommandSpec(
        "export", abstract: "the program's cuts as a cut list for an editor: EDL, FCPXML, OTIO or CSV.",
        summary: "the program's cuts for an editor (EDL, FCPXML, OTIO, CSV),\nreferencing the program recording or the ISO files",
        positionals: [PositionalSpec("SESSION", optional: true)], options: [format, iso, output, timeOfDay, .socket, .database],
        positionalsError: "expected at most one session id",
        discussion: """
        SESSION defaults to the current session, or the latest one. One clip per interval of
        the program (`studio onair`, the view program_intervals), at the program's frame rate,
        exact to the frame: each clip's source in and out are its program times, which are the
        recording files' own timestamps. With --iso each camera's clips reference its ISO file and
        each transition is the editor's (a dissolve or a wipe from its first frame); scenes and the
        slate reference the program recording, with a comment or marker saying so. Without --iso
        every clip references the program recording, which has the transitions in its pictures.
        The formats:\(ExportFormat.allCases.map { "\n  " + $0.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0) + $0.summary }.joined())
        The file is written whole or not at all (a temporary file, renamed). Reads --db, else the
        running server's database (its `status` names it), else $STUDIO_DB or the default path.
        Details: docs/export.md.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        guard let formatName = arguments.value(format.name) else {
            throw UsageError("studio export: --format is required: one of \(ExportFormat.names)")
        }
        guard let chosen = ExportFormat(rawValue: formatName.lowercased()) else {
            throw UsageError("studio export: --format \(formatName): no such format; the formats are \(ExportFormat.names)")
        }
        let exportArguments = ExportArguments(session: try sessionPositional(arguments, "export"), format: chosen,
                                              iso: arguments.flag(iso.name), timeOfDay: arguments.flag(timeOfDay.name))
        let store = try ClientLocations.readOnlyHistory(arguments, environment, command: "export")
        defer { store.close() }
        let list: CutList
        do { list = try History.cutList(exportArguments, store: store) } catch let error as ControlError {
            throw refusal(error, "export")
        }
        let text = chosen.render(list)
        guard var destination = arguments.value(output.name) else {
            print(text, terminator: "")
            return 0
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory), isDirectory.boolValue {
            destination = (destination as NSString).appendingPathComponent(chosen.fileName(session: list.session, iso: list.iso))
        }
        do { try FileModes.writeAtomically(text, to: destination) } catch {
            throw ClientFailure("studio export: cannot write \(destination): \(String(cString: strerror(error.errno))) (\(error.call))")
        }
        print("wrote \(destination): session \(list.session), \(list.clips.count) intervals, \(chosen.rawValue)")
        return 0
    }
}
