import Foundation
import StudioCore

/// A recording file (Matroska, or FLV when the path ends in `.flv`).
///
/// File operations have no per-operation deadline (libavformat checks it before every buffer written,
/// so one slow disk write would fail the next one); only `stop`'s deadline aborts them. A file that cannot
/// be opened at all at start ends the output (an `error` event) and the show goes on. Once a file has
/// been open, a write error (or a later failed open) closes it (`recording_stopped`, an `error` event)
/// and the output opens the next part with backoff, forever until stopped: `NAME-part1.mkv`,
/// `NAME-part2.mkv`... (`recording_started` again), so a transient disk problem costs only the media
/// while it lasts. A new description mid-stream: FLV sends a new sequence header in-band; Matroska cannot
/// change codec private data, so the file is finished and the next generation starts (`NAME-g1.mkv`).
///
/// Pushed to the file at each keyframe and at least every half second of program time: with Matroska
/// clusters of at most one second (see `Muxer`), a killed server's file plays up to about 1.5 s before
/// the kill.
final class RecordingDestination: Destination {
    /// The path of the first file; later files add `-gN` and `-partK` before the extension.
    let path: String
    private let format: String
    private let connection: MuxerConnection
    /// Bumped by a format change (a new file for the new description).
    private var generation = 0
    /// Files opened after write failures within this generation.
    private var part = 0
    /// The file opened (or tried) last.
    private var filePath: String
    /// A file was opened at least once: later open failures are retried instead of ending the output.
    private var everOpened = false
    /// The open file got its first keyframe.
    private var recording = false
    /// Opening again after a write failure (counted as a reconnection once it records again).
    private var reopening = false
    /// Program time of the last flush.
    private var lastFlush: MediaTime?

    init(path: String, format: String, interrupt: InterruptState) {
        self.path = path
        self.format = format
        filePath = path
        connection = MuxerConnection(interrupt: interrupt)
    }

    var openFormats: (video: StreamDescription, audio: StreamDescription)? { connection.formats }
    var currentFile: String? { filePath }
    var bytesWritten: Int64 { connection.bytesWritten }
    var formatChange: FormatChange { format == "flv" ? .inBand : .reopen }

    /// `NAME.mkv`, then `NAME-g1.mkv` after a format change, `NAME-part1.mkv` (`NAME-g1-part1.mkv`) after
    /// a write failure...
    static func path(_ path: String, generation: Int, part: Int) -> String {
        guard generation > 0 || part > 0 else { return path }
        var suffix = generation > 0 ? "-g\(generation)" : ""
        if part > 0 { suffix += "-part\(part)" }
        let url = path as NSString
        let ext = url.pathExtension
        let base = url.deletingPathExtension
        return ext.isEmpty ? base + suffix : "\(base)\(suffix).\(ext)"
    }

    func open(video: StreamDescription, audio: StreamDescription) throws {
        filePath = Self.path(path, generation: generation, part: part)
        try connection.open(format: format, url: filePath, isNetwork: false, video: video, audio: audio,
                            connectTimeout: nil, ioTimeout: nil)
        everOpened = true
    }

    func write(_ packet: EncodedPacket, newExtradata: [UInt8]?) throws -> Bool {
        try connection.write(packet, newExtradata: newExtradata)
    }

    func wroteVideo(at pts: MediaTime, keyframe: Bool) {
        if keyframe || lastFlush.map({ pts.microseconds - $0.microseconds >= 500_000 }) ?? true {
            connection.flush()
            lastFlush = pts
        }
    }

    /// A file that recorded is reported closed. After a format change the next file is a new generation;
    /// after a write failure the next part (a file that never got its first keyframe is simply opened again
    /// under the same name).
    func close(_ reason: CloseReason) -> OutputEvent? {
        guard connection.close(writeTrailer: reason.writesTrailer) else { return nil }
        let recorded = recording
        recording = false
        switch reason {
        case .stopped: break
        case .formatChanged:
            generation += 1
            part = 0
        case .writeFailed:
            if recorded { part += 1 }
            reopening = true
        }
        return recorded ? OutputEvent(.recordingStopped, ["path": filePath, "reason": reason.rawValue]) : nil
    }

    /// The first file failing ends the output; after that, the first failure of a series is reported and
    /// the output retries.
    func openFailed(_ error: String, firstFailure: Bool, everStarted: Bool) -> OpenFailure {
        let event = OutputEvent(.error, ["during": "open recording", "error": error, "path": filePath])
        if !everOpened { return .giveUp(event) }
        return .retry(firstFailure ? event : nil)
    }

    func started(at pts: MediaTime, reconnect: Bool) -> Started {
        recording = true
        defer { reopening = false }
        return Started(event: OutputEvent(.recordingStarted, programTime: pts,
                                          ["first_program_ms": String(pts.milliseconds), "path": filePath]),
                       isReconnection: reopening)
    }

    /// Reported even while stopping: the end of the recording is missing.
    func writeFailed(_ error: String, at pts: MediaTime, stopping: Bool) -> OutputEvent? {
        OutputEvent(.error, programTime: pts, ["during": "write recording", "error": error, "path": filePath])
    }
}
