import StudioCore
import MediaSupport

/// Where one output's media goes, one connection or file at a time. The output loop (`OutputLoop`)
/// opens it for the two stream descriptions, writes packets, closes it; what differs between an RTMP
/// server and a recording file is decided here, never in the loop: the options of the connection, what a
/// new description mid-stream needs, what happens after a failure, and the events that report it.
///
/// Owned by the output thread (`out.NAME`) and used only there.
protocol Destination: AnyObject {
    /// The descriptions the open connection or file was opened with; nil while closed.
    /// `sourceAudio`: a recording's second audio track (the source's own sound), if it has one.
    var openFormats: (video: StreamDescription, audio: StreamDescription, sourceAudio: StreamDescription?)? { get }
    /// The file being written (`OutputStatistics.currentFile`); nil for network destinations.
    var currentFile: String? { get }
    /// Bytes handed to the protocol (socket or file) over every connection or file so far.
    var bytesWritten: Int64 { get }
    /// How a new description of the open stream's kind mid-stream (encoder fallback) reaches the viewer.
    var formatChange: FormatChange { get }

    /// Opens the connection or the next file for these descriptions and writes the header. Blocking,
    /// bounded by the destination's timeouts and by `stop`. `sourceAudio`: a second audio track (files
    /// only; a network destination carries the program's sound alone).
    /// `firstVideo`: the program time of the first video keyframe the destination will get, when known
    /// (always, for one that `opensAtFirstKeyframe`).
    func open(video: StreamDescription, audio: StreamDescription, sourceAudio: StreamDescription?, firstVideo: MediaTime?) throws
    /// Opened only once its first video keyframe has come (its header depends on that keyframe's time).
    var opensAtFirstKeyframe: Bool { get }
    /// Writes one packet; `newExtradata` makes the muxer send a fresh sequence header in-band first.
    /// Returns false when the packet was refused (its dts would go backwards).
    func write(_ packet: EncodedPacket, newExtradata: [UInt8]?) throws -> Bool
    /// A video packet was written (recordings push what is buffered to the file here). Returns whether
    /// the connection or file holds media now: the output reports it started (`started`) the first time
    /// it does. A network connection does from its first keyframe; a recording once that keyframe is on
    /// disk. Throws when pushing to the file failed (the output then handles it as a failed write).
    func wroteVideo(at pts: MediaTime, keyframe: Bool) throws -> Bool
    /// Closes the connection or file (if open); returns the event that reports it, if any. `error`: what
    /// failed, with `.writeFailed`.
    func close(_ reason: CloseReason, error: String?) -> OutputEvent?
    /// Before open attempt `attempt` (1, 2... since the last good connection or file): how long to wait,
    /// and the event that reports the attempt, if any.
    func retry(attempt: Int) -> Retry

    /// Opening failed with `error` (already redacted). `firstFailure`: no failure since the last good
    /// connection; `everStarted`: media went out on an earlier connection or file.
    func openFailed(_ error: String, firstFailure: Bool, everStarted: Bool) -> OpenFailure
    /// The connection or file holds media from its first keyframe at `pts` on (`wroteVideo` said so);
    /// `reconnect` when an earlier one did too.
    func started(at pts: MediaTime, reconnect: Bool) -> Started
    /// A write failed with `error` (the destination is closed already); the event to report, if any.
    func writeFailed(_ error: String, at pts: MediaTime, stopping: Bool) -> OutputEvent?
}

extension Destination {
    func close(_ reason: CloseReason) -> OutputEvent? { close(reason, error: nil) }
    /// Opens for the program's video and sound alone.
    func open(video: StreamDescription, audio: StreamDescription) throws { try open(video: video, audio: audio, sourceAudio: nil, firstVideo: nil) }
}

/// An event a destination reports; the output adds its name and masked URL and emits it.
struct OutputEvent {
    var kind: EventKind
    var programTime: MediaTime?
    var details: [String: String]

    init(_ kind: EventKind, programTime: MediaTime? = nil, _ details: [String: String] = [:]) {
        self.kind = kind
        self.programTime = programTime
        self.details = details
    }
}

/// Why a destination is closed.
enum CloseReason: String {
    case stopped
    case formatChanged = "format changed"
    case writeFailed = "write failed"

    /// A write failure leaves the connection or file as far as it got; otherwise it is finished properly.
    var writesTrailer: Bool { self != .writeFailed }
}

/// What follows a failed open.
enum OpenFailure {
    /// Give up: the output fails (and reports `event`).
    case giveUp(OutputEvent)
    /// Try again with backoff, reporting `event` first if there is one.
    case retry(OutputEvent?)
}

/// The wait before an open attempt after failures, and the event that reports it, if any.
struct Retry {
    var delay: Double
    var event: OutputEvent?
}

/// What follows a new stream description of an open stream.
enum FormatChange {
    /// Same connection or file: a new sequence header goes in-band with the next packet (FLV).
    case inBand
    /// The file is finished and a new one opened for the new description (Matroska cannot change its
    /// codec private data).
    case reopen
}

/// How a started connection or file is reported.
struct Started {
    var event: OutputEvent
    /// Counted in `OutputStatistics.reconnectCount`.
    var isReconnection: Bool
}

extension OutputDestination {
    /// The destination that writes there: a network kind's URL is a `NetworkDestination`, anything else a
    /// `RecordingDestination`.
    func makeDestination(policy: OutputPolicy, interrupt: InterruptState, fileTags: (@Sendable (_ firstVideo: MediaTime?) -> [String: String])? = nil) -> any Destination {
        if isNetwork { return NetworkDestination(url: url, container: containerFormat, policy: policy, interrupt: interrupt) }
        return RecordingDestination(path: url, format: containerFormat, policy: policy, interrupt: interrupt, fileTags: fileTags)
    }
}

/// A destination's libavformat muxer while one is open, and the bytes of the ones it closed.
final class MuxerConnection {
    private let interrupt: InterruptState
    private(set) var muxer: Muxer?
    private var bytesOfClosed: Int64 = 0

    init(interrupt: InterruptState) { self.interrupt = interrupt }

    var formats: (video: StreamDescription, audio: StreamDescription, sourceAudio: StreamDescription?)? {
        muxer.flatMap { muxer in muxer.audio.map { (muxer.video, $0, muxer.sourceAudio) } }
    }

    /// Bytes handed to the protocol over every muxer so far (a closed one as counted when it closed).
    var bytesWritten: Int64 { bytesOfClosed + (muxer?.bytesWritten ?? 0) }

    /// Opens a muxer; nil timeouts set no per-operation deadline (only `stop` aborts the operation).
    func open(format: String, url: String, isNetwork: Bool, video: StreamDescription, audio: StreamDescription,
              sourceAudio: StreamDescription? = nil, connectTimeout: Double?, ioTimeout: Double?, tags: [String: String] = [:]) throws {
        muxer = try Muxer(format: format, url: url, isNetwork: isNetwork, video: video, audio: audio, sourceAudio: sourceAudio, tags: tags,
                          interrupt: interrupt, connectTimeout: connectTimeout, ioTimeout: ioTimeout)
    }

    func write(_ packet: EncodedPacket, newExtradata: [UInt8]?) throws -> Bool {
        guard let muxer else { return false }
        return try muxer.write(packet, newExtradata: newExtradata)
    }

    func flush() throws { try muxer?.flush() }

    /// The open file's size as far as it is known to be whole: see `Muxer.position`.
    var position: Int64? { muxer?.position }

    /// Pushes everything written into the file (see `Muxer.flushAll`).
    func flushAll() throws {
        guard let muxer else { throw FFmpegError(call: "avio_flush", message: "muxer closed") }
        try muxer.flushAll()
    }

    /// Closes the muxer, if one is open; returns whether one was.
    @discardableResult
    func close(writeTrailer: Bool) -> Bool {
        guard let muxer else { return false }
        muxer.close(writeTrailer: writeTrailer)
        bytesOfClosed += muxer.bytesWritten
        self.muxer = nil
        return true
    }
}
