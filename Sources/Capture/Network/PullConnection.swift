import CFFmpeg
import StudioCore
import StudioSystem
import MediaSupport
import Synchronization

/// One connection to a network source: libavformat's demuxer on the URL, the video decoder (H.264,
/// HEVC, whatever libavcodec has) and the audio decoder with its resampler to the program's format.
/// Owned and used by the pull's receive thread alone; `PullInterrupt` is how another thread (a stop)
/// and the read deadline break a blocking open or read.
final class PullConnection {
    /// A decoded picture or audio span, with its media time (ns, on the stream's clock).
    enum Item {
        case video(UnsafeMutablePointer<AVFrame>, media: Int64)
        case audio([Float], media: Int64)
        /// A video or audio packet as it arrived, before it is decoded (for the ISO's copy; the call only).
        case packet(PullPacket)
    }

    struct Limits {
        /// Pictures larger than this are refused (a hostile or broken stream's 16384x16384).
        var maximumPixels = 4096 * 2304
    }

    let description: String
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private var video: (index: Int32, decoder: PullVideoDecoder, timeBase: AVRational)?
    private var audio: (index: Int32, codec: CodecSession, timeBase: AVRational)?
    /// The video's and the sound's codec and parameters, for the ISO's copy of their packets.
    private var videoParameters: PullStreamParameters?
    private var audioParameters: PullStreamParameters?
    private var resampler: AudioResampler?
    private let audioFormat: AudioFormat
    private let limits: Limits
    /// What the stream carries, for the status: `h264 1280x720, aac 44100 Hz 1 ch`.
    private(set) var streamSummary = ""
    /// The video's codec if an ISO can copy its packets (H.264, HEVC), else nil.
    var copyableCodec: CompressedCodec? { videoParameters?.codec }
    /// The video's frame rate as the stream says (nil: it does not).
    private(set) var frameRate: Rational?
    /// Bytes read (packets), for the bit rate.
    private(set) var bytesRead: UInt64 = 0
    /// Video packets the decoder refused: all of them, and those since its last picture, with
    /// libavcodec's words for the last refusal (a stream whose every packet is refused has a broken
    /// codec configuration, or is damaged for good).
    private(set) var videoRefused = (total: 0, inARow: 0, reason: "")

    /// Where the stream comes from: a URL libavformat opens, or a caller's connection that the SRT
    /// listener accepted (MPEG-TS read through a custom AVIOContext).
    enum Source {
        case url(String, PullKind)
        case srt(SRTConnection)
        /// A media file a player plays (read at its own pace, not as a live stream).
        case file(String)
    }

    /// The custom input's reader and context (an SRT caller), freed after the demuxer; the interrupt,
    /// held while libavformat may call it (its callback holds it unretained).
    private var reader: SRTInputReader?
    private let interrupt: PullInterrupt
    private var customIO: UnsafeMutablePointer<AVIOContext>?

    /// Opens `source` (blocking; `interrupt` breaks it) and finds its streams and decoders. Throws a
    /// clear error: nothing at the URL, no video stream, a codec libavcodec lacks (named), a picture
    /// too large.
    init(source: Source, interrupt: PullInterrupt, audioFormat: AudioFormat, limits: Limits = Limits(),
         decoding: NetworkDecoding = NetworkDecoding()) throws(PullError) {
        switch source {
        case .url(let url, _): description = SecretMasking.maskURL(url)
        case .srt: description = "its SRT caller"
        case .file(let path): description = path
        }
        self.audioFormat = audioFormat
        self.limits = limits
        self.interrupt = interrupt
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else { throw PullError("out of memory") }
        self.packet = packet
        self.frame = frame
        var options: OpaquePointer?
        let kindOptions: [(String, String)] = if case .url(_, let kind) = source { kind.options } else { [] }
        let live: [(String, String)] = if case .file = source { [] } else { [("fflags", "nobuffer"), ("probesize", "500000"), ("analyzeduration", "1000000")] }
        for (key, value) in kindOptions + live {
            av_dict_set(&options, key, value, 0)
        }
        defer { av_dict_free(&options) }
        guard let allocated = avformat_alloc_context() else { throw PullError("out of memory") }
        allocated.pointee.interrupt_callback = interrupt.callback
        if case .file = source {} else { allocated.pointee.flags |= AVFMT_FLAG_NOBUFFER }
        context = allocated
        var url: String?
        var format: UnsafePointer<AVInputFormat>?
        switch source {
        case .url(let address, _): url = address
        case .file(let path): url = path
        case .srt(let connection):
            let reader = SRTInputReader(connection: connection, interrupt: interrupt)
            self.reader = reader
            let size: Int32 = 32_768
            guard let buffer = av_malloc(Int(size)),
                  let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 0, Unmanaged.passUnretained(reader).toOpaque(),
                                              { opaque, buffer, size in
                                                  guard let opaque, let buffer else { return cff_averror_eof() }
                                                  return Unmanaged<SRTInputReader>.fromOpaque(opaque).takeUnretainedValue().read(buffer, size)
                                              }, nil, nil)
            else { throw PullError("out of memory") }
            customIO = io
            allocated.pointee.pb = io
            allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
            format = av_find_input_format("mpegts")
        }
        let opened = avformat_open_input(&context, url, format, &options)
        guard opened >= 0, let context else {
            throw PullError(interrupt.isStopping ? "stopped" : "cannot open \(description): \(FFmpegError(call: "avformat_open_input", code: opened).message)")
        }
        let found = avformat_find_stream_info(context, nil)
        guard found >= 0 else { throw PullError("no streams found at \(description): \(FFmpegError(call: "avformat_find_stream_info", code: found).message)") }
        var parts: [String] = []
        for index in 0..<Int32(context.pointee.nb_streams) {
            let stream = context.pointee.streams[Int(index)]!
            let parameters = stream.pointee.codecpar!
            let name = avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) } ?? "unknown"
            switch parameters.pointee.codec_type {
            case AVMEDIA_TYPE_VIDEO where video == nil:
                let width = Int(parameters.pointee.width), height = Int(parameters.pointee.height)
                guard width * height <= limits.maximumPixels else {
                    throw PullError("its picture, \(width)x\(height), is larger than the limit of \(limits.maximumPixels) pixels")
                }
                // VP9's alpha rides beside its pictures (WebM's `alpha_mode` 1): only libvpx's decoder reads it.
                let alpha = av_dict_get(stream.pointee.metadata, "alpha_mode", nil, 0).map { String(cString: $0.pointee.value) } == "1"
                let preferred = parameters.pointee.codec_id == AV_CODEC_ID_VP9 && alpha ? "libvpx-vp9" : nil
                video = (index, try PullVideoDecoder(parameters: parameters, name: name, decoding: decoding, preferring: preferred), stream.pointee.time_base)
                videoParameters = PullStreamParameters(parameters)
                if stream.pointee.duration > 0 { duration = av_rescale_q(stream.pointee.duration, stream.pointee.time_base, AVRational(num: 1, den: 1_000_000_000)) }
                let guessed = av_guess_frame_rate(context, stream, nil)
                // A rate past 240 is the stream's clock, not its pictures' (MPEG-TS at 1 fps guesses 90000).
                if guessed.num > 0, guessed.den > 0, guessed.num <= 240 * guessed.den { frameRate = Rational(guessed.num, guessed.den) }
                parts.append("\(name) \(width)x\(height)")
            case AVMEDIA_TYPE_AUDIO where audio == nil:
                // A stream whose audio codec this libavcodec lacks still gives its pictures.
                if let session = try? Self.audioDecoder(for: parameters, name: name) {
                    audio = (index, session, stream.pointee.time_base)
                    audioParameters = PullStreamParameters(parameters)
                    parts.append("\(name) \(parameters.pointee.sample_rate) Hz \(parameters.pointee.ch_layout.nb_channels) ch")
                } else {
                    parts.append("\(name) audio (no decoder: not heard)")
                }
            default:
                stream.pointee.discard = AVDISCARD_ALL
            }
        }
        guard video != nil else { throw PullError("\(description) carries no video stream") }
        streamSummary = parts.joined(separator: ", ")
        if duration == nil, context.pointee.duration > 0 { duration = av_rescale_q(context.pointee.duration, AVRational(num: 1, den: AV_TIME_BASE), AVRational(num: 1, den: 1_000_000_000)) }
    }

    /// How long its video lasts as the file says (its stream's, else the container's), in ns; nil: a live stream.
    private(set) var duration: Int64?

    /// At a file's end: the pictures the decoder still holds (an empty packet tells it the end), as `readAndDecode` gives them.
    func drain(_ body: (Item) -> Void) {
        guard let video else { return }
        av_packet_unref(packet)
        _ = decode(video.decoder.session, timeBase: video.timeBase) { decoded, media in
            if case .success(let picture) = video.decoder.picture(decoded) { body(.video(picture, media: media)) }
        }
    }

    /// A file's read moved to the video's keyframe at or before `media` (ns on its clock), the decoders
    /// flushed (nothing of before is given after): the next pictures are that keyframe's and on, the
    /// sound from about there. Throws where libavformat cannot (the connection is then where it was, or
    /// lost: the caller opens the file again).
    func seek(toMedia media: Int64) throws(PullError) {
        guard let context, let video else { throw PullError("closed") }
        let target = av_rescale_q(media, AVRational(num: 1, den: 1_000_000_000), video.timeBase)
        let sought = avformat_seek_file(context, video.index, Int64.min, target, target, 0)
        guard sought >= 0 else { throw PullError(FFmpegError(call: "avformat_seek_file", code: sought).message) }
        avcodec_flush_buffers(video.decoder.session.context)
        if let audio { avcodec_flush_buffers(audio.codec.context) }
        resampler = nil
    }

    deinit {
        avformat_close_input(&context)
        if customIO != nil {
            av_freep(&customIO!.pointee.buffer)
            avio_context_free(&customIO)
        }
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
    }

    /// libavcodec's decoder for a stream, its parameters set, not yet opened (the caller sets its threads
    /// and flags, then opens it): the sound's here, the pictures' in `PullVideoDecoder`. `missing` is
    /// added to the error when libavcodec has no decoder for it; `preferring` names one to use instead of
    /// libavcodec's default for the codec, where it has it.
    static func decoderSession(for parameters: UnsafeMutablePointer<AVCodecParameters>, name: String, missing: String = "",
                               preferring: String? = nil) throws(PullError) -> CodecSession {
        guard let codec = preferring.flatMap({ avcodec_find_decoder_by_name($0) }) ?? avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw PullError("libavcodec has no \(name) decoder\(missing)")
        }
        let session: CodecSession
        do { session = try CodecSession(codec: codec) } catch { throw PullError("\(name): \(error)") }
        guard avcodec_parameters_to_context(session.context, parameters) >= 0 else { throw PullError("\(name): unusable codec parameters") }
        return session
    }

    private static func audioDecoder(for parameters: UnsafeMutablePointer<AVCodecParameters>, name: String) throws(PullError) -> CodecSession {
        let session = try decoderSession(for: parameters, name: name)
        session.context.pointee.thread_count = 1
        do { try session.open(name) } catch { throw PullError("cannot open the \(name) decoder: \(error)") }
        return session
    }

    /// How the video is decoded (the decoder, its threads, hardware or not, every picture or only the
    /// reference ones), and the packets whose picture was skipped.
    var decoderStatus: NetworkSourceStatus.DecoderStatus? { video?.decoder.status }
    var videoPacketsSkipped: Int { video?.decoder.skipped ?? 0 }

    /// Whether only the video's reference pictures are decoded (nobody sees the camera); from the next
    /// packet on. Every packet is still read (and handed to whoever copies them).
    var skipsNonReference: Bool {
        get { video?.decoder.skipsNonReference ?? false }
        set { video?.decoder.skipsNonReference = newValue }
    }

    /// Reads the next packet and decodes it; `body` gets each picture and audio span it gave (the
    /// picture only for the call). Throws at the end of the stream or an error (the connection is over).
    func readAndDecode(_ body: (Item) -> Void) throws(PullError) {
        guard let context else { throw PullError("closed") }
        let read = av_read_frame(context, packet)
        guard read >= 0 else {
            guard read == FFmpegError.endOfFile else { throw PullError("reading failed: \(FFmpegError(call: "av_read_frame", code: read).message)") }
            throw PullError("the stream ended", endOfStream: true)
        }
        defer { av_packet_unref(packet) }
        bytesRead += UInt64(max(0, packet.pointee.size))
        if let video, packet.pointee.stream_index == video.index {
            // The compressed packet, before decoding: the ISO's copy of the pictures.
            if var parameters = videoParameters {
                let decoder = video.decoder.session.context.pointee
                body(.packet(parameters.describe(packet, timeBase: video.timeBase, decoderSize: (Int(decoder.width), Int(decoder.height)))))
                videoParameters = parameters
            }
            var oversized: (Int, Int)?
            var pictures = 0
            var unusable: String?
            var refusal = decode(video.decoder.session, timeBase: video.timeBase) { decoded, media in
                pictures += 1
                videoRefused.inARow = 0
                let frame: UnsafeMutablePointer<AVFrame>
                switch video.decoder.picture(decoded) {
                case .success(let picture): frame = picture
                case .failure(let error):
                    unusable = error.description
                    return
                }
                let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
                guard width * height <= limits.maximumPixels else { oversized = (width, height); return }
                body(.video(frame, media: media))
            }
            // A picture the GPU made but that could not be copied back counts as refused.
            if refusal == nil { refusal = unusable }
            video.decoder.noteDecoded(pictures: pictures, refused: refusal != nil)
            if let refusal {
                videoRefused.total += 1
                videoRefused.inARow += 1
                videoRefused.reason = refusal
            }
            // A stream that grew past the limit mid-way (or whose size only decoding told) is given up.
            if let (width, height) = oversized {
                throw PullError("its picture, \(width)x\(height), is larger than the limit of \(limits.maximumPixels) pixels")
            }
        } else if let audio, packet.pointee.stream_index == audio.index {
            // The sound's compressed packet, before decoding: the ISO's copy of the source's own sound.
            if var parameters = audioParameters {
                body(.packet(parameters.describe(packet, timeBase: audio.timeBase)))
                audioParameters = parameters
            }
            _ = decode(audio.codec, timeBase: audio.timeBase) { frame, media in
                if resampler?.matches(frame) != true { resampler = AudioResampler(from: frame, to: audioFormat) }
                guard let samples = resampler?.convert(frame) else { return }
                body(.audio(samples, media: media))
            }
        }
    }

    /// Sends the packet to `session` and hands `body` each frame it gives. A damaged packet is skipped
    /// (the decoder conceals what it can); the decoder's words for a refusal are returned.
    private func decode(_ session: CodecSession, timeBase: AVRational, _ body: (UnsafeMutablePointer<AVFrame>, Int64) -> Void) -> String? {
        let sent = avcodec_send_packet(session.context, packet)
        guard sent >= 0 else { return FFmpegError(call: "avcodec_send_packet", code: sent).message }
        while true {
            let received = avcodec_receive_frame(session.context, frame)
            guard received >= 0 else {
                // A decoder with frame threads tells a refused packet here, one call later.
                let over = received == FFmpegError.tryAgain || received == FFmpegError.endOfFile
                return over ? nil : FFmpegError(call: "avcodec_receive_frame", code: received).message
            }
            defer { av_frame_unref(frame) }
            let stamp = frame.pointee.best_effort_timestamp
            guard stamp != cff_nopts_value() else { continue }
            body(frame, av_rescale_q(stamp, timeBase, AVRational(num: 1, den: 1_000_000_000)))
        }
    }
}

/// Why a connection failed or ended, in words for the log and the status (the URL masked).
struct PullError: Error, CustomStringConvertible {
    let description: String
    /// The source ended (a file's end, a stream closed by its sender), not an error.
    let endOfStream: Bool
    init(_ description: String, endOfStream: Bool = false) {
        self.description = description
        self.endOfStream = endOfStream
    }
}

/// Breaks libavformat's blocking calls on one pull: when the pull stops, when its connection is hung
/// up (a phone's publisher went away), or when nothing arrived for `deadline` (a silent server on TCP).
/// The C callback reads atomics only.
final class PullInterrupt: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let hungUp = Atomic<Bool>(false)
    /// The clock the read deadline is on (the camera's).
    private let clock: any Clock

    init(clock: any Clock = .monotonic) { self.clock = clock }
    /// CLOCK_MONOTONIC ns after which a blocking call gives up (0: none).
    private let deadline = Atomic<UInt64>(0)

    var isStopping: Bool { stopping.load(ordering: .relaxed) }
    /// Whether a blocking call should give up now (stopped, hung up, or past the deadline).
    var isInterrupted: Bool {
        if stopping.load(ordering: .relaxed) || hungUp.load(ordering: .relaxed) { return true }
        let deadline = deadline.load(ordering: .relaxed)
        return deadline != 0 && clock.now() > deadline
    }
    func stop() { stopping.store(true, ordering: .relaxed) }
    func resume() { stopping.store(false, ordering: .relaxed) }
    /// Ends the current connection (the next one is not affected once `answer` is called).
    func hangUp() { hungUp.store(true, ordering: .relaxed) }
    var isHungUp: Bool { hungUp.load(ordering: .relaxed) }
    /// A new connection starts: a hang-up of the previous one no longer counts.
    func answer() { hungUp.store(false, ordering: .relaxed) }
    /// A blocking call from now on gives up after `seconds`.
    func arm(seconds: Double) { deadline.store(clock.now() + UInt64(seconds * 1e9), ordering: .relaxed) }

    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<PullInterrupt>.fromOpaque(opaque).takeUnretainedValue().isInterrupted ? 1 : 0
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}
