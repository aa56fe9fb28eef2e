#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import StudioCLI
import StudioConfig
import StudioCore
import StudioViews
import StudioSystem
import EventStore
import Transcoding

/// Set by SIGINT or SIGTERM while `studio transcode` runs: the transcode stops at the next packet and
/// removes its partial file. An atomic, the only thing the handler touches.
private let transcodeInterrupted = Atomic<Bool>(false)
private let interruptHandler: @convention(c) (Int32) -> Void = { _ in transcodeInterrupted.store(true, ordering: .relaxed) }

/// `studio transcode` (declared in StudioCLI's EngineCommands.swift): passthrough ISO files (MJPEG in
/// Matroska) into H.264 MOV/MP4 for editors that do not read them (`Transcoder`), after the show. Each file
/// on the process's own `transcode` thread; with `--session` the files come from the database (read only:
/// a server running another show is not disturbed).
@_cdecl("studio_engine_transcode")
public func studioEngineTranscode(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    EngineMain.run(TranscodeInEngine.self, argc: argc, argv: argv)
}

enum TranscodeInEngine: Command {
    static var spec: CommandSpec { TranscodeCommand.spec }
    private typealias Options = TranscodeCommand

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        var settings = TranscodeSettings()
        if let name = arguments.value(Options.codec.name) {
            guard let chosen = TranscodeCodec(rawValue: name) else {
                throw UsageError("studio transcode: --codec \(name): no such codec; the codecs are \(TranscodeCodec.names)")
            }
            settings.codec = chosen
        }
        if let text = arguments.value(Options.quality.name) {
            guard let value = Int(text), (0...51).contains(value) else {
                throw UsageError("studio transcode: --crf \(text): expected a whole number from 0 to 51")
            }
            settings.quality = value
        }
        if let name = arguments.value(Options.preset.name) {
            do { settings.preset = try ValueSyntax<String>.x264Preset.parse(name) } catch {
                throw UsageError("studio transcode: --preset \(name): \(error.message)")
            }
        }
        if let name = arguments.value(Options.container.name) {
            guard let chosen = TranscodeContainer(rawValue: name) else {
                throw UsageError("studio transcode: --container \(name): no such format; the formats are \(TranscodeContainer.names)")
            }
            settings.container = chosen
        }
        var files = arguments.positionals.map { (path: $0, fromSession: false) }
        if let text = arguments.value(Options.session.name) {
            guard let id = Int64(text), id > 0 else {
                throw UsageError("studio transcode: --session \(text) is not a session id (see `studio sessions`)")
            }
            files += try sessionIsos(id, arguments, environment).map { (path: $0, fromSession: true) }
        } else if files.isEmpty {
            throw UsageError("studio transcode: expected FILE... or --session N (see `studio transcode --help`)")
        }
        let directory = arguments.value(Options.output.name)
        if let directory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ClientFailure("studio transcode: --output \(directory): no such directory")
            }
        }

        Transcoder.quietLibraryLogs()
        signal(SIGINT, interruptHandler)
        signal(SIGTERM, interruptHandler)
        let terminal = isatty(1) == 1
        var failures = 0
        for file in files {
            let target = Transcoder.outputPath(for: file.path, directory: directory, container: settings.container)
            switch transcode(file.path, into: target, settings: settings, terminal: terminal) {
            case .success(let summary):
                var line = "wrote \(summary.output): \(summary.frames) frames, \(ByteCount.text(Int(summary.bytes)))"
                if summary.framesRepeated > 0 { line += ", \(summary.framesRepeated) frames that did not decode repeat the frame before" }
                if let codec = summary.audioLeftOut { line += " (its \(codec) audio left out: only AAC is copied)" }
                writeIgnoringErrors(1, line + "\n")
            case .failure(.alreadyH264(let path)) where file.fromSession:
                writeIgnoringErrors(1, "skipped \(path): already H.264, it needs no transcode\n")
            case .failure(let error):
                writeStandardError("studio transcode: \(error)\n")
                if case .cancelled = error { return 130 }
                failures += 1
            }
        }
        return failures == 0 ? 0 : 1
    }

    /// Transcodes one file on the `transcode` thread, drawing its progress; the main thread waits.
    private static func transcode(_ input: String, into output: String, settings: TranscodeSettings,
                                  terminal: Bool) -> Result<TranscodeSummary, TranscodeError> {
        let result = ResultSlot()
        let thread = NamedThread.start(name: "transcode") {
            let reporter = ProgressReporter(terminal: terminal)
            let outcome = Result { () throws(TranscodeError) in
                try Transcoder(settings: settings).run(input: input, output: output, progress: reporter.show,
                                                       isCancelled: { transcodeInterrupted.load(ordering: .relaxed) })
            }
            reporter.end()
            result.value.withLock { $0 = outcome }
        }
        _ = thread.join()
        return result.value.withLock { $0 } ?? .failure(.encodeFailed(input, reason: "the transcode thread ended without a result"))
    }

    /// Where the session's ISO files are, from the database (read only).
    private static func sessionIsos(_ id: Int64, _ arguments: ParsedArguments, _ environment: [String: String]) throws -> [String] {
        let store = try ClientLocations.readOnlyHistory(arguments, environment, command: "transcode")
        defer { store.close() }
        let isos = try store.recordings(sessionID: id).filter { $0.camera != nil }.map(\.path)
        guard !isos.isEmpty else { throw ClientFailure("studio transcode: session \(id) has no ISO recordings (see `studio recordings \(id)`)") }
        return isos
    }
}

/// What the transcode thread hands back.
private final class ResultSlot: Sendable {
    let value = Mutex<Result<TranscodeSummary, TranscodeError>?>(nil)
}

/// Draws a file's progress: on a terminal a bar redrawn in place at most ten times a second, otherwise
/// a plain line (`TranscodeProgress.line`) at every tenth of the file and at its end. Used on the
/// transcode thread only.
private final class ProgressReporter {
    private let terminal: Bool
    private var lastDraw: UInt64 = 0
    private var lastTenth = -1
    private var drawn = false

    init(terminal: Bool) { self.terminal = terminal }

    func show(_ progress: TranscodeProgress) {
        if terminal {
            let now = MonotonicClock.now()
            guard progress.finished || now - lastDraw >= 100_000_000 else { return }
            lastDraw = now
            drawn = true
            writeIgnoringErrors(1, "\r\u{1B}[K" + progress.bar())
        } else {
            let tenth = progress.percent.map { $0 / 10 } ?? -1
            guard progress.finished || tenth > lastTenth else { return }
            lastTenth = tenth
            writeIgnoringErrors(1, progress.line + "\n")
        }
    }

    /// Ends the bar's line (the next output starts on its own).
    func end() {
        if terminal && drawn { writeIgnoringErrors(1, "\n") }
    }
}
