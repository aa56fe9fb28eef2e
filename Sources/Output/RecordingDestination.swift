#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StudioCore
import StudioSystem

/// A recording file (Matroska, or FLV when the path ends in `.flv`).
///
/// File operations have no per-operation deadline (libavformat checks it before every buffer written,
/// so one slow disk write would fail the next one); only `stop`'s deadline aborts them. A file that cannot
/// be opened at all at start ends the output (an `error` event) and the show goes on.
///
/// A file is a recording once media is on disk: opening a file and writing its header and a keyframe
/// "succeed" on a full disk while everything is only buffered, so after the file's first keyframe
/// everything is pushed into it (`Muxer.flushAll`), and only when that worked is it reported
/// (`recording_started`, which the server turns into a `recordings` row). A file that never got media is
/// deleted when it is closed, so no empty or header-only file is left behind.
///
/// Once a file has been open, a write error (or a later failed open) closes it (`recording_stopped`
/// with reason `write failed` and the error, one `error` event) and the output opens the next part with
/// backoff (at most `maxRetrySeconds` apart), forever until stopped: `NAME-part1.mkv`, `NAME-part2.mkv`...
/// While the disk stays full the retries are quiet (no events; counted in `reconnect_attempts`); the
/// part that gets media again is reported by one `recording_started` with the gap (`gap_ms`,
/// `previous_path`). A new description mid-stream: FLV sends a new sequence header in-band; Matroska
/// cannot change codec private data, so the file is finished and the next generation starts
/// (`NAME-g1.mkv`).
///
/// A file a write error cuts short is truncated to where the last successful push ended: whole clusters
/// (FLV: whole tags), so it decodes to its last frame with no error, not into half a cluster.
///
/// Pushed to the file at each keyframe and at least every half second of program time: with Matroska
/// clusters of at most one second (see `Muxer`), a killed server's file plays up to about 1.5 s before
/// the kill.
final class RecordingDestination: Destination {
    /// The longest wait between tries to open the next file after a failure: trying a local file is cheap,
    /// and recording resumes within this of the disk having room again.
    static let maxRetrySeconds = 2.0
    /// The file tags `recording_started` repeats (lower case, without the prefix).
    static let studioTagPrefix = "STUDIO_"

    /// The path of the first file; later files add `-gN` and `-partK` before the extension.
    let path: String
    private let format: String
    private let policy: OutputPolicy
    private let connection: MuxerConnection
    /// Bumped by a format change (a new file for the new description).
    private var generation = 0
    /// Files opened after write failures within this generation.
    private var part = 0
    /// The file opened (or tried) last.
    private var filePath: String
    /// A file was opened at least once: later open failures are retried instead of ending the output.
    private var everOpened = false
    /// The open file holds media (its first keyframe reached the disk).
    private var holdsMedia = false
    /// The open file was reported started.
    private var recording = false
    /// Opening again after a write failure (counted as a reconnection once it records again).
    private var reopening = false
    /// Program time of the last flush.
    private var lastFlush: MediaTime?
    /// The open file's size after its last successful push (it ends between clusters there).
    private var durableBytes: Int64?
    /// Program time of the last video packet written to the open file.
    private var lastVideo: MediaTime?
    /// Since a write failed, until a file holds media again.
    private var outage: Outage?
    /// Each file's tags, asked for as it is opened.
    private let fileTags: (@Sendable (_ firstVideo: MediaTime?) -> [String: String])?
    /// The open file's tags: its `recording_started` repeats the studio's own (`STUDIO_ORIGIN_US` as
    /// `origin_us`, `STUDIO_TIME_BASE` as `time_base`) for the history.
    private var openTags: [String: String] = [:]

    private struct Outage {
        /// The file that failed, if it had recorded, and the program time of its last video packet.
        var previousPath: String?
        var lastProgramTime: MediaTime?
        /// The failure was reported (one `error` event); retries are quiet.
        var reported = false
    }

    init(path: String, format: String, policy: OutputPolicy = OutputPolicy(), interrupt: InterruptState,
         fileTags: (@Sendable (_ firstVideo: MediaTime?) -> [String: String])? = nil) {
        self.fileTags = fileTags
        self.path = path
        self.format = format
        self.policy = policy
        filePath = path
        connection = MuxerConnection(interrupt: interrupt)
    }

    var openFormats: (video: StreamDescription, audio: StreamDescription, sourceAudio: StreamDescription?)? { connection.formats }
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

    /// A file with tags waits for its first keyframe: they may say its first frame's time (a timecode).
    var opensAtFirstKeyframe: Bool { fileTags != nil }

    func open(video: StreamDescription, audio: StreamDescription, sourceAudio: StreamDescription?, firstVideo: MediaTime?) throws {
        filePath = Self.path(path, generation: generation, part: part)
        holdsMedia = false
        lastVideo = nil
        lastFlush = nil
        durableBytes = nil
        openTags = fileTags?(firstVideo) ?? [:]
        try connection.open(format: format, url: filePath, isNetwork: false, video: video, audio: audio, sourceAudio: sourceAudio,
                            connectTimeout: nil, ioTimeout: nil, tags: openTags)
        everOpened = true
    }

    func write(_ packet: EncodedPacket, newExtradata: [UInt8]?) throws -> Bool {
        try connection.write(packet, newExtradata: newExtradata)
    }

    /// The file's first keyframe is pushed all the way into the file; later, what is buffered is pushed
    /// at each keyframe and every half second.
    func wroteVideo(at pts: MediaTime, keyframe: Bool) throws -> Bool {
        lastVideo = pts
        if !holdsMedia {
            try connection.flushAll()
            holdsMedia = true
            lastFlush = pts
            durableBytes = connection.position
        } else if keyframe || lastFlush.map({ pts.microseconds - $0.microseconds >= 500_000 }) ?? true {
            try connection.flush()
            lastFlush = pts
            durableBytes = connection.position
        }
        return holdsMedia
    }

    /// A file that recorded is reported closed, with its size; one that never got media is deleted.
    /// After a format change the next file is a new generation; after a write failure the next part (a
    /// file that never recorded is simply opened again under the same name).
    func close(_ reason: CloseReason, error: String?) -> OutputEvent? {
        guard connection.close(writeTrailer: reason.writesTrailer) else { return nil }
        let recorded = recording
        recording = false
        holdsMedia = false
        if !recorded { unlink(filePath) }
        if recorded, reason == .writeFailed, let durableBytes { Self.truncate(filePath, to: durableBytes) }
        switch reason {
        case .stopped: break
        case .formatChanged:
            generation += 1
            part = 0
        case .writeFailed:
            if recorded {
                part += 1
                outage = Outage(previousPath: filePath, lastProgramTime: lastVideo)
            } else if outage == nil {
                outage = Outage()
            }
            reopening = true
        }
        guard recorded else { return nil }
        var details = ["path": filePath, "reason": reason.rawValue]
        if let error { details["error"] = error }
        if let lastVideo { details["last_program_ms"] = String(lastVideo.milliseconds) }
        if let size = Self.size(ofFile: filePath) { details["bytes"] = String(size) }
        return OutputEvent(.recordingStopped, details)
    }

    /// Cuts what a failed write left after `size` (half a cluster); a file already that short stays.
    static func truncate(_ path: String, to size: Int64) {
        guard let current = Self.size(ofFile: path), current > size else { return }
        _ = try? syscall("truncate") { Glibc.truncate(path, off_t(size)) }
    }

    static func size(ofFile path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// The first file failing ends the output; after that, the first failure of a series is reported and
    /// the output retries.
    func openFailed(_ error: String, firstFailure: Bool, everStarted: Bool) -> OpenFailure {
        let event = OutputEvent(.error, ["during": "open recording", "error": error, "path": filePath])
        if !everOpened { return .giveUp(event) }
        return .retry(firstFailure ? event : nil)
    }

    /// Quiet: the outage was reported when writing stopped, and the next `recording_started` says when
    /// it resumed.
    func retry(attempt: Int) -> Retry {
        Retry(delay: min(policy.backoff(attempt: attempt), Self.maxRetrySeconds), event: nil)
    }

    func started(at pts: MediaTime, reconnect: Bool) -> Started {
        recording = true
        defer { reopening = false }
        var details = ["first_program_ms": String(pts.milliseconds), "path": filePath]
        for (key, value) in openTags where key.hasPrefix(Self.studioTagPrefix) {
            details[String(key.dropFirst(Self.studioTagPrefix.count)).lowercased()] = value
        }
        if let outage, let previous = outage.previousPath {
            details["previous_path"] = previous
            if let last = outage.lastProgramTime { details["gap_ms"] = String(pts.milliseconds - last.milliseconds) }
        }
        outage = nil
        return Started(event: OutputEvent(.recordingStarted, programTime: pts, details), isReconnection: reopening)
    }

    /// Reported even while stopping (the end of the recording is missing), once per outage: failures of
    /// the files tried while the disk stays full are quiet.
    func writeFailed(_ error: String, at pts: MediaTime, stopping: Bool) -> OutputEvent? {
        guard outage?.reported != true else { return nil }
        outage?.reported = true
        return OutputEvent(.error, programTime: pts, ["during": "write recording", "error": error, "path": filePath])
    }
}
