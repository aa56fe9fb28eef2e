#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFFmpeg
import MediaSupport
import StudioCore
import StudioSystem
import Encoding
import Output

/// What one finished transcode did.
public struct TranscodeSummary: Sendable, Equatable {
    public var input: String
    public var output: String
    public var frames: Int
    public var audioPackets: Int
    /// Frames whose JPEG did not decode (a camera's glitch): the previous picture was encoded in their
    /// place, so the file keeps every frame time.
    public var framesRepeated: Int
    /// The input's audio was not AAC and was left out.
    public var audioLeftOut: String?
    public var bytes: Int64
}

/// Transcodes a passthrough ISO (Motion JPEG in Matroska, with the program's AAC audio) into H.264 in
/// MOV or MP4 for editors that do not read MJPEG in Matroska, in-process: libavformat demuxes
/// (`MediaFileReader`), libavcodec decodes each JPEG (`CodecSession`), libswscale converts it to I420
/// (`FrameConverter`), x264 encodes at constant quality (`X264Encoder`, no B-frames) and `MediaFileWriter`
/// (the recordings' `Muxer`) writes it; the audio packets are copied as they are. Every frame keeps its
/// pts, the program time the recording stamped (x264's time base is the file's frame grid, so a frame's
/// pts maps to a tick and back exactly), so `studio export`'s cut lists fit the new file as they fit
/// the ISO: same first frame time, same frames, same duration.
///
/// It runs on the caller's thread (the `studio transcode` process's own `transcode` thread), reads only
/// the input, and writes a temporary file beside the output (`.NAME.partial-PID`), renamed to the output
/// only when complete: an error, a full disk or a cancel removes it, and an existing output is never
/// overwritten.
public final class Transcoder {
    public let settings: TranscodeSettings
    private let clock: any Clock

    public init(settings: TranscodeSettings = TranscodeSettings(), clock: any Clock = .monotonic) {
        self.settings = settings
        self.clock = clock
    }

    /// For a command line: libav*'s own log lines are dropped (a file that is not media makes the
    /// Matroska demuxer log "EBML header parsing failed" before `TranscodeError` says it in the operator's
    /// words; a JPEG that does not decode is counted in `TranscodeSummary.framesRepeated`).
    public static func quietLibraryLogs() {
        FFmpegLogging.configure(verbose: false, sink: { _, _ in })
    }

    /// `DIR/NAME.mov` for `.../NAME.mkv` (DIR: `directory`, else the input's own directory).
    public static func outputPath(for input: String, directory: String?, container: TranscodeContainer) -> String {
        let url = URL(fileURLWithPath: input)
        let name = url.deletingPathExtension().lastPathComponent + "." + container.fileExtension
        let folder = directory.map { URL(fileURLWithPath: $0) } ?? url.deletingLastPathComponent()
        return folder.appendingPathComponent(name).path
    }

    /// Transcodes `input` into `output`. `progress` is called after every frame (and once at the end,
    /// `finished`); `isCancelled` is asked before every packet and ends the transcode with `.cancelled`.
    public func run(input: String, output: String, progress: (TranscodeProgress) -> Void = { _ in },
                    isCancelled: () -> Bool = { false }) throws(TranscodeError) -> TranscodeSummary {
        guard FileManager.default.fileExists(atPath: input) else { throw .missing(input) }
        let reader: MediaFileReader
        do { reader = try MediaFileReader(path: input) } catch { throw .unreadable(input, reason: error.message) }
        guard let video = reader.video else { throw .noVideo(input) }
        guard video.codecID == AV_CODEC_ID_MJPEG else {
            if video.codecID == AV_CODEC_ID_H264 { throw .alreadyH264(input) }
            throw .notMJPEG(input, codec: String(cString: avcodec_get_name(video.codecID)))
        }
        guard !FileManager.default.fileExists(atPath: output) else { throw .outputExists(output) }
        let directory = URL(fileURLWithPath: output).deletingLastPathComponent().path
        guard access(directory, W_OK) == 0 else {
            throw .outputNotWritable(directory, reason: String(cString: strerror(errno)))
        }
        let temporary = URL(fileURLWithPath: directory)
            .appendingPathComponent(".\(URL(fileURLWithPath: output).lastPathComponent).partial-\(getpid())").path
        var job = Job(reader: reader, video: video, input: input, output: output, temporary: temporary)
        defer { job.abandon() }
        try job.run(settings: settings, clock: clock, progress: progress, isCancelled: isCancelled)
        return job.summary
    }
}

/// One file's transcode: the reader, decoder, converter, encoder and writer, and what they did.
private struct Job {
    let reader: MediaFileReader
    let video: MediaFileReader.VideoStream
    let input: String
    let output: String
    let temporary: String
    var summary: TranscodeSummary
    private var writer: MediaFileWriter?
    private var done = false

    init(reader: MediaFileReader, video: MediaFileReader.VideoStream, input: String, output: String, temporary: String) {
        self.reader = reader
        self.video = video
        self.input = input
        self.output = output
        self.temporary = temporary
        summary = TranscodeSummary(input: input, output: output, frames: 0, audioPackets: 0, framesRepeated: 0, bytes: 0)
    }

    /// Removes the temporary file unless the transcode completed (then it is the output already).
    mutating func abandon() {
        guard !done else { return }
        writer?.abandon()
        writer = nil
        unlink(temporary)
    }

    mutating func run(settings: TranscodeSettings, clock: any Clock, progress: (TranscodeProgress) -> Void,
                      isCancelled: () -> Bool) throws(TranscodeError) {
        let started = clock.now()
        // x264 wants an even size; an odd one is scaled by a pixel.
        let width = video.width & ~1, height = video.height & ~1
        // The file's frame grid; without a known rate, a millisecond grid keeps any pts exactly.
        let rate = video.frameRate ?? Rational(1000)
        var encoderSettings = VideoEncoderSettings(width: width, height: height, frameRate: rate, preset: settings.preset,
                                                   keyframeIntervalSeconds: settings.codec.keyframeIntervalSeconds)
        encoderSettings.constantQuality = settings.quality
        let encoder: X264Encoder
        let decoder: CodecSession
        do {
            encoder = try X264Encoder(settings: encoderSettings)
            decoder = try CodecSession(AV_CODEC_ID_MJPEG, decoder: true)
            try decoder.open("mjpeg decoder")
        } catch { throw .encodeFailed(input, reason: "\(error)") }

        var audio: StreamDescription?
        if let stream = reader.audio {
            if stream.codecID == AV_CODEC_ID_AAC {
                audio = StreamDescription(kind: .audio, codec: .aac, sampleRate: stream.sampleRate, channels: stream.channels,
                                          bitRate: stream.bitRate, extradata: stream.extradata, encoderName: "copy")
            } else {
                summary.audioLeftOut = String(cString: avcodec_get_name(stream.codecID))
            }
        }
        do {
            writer = try MediaFileWriter(path: temporary, format: settings.container.muxerName,
                                         video: encoder.streamDescription, audio: audio)
        } catch { throw writeError(error) }

        let converter = FrameConverter()
        let pool = FramePool(capacity: VideoFrame.byteCount(format: .i420, width: width, height: height))
        var previous: VideoFrame?
        var start: MediaTime?
        let frameDuration = MediaTime(count: 1, rate: rate)
        let end = reader.duration
        let name = URL(fileURLWithPath: input).lastPathComponent
        func report(_ pts: MediaTime, finished: Bool) {
            let first = start ?? pts
            let total = end.map { max(0, $0.seconds - first.seconds) }
            progress(TranscodeProgress(file: name, frames: summary.frames, doneSeconds: max(0, (pts + frameDuration - first).seconds),
                                       totalSeconds: total, elapsedSeconds: Double(clock.now() &- started) / 1e9, finished: finished))
        }
        var last = MediaTime.zero
        while true {
            if isCancelled() { throw .cancelled(output) }
            let packet: MediaFileReader.Packet?
            // A file cut short (a killed server's) ends in a read error: what was read is transcoded.
            do { packet = try reader.next() } catch { packet = nil }
            guard let packet else { break }
            switch packet.kind {
            case .audio:
                guard audio != nil else { continue }
                try write(EncodedPacket(kind: .audio, data: packet.data, pts: packet.pts, dts: packet.dts,
                                        duration: packet.duration, isKeyframe: true))
                summary.audioPackets += 1
            case .video:
                if start == nil { start = packet.pts }
                let frame = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool)
                do {
                    let decoded = try packet.data.withUnsafeBytes { bytes throws(FFmpegError) in try decoder.decode(bytes) }
                    defer { av_frame_unref(decoded) }
                    try converter.convert(decoded, into: frame)
                    previous = frame
                } catch {
                    // A JPEG that does not decode: the previous picture in its place keeps the frame's time.
                    guard let previous else { continue }
                    try encode(previous, pts: packet.pts, encoder: encoder)
                    summary.framesRepeated += 1
                    summary.frames += 1
                    last = packet.pts
                    report(packet.pts, finished: false)
                    continue
                }
                try encode(frame, pts: packet.pts, encoder: encoder)
                summary.frames += 1
                last = packet.pts
                report(packet.pts, finished: false)
            }
        }
        do {
            for packet in try encoder.flush() { try write(packet) }
        } catch let error as TranscodeError { throw error } catch { throw .encodeFailed(input, reason: "\(error)") }
        guard let writer else { return }
        do {
            try writer.finish()
        } catch { throw writeError(error) }
        summary.bytes = writer.bytesWritten
        self.writer = nil
        guard rename(temporary, output) == 0 else {
            throw .writeFailed(output, reason: String(cString: strerror(errno)))
        }
        done = true
        report(last, finished: true)
    }

    private func encode(_ frame: VideoFrame, pts: MediaTime, encoder: X264Encoder) throws(TranscodeError) {
        let packets: [EncodedPacket]
        do { packets = try encoder.encode(frame, pts: pts, forceKeyframe: false) } catch {
            throw .encodeFailed(input, reason: "\(error)")
        }
        for packet in packets { try write(packet) }
    }

    private func write(_ packet: EncodedPacket) throws(TranscodeError) {
        do { try writer?.write(packet) } catch { throw writeError(error) }
    }

    private func writeError(_ error: FFmpegError) -> TranscodeError {
        error.code == cff_averror(ENOSPC) ? .diskFull(output) : .writeFailed(output, reason: error.message)
    }
}
