import Foundation
import StudioCore
import StudioViews
import EventStore
import Control
import StudioCLI
import StudioSystem

/// `studio report` (a session at a glance, and its timeline picture) and `studio prune` (retention).

enum ReportCommand: ClientCommand {
    static let spec = CommandSpec(
        "report", abstract: "a session at a glance, for the engineer after the show.",
        summary: "a session's report: how it ended, switches, time per source, cameras\nlost, outputs off air, fallbacks, drops, loudness, recordings (--svg: its timeline)",
        positionals: [PositionalSpec("SESSION", optional: true)],
        options: [.json, HistoryFlags.svg, HistoryFlags.png, .socket, .database],
        positionalsError: "expected at most one session id",
        discussion: """
        SESSION defaults to the current session, or the latest one. The report says how long the
        session ran and how it ended; the program's switches, cuts and transitions and each
        source's time on air (the view program_intervals); per camera its losses, returns and
        time lost (camera_outages); per output its disconnects, reconnects and time off the air
        (output_outages); encoder fallbacks; dropped frames by stage (frames_dropped); the
        program's loudness where the database keeps it; the recordings with their sizes.
        --svg PATH draws the timeline: a lane for the program in each source's colour (legend
        below), one per camera (live / lost), one per output (connected / reconnecting), cuts,
        transitions and encoder fallbacks marked, program time along the bottom. The file is
        written whole or not at all (a temporary file renamed). The HTTP API serves the same
        picture at /api/v1/sessions/SESSION/timeline.svg.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let query = ReportArguments(session: try sessionPositional(arguments, "report"))
        let svgPath = arguments.value(HistoryFlags.svg.name), pngPath = arguments.value(HistoryFlags.png.name)
        for path in [svgPath, pngPath].compactMap({ $0 }) where path.isEmpty || path.hasSuffix("/") {
            throw UsageError("studio report: \"\(path)\" is no file name for the picture")
        }
        let result = try requestOrReadDatabase(socket, arguments, environment, HistorySignatures.Report.self, query) { store in
            try Views.report(query, store: store)
        }
        if svgPath != nil || pngPath != nil {
            let reply: ReportReply
            do { reply = try result.decode(ReportReply.self) } catch {
                throw ClientFailure("the server's report cannot be read by this studio (\(error)); is it a newer version?")
            }
            let svg = TimelinePicture.svg(reply)
            if let svgPath { try PictureFile.write(svg, to: svgPath) }
            if let pngPath { try PictureFile.writePNG(svg: svg, to: pngPath) }
        }
        if json { print(result.jsonText) } else { print(Format.decoded(result, as: ReportReply.self, ReportText.text)) }
        return 0
    }
}

enum PruneCommand: ClientCommand {
    static let spec = CommandSpec(
        "prune", abstract: "remove old sessions from the database (and their recordings, when asked).",
        summary: "remove sessions that ended longer ago than AGE, with their events\n(--recordings: and their files); says what it removed",
        options: [HistoryFlags.olderThan, HistoryFlags.recordings, HistoryFlags.dryRun, .json, .socket, .database],
        discussion: """
        Removes every session that ended more than AGE ago, with its events and recording rows,
        in one transaction: all of it or, on any failure, nothing. A session still open (the
        running one, or one not yet found crashed) is never removed. With --recordings, each of
        their recording files is deleted too: only files the database lists, only inside the
        recording directory their session was configured with (`record`), never a file a kept
        session lists; a file already gone is reported as missing. Then the database gives the
        space back (VACUUM, or an incremental vacuum where the file was made for it).
        --dry-run says what would be removed and changes nothing.
        Asks the running server (whose store thread owns the writes); with none running, opens the
        database for writing itself (waiting up to 5 s for another writer's lock, then exit 1).
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let query = try HistoryFlags.prune(arguments)
        let result = try requestOrReadDatabase(socket, arguments, environment, HistorySignatures.Prune.self, query, writable: true) { store in
            do { return try Views.prune(query, store: store) } catch let error as ControlError { throw error } catch {
                throw ClientFailure("could not prune \(store.path): \(error); nothing was removed")
            }
        }
        if json { print(result.jsonText) } else { print(Format.decoded(result, as: PruneReply.self, ReportText.prune)) }
        return 0
    }
}

/// A picture written whole or not at all: to a temporary file beside it, then renamed over PATH.
enum PictureFile {
    static func write(_ text: String, to path: String) throws {
        // errno in words ("No such file or directory"), not Foundation's "NSCocoaErrorDomain error 4".
        do { try FileModes.writeAtomically(text, to: path) } catch {
            throw ClientFailure("cannot write \(path): \(String(cString: strerror(error.errno))) (\(error.call))")
        }
    }

    /// Through `rsvg-convert` (librsvg2-bin), to a temporary file renamed over PATH.
    static func writePNG(svg: String, to path: String) throws {
        guard let converter = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert"].first(where: FileManager.default.isExecutableFile) else {
            throw ClientFailure("cannot draw a PNG: rsvg-convert is not installed (librsvg2-bin); --svg PATH writes the SVG")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let temporary = (directory.isEmpty ? "." : directory) + "/.\(URL(fileURLWithPath: path).lastPathComponent).\(getpid()).tmp"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: converter)
        process.arguments = ["--format", "png", "--output", temporary]
        let input = Pipe()
        process.standardInput = input
        do { try process.run() } catch { throw ClientFailure("cannot run \(converter): \(error)") }
        input.fileHandleForWriting.write(Data(svg.utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0, rename(temporary, path) == 0 else {
            let reason = process.terminationStatus == 0 ? String(cString: strerror(errno)) : "rsvg-convert exited \(process.terminationStatus)"
            unlink(temporary)
            throw ClientFailure("cannot write \(path): \(reason)")
        }
    }
}
