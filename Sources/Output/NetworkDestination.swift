import StudioCore
import MediaSupport

/// A network URL of an `OutputKind`: RTMP(S) as FLV, SRT (caller) as MPEG-TS, over libavformat's
/// protocols. Every connect, read and write has a deadline
/// (`OutputPolicy.connectTimeoutSeconds`, `ioTimeoutSeconds`: `rw_timeout` plus the interrupt callback);
/// after a failure the output reconnects to the same URL with backoff, forever until stopped, and the
/// first connection is `output_connected`, later ones `output_reconnected`. A new description mid-stream
/// (encoder fallback, generation + 1) goes out as a new sequence header in-band, on the same connection
/// (FLV: a new AVC sequence header tag; MPEG-TS: the new SPS/PPS before the next keyframe, which
/// libavformat's Annex B filter takes from the packet's new extradata).
final class NetworkDestination: Destination {
    private let url: String
    private let container: String
    private let policy: OutputPolicy
    private let connection: MuxerConnection

    init(url: String, container: String, policy: OutputPolicy, interrupt: InterruptState) {
        self.url = url
        self.container = container
        self.policy = policy
        connection = MuxerConnection(interrupt: interrupt)
    }

    var openFormats: (video: StreamDescription, audio: StreamDescription, sourceAudio: StreamDescription?)? { connection.formats }
    var currentFile: String? { nil }
    var bytesWritten: Int64 { connection.bytesWritten }
    var formatChange: FormatChange { .inBand }

    var opensAtFirstKeyframe: Bool { false }

    func open(video: StreamDescription, audio: StreamDescription, sourceAudio: StreamDescription?, firstVideo: MediaTime?) throws {
        do {
            try connection.open(format: container, url: url, isNetwork: true, video: video, audio: audio,
                                connectTimeout: policy.connectTimeoutSeconds, ioTimeout: policy.ioTimeoutSeconds)
        } catch let error as FFmpegError {
            throw Self.explained(error, kind: OutputKind.of(url))
        }
    }

    /// The server answered but did not take the stream: libavformat's RTMP reports a refused `publish`
    /// (a wrong stream key, an `on_publish` hook saying no, another encoder already on the key) as EIO or
    /// EPERM from opening the connection, which says nothing to an operator; its SRT reports so a
    /// listener that rejected the call (a wrong passphrase, a stream id it does not take) or is not there.
    static func explained(_ error: FFmpegError, kind: OutputKind?) -> FFmpegError {
        let refused = ["avio_open2", "avformat_write_header"].contains(error.call)
            && [FFmpegError.inputOutput, FFmpegError.notPermitted].contains(error.code)
        guard refused else { return error }
        let hint = kind == .srt
            ? "the SRT listener refused the call or is not there (check that it runs, the passphrase, and that it takes this stream id)"
            : "the server refused the stream (check the stream key; another encoder may be publishing on it)"
        return FFmpegError(call: error.call, message: "\(hint) [\(error.message)]")
    }

    func write(_ packet: EncodedPacket, newExtradata: [UInt8]?) throws -> Bool {
        try connection.write(packet, newExtradata: newExtradata)
    }

    /// The muxer sends every packet at once (`flush_packets`): nothing to push; the connection is
    /// streaming from its first keyframe.
    func wroteVideo(at pts: MediaTime, keyframe: Bool) -> Bool { true }

    func close(_ reason: CloseReason, error: String?) -> OutputEvent? {
        connection.close(writeTrailer: reason.writesTrailer)
        return nil
    }

    /// Each attempt is reported (`output_reconnect_attempt`), after the backoff it waited.
    func retry(attempt: Int) -> Retry {
        let delay = policy.backoff(attempt: attempt)
        return Retry(delay: delay, event: OutputEvent(.outputReconnectAttempt, ["attempt": String(attempt),
                                                                                "delay_ms": String(Int(delay * 1000))]))
    }

    /// Retries forever; only a server never reached is reported (once), later attempts are only counted.
    func openFailed(_ error: String, firstFailure: Bool, everStarted: Bool) -> OpenFailure {
        .retry(firstFailure && !everStarted ? OutputEvent(.error, ["during": "connect", "error": error]) : nil)
    }

    func started(at pts: MediaTime, reconnect: Bool) -> Started {
        Started(event: OutputEvent(reconnect ? .outputReconnected : .outputConnected, programTime: pts,
                                   ["first_program_ms": String(pts.milliseconds)]),
                isReconnection: reconnect)
    }

    /// A connection lost while stopping is not reported: it is ending anyway.
    func writeFailed(_ error: String, at pts: MediaTime, stopping: Bool) -> OutputEvent? {
        stopping ? nil : OutputEvent(.outputDisconnected, programTime: pts, ["error": error])
    }
}
