import Synchronization
import CFFmpeg
import MediaSupport
import StudioCore
import StudioSystem

/// Decides when libavformat must give up a blocking call. Read by `interruptCallback` on whatever
/// thread libavformat is blocked in (always the output's own thread), written by that thread and by
/// `MediaOutput.stop`; atomics only.
///
/// libavformat asks the callback before every buffer it hands to the protocol, so a per-operation
/// deadline also ends a write that merely follows a slow one: only network outputs use one (a slow disk
/// write must not end a recording); files are abandoned only by `stop` (the hard deadline).
final class InterruptState: Sendable {
    /// Monotonic ns after which the current operation is abandoned (0 = none).
    let operationDeadline = Atomic<UInt64>(0)
    /// Monotonic ns after which everything is abandoned (set by stop; 0 = none).
    let hardDeadline = Atomic<UInt64>(0)
    /// Stop asked while not connected: abandon connecting at once.
    let abortConnecting = Atomic<Bool>(false)
    let connecting = Atomic<Bool>(false)

    /// Arms the per-operation deadline; `nil` leaves the operation unbounded (only stop aborts it).
    func startOperation(seconds: Double?) {
        guard let seconds else { return }
        operationDeadline.store(MonotonicClock.now() + UInt64(max(0, seconds) * 1e9), ordering: .relaxed)
    }
    func endOperation() { operationDeadline.store(0, ordering: .relaxed) }

    var shouldInterrupt: Bool {
        let now = MonotonicClock.now()
        let operation = operationDeadline.load(ordering: .relaxed)
        if operation != 0, now > operation { return true }
        let hard = hardDeadline.load(ordering: .relaxed)
        if hard != 0, now > hard { return true }
        return connecting.load(ordering: .relaxed) && abortConnecting.load(ordering: .relaxed)
    }
}

/// AVIOInterruptCB callback: 1 stops the blocked libavformat call. Only reads atomics.
private let interruptCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
    guard let opaque else { return 0 }
    return Unmanaged<InterruptState>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt ? 1 : 0
}

/// One libavformat output context (one connection or one file): streams from the two descriptions,
/// the AVIOContext, header, packets, trailer. Owned by the output thread; freed in `close`/deinit.
final class Muxer {
    let video: StreamDescription
    /// nil: a file with video only (`MediaFileWriter`); the live outputs always carry audio.
    let audio: StreamDescription?
    /// A recording's second audio track (the source's own sound), stream 2; nil: none.
    let sourceAudio: StreamDescription?
    let isNetwork: Bool
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let interrupt: InterruptState
    /// Per-operation deadlines (nil: none, for files).
    private let ioTimeout: Double?
    private var headerWritten = false
    private var lastDts: [Int64] = [.min, .min, .min]

    /// Allocates the context and streams and opens the connection/file (blocking, bounded by
    /// `connectTimeout`), then writes the header. Each later write, flush and close is bounded by
    /// `ioTimeout`. A nil timeout sets no per-operation deadline (files: only `stop` aborts them).
    init(format: String, url: String, isNetwork: Bool, video: StreamDescription, audio: StreamDescription?,
         sourceAudio: StreamDescription? = nil, tags: [String: String] = [:], interrupt: InterruptState, connectTimeout: Double?,
         ioTimeout: Double?) throws(FFmpegError) {
        self.video = video
        self.audio = audio
        self.sourceAudio = audio == nil ? nil : sourceAudio
        self.isNetwork = isNetwork
        self.interrupt = interrupt
        self.ioTimeout = ioTimeout
        guard let packet = av_packet_alloc() else { throw .outOfMemory("av_packet_alloc") }
        self.packet = packet
        var context: UnsafeMutablePointer<AVFormatContext>?
        try check("avformat_alloc_output_context2(\(format))", avformat_alloc_output_context2(&context, nil, format, nil))
        guard let context else { throw FFmpegError(call: "avformat_alloc_output_context2", message: "no context") }
        self.context = context
        context.pointee.interrupt_callback = AVIOInterruptCB(callback: interruptCallback,
                                                             opaque: Unmanaged.passUnretained(interrupt).toOpaque())
        // Program time is written as is: never shifted to start at zero.
        context.pointee.avoid_negative_ts = 0  // AVFMT_AVOID_NEG_TS_DISABLED
        // Do not hold video for long waiting for audio (or the reverse) in the interleaver.
        context.pointee.max_interleave_delta = 1_000_000
        if isNetwork { context.pointee.flush_packets = 1 }
        // The file's own tags (Matroska: global SimpleTags), sorted so files compare.
        for (key, value) in tags.sorted(by: { $0.key < $1.key }) { av_dict_set(&context.pointee.metadata, key, value, 0) }

        try addStream(video)
        if let audio { try addStream(audio) }
        if let sourceAudio = self.sourceAudio { try addStream(sourceAudio) }

        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if isNetwork, let ioTimeout {
            // µs without progress before a read/write fails. (The rtmp protocol's own `timeout` option is
            // a listen timeout and must not be set.)
            av_dict_set(&options, "rw_timeout", String(Int(ioTimeout * 1e6)), 0)
        }
        interrupt.connecting.store(true, ordering: .relaxed)
        interrupt.startOperation(seconds: connectTimeout)
        defer {
            interrupt.endOperation()
            interrupt.connecting.store(false, ordering: .relaxed)
        }
        try check("avio_open2", avio_open2(&context.pointee.pb, url, AVIO_FLAG_WRITE, &context.pointee.interrupt_callback, &options))
        var muxerOptions: OpaquePointer?
        defer { av_dict_free(&muxerOptions) }
        if format == "flv" && isNetwork { av_dict_set(&muxerOptions, "flvflags", "no_duration_filesize", 0) }
        // Matroska writes a cluster only when it closes it; clusters of at most one second (instead of
        // up to 5 s, or a whole GOP) bound what a killed server loses from a recording, and of at most
        // 1 MiB the memory each file holds for its open cluster (an MJPEG ISO makes 3-4 MB a second).
        if format == "matroska" {
            av_dict_set(&muxerOptions, "cluster_time_limit", "1000", 0)
            av_dict_set(&muxerOptions, "cluster_size_limit", "1048576", 0)
        }
        try check("avformat_write_header", avformat_write_header(context, &muxerOptions))
        headerWritten = true
    }

    deinit {
        close(writeTrailer: false)
        var optionalPacket: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&optionalPacket)
    }

    private func addStream(_ description: StreamDescription) throws(FFmpegError) {
        guard let context, let stream = avformat_new_stream(context, nil) else {
            throw .outOfMemory("avformat_new_stream")
        }
        let parameters = stream.pointee.codecpar!
        switch description.kind {
        case .video:
            parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            parameters.pointee.codec_id = switch description.codec {
            case .mjpeg: AV_CODEC_ID_MJPEG
            case .hevc: AV_CODEC_ID_HEVC
            case .h264, .aac: AV_CODEC_ID_H264
            }
            parameters.pointee.width = Int32(description.width)
            parameters.pointee.height = Int32(description.height)
            stream.pointee.avg_frame_rate = AVRational(num: description.frameRate.numerator, den: description.frameRate.denominator)
        case .audio:
            parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            parameters.pointee.codec_id = AV_CODEC_ID_AAC
            parameters.pointee.sample_rate = Int32(description.sampleRate)
            av_channel_layout_default(&parameters.pointee.ch_layout, Int32(description.channels))
            parameters.pointee.frame_size = 1024
        }
        parameters.pointee.bit_rate = Int64(description.bitRate)
        stream.pointee.time_base = AVRational(num: 1, den: 1000)
        if description.kind == .audio {
            // The program's sound is the default track; a source's own is there to choose.
            stream.pointee.disposition = description.track == 0 ? AV_DISPOSITION_DEFAULT : 0
            if let title = description.title { av_dict_set(&stream.pointee.metadata, "title", title, 0) }
        }
        try setExtradata(parameters, description.extradata)
    }

    private func setExtradata(_ parameters: UnsafeMutablePointer<AVCodecParameters>, _ bytes: [UInt8]) throws(FFmpegError) {
        guard !bytes.isEmpty else { return }
        guard let memory = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw .outOfMemory("av_mallocz")
        }
        memory.copyMemory(from: bytes, byteCount: bytes.count)
        parameters.pointee.extradata = memory.assumingMemoryBound(to: UInt8.self)
        parameters.pointee.extradata_size = Int32(bytes.count)
    }

    /// Writes one packet. `newExtradata` rides along as AV_PKT_DATA_NEW_EXTRADATA, which makes the FLV
    /// muxer send a fresh sequence header (AVC or AAC) before the packet. Returns false when the packet
    /// was refused because its dts would go backwards on its stream (it is not written).
    func write(_ media: EncodedPacket, newExtradata: [UInt8]? = nil) throws(FFmpegError) -> Bool {
        guard let context else { throw FFmpegError(call: "av_interleaved_write_frame", message: "muxer closed") }
        let index = media.kind == .video ? 0 : 1 + min(1, max(0, media.track))
        guard index < Int(context.pointee.nb_streams) else {
            throw FFmpegError(call: "av_interleaved_write_frame", message: "this file has no \(media.kind.rawValue) stream")
        }
        let stream = context.pointee.streams[index]!
        let timeBase = stream.pointee.time_base
        let microseconds = AVRational(num: 1, den: 1_000_000)
        let dts = av_rescale_q_rnd(media.dts.microseconds, microseconds, timeBase, AV_ROUND_DOWN)
        guard dts > lastDts[index] else { return false }
        av_packet_unref(packet)
        try check("av_new_packet", av_new_packet(packet, Int32(media.data.count)))
        media.data.withUnsafeBytes { source in
            if let base = source.baseAddress { packet.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: source.count) }
        }
        packet.pointee.stream_index = Int32(index)
        packet.pointee.dts = dts
        packet.pointee.pts = max(dts, av_rescale_q_rnd(media.pts.microseconds, microseconds, timeBase, AV_ROUND_DOWN))
        packet.pointee.duration = av_rescale_q(media.duration.microseconds, microseconds, timeBase)
        if media.isKeyframe { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        if let newExtradata, !newExtradata.isEmpty {
            guard let side = av_packet_new_side_data(packet, AV_PKT_DATA_NEW_EXTRADATA, newExtradata.count) else {
                throw .outOfMemory("av_packet_new_side_data")
            }
            side.update(from: newExtradata, count: newExtradata.count)
        }
        interrupt.startOperation(seconds: ioTimeout)
        defer { interrupt.endOperation() }
        if isNetwork {
            // Straight to the wire: libavformat's interleaver would hold each video packet until an audio
            // packet with a later dts came, and the program audio runs `ProgramAudio.lag` (0.1 s) plus
            // the AAC encoder behind the clock, so every frame waited for that (docs/latency.md). FLV needs
            // no interleaving: each tag carries its own timestamp,
            // each stream's dts still only grows (checked above), and players sync by timestamp.
            try check("av_write_frame", av_write_frame(context, packet))
        } else {
            // Files keep the interleaver: Matroska clusters want their blocks in time order.
            try check("av_interleaved_write_frame", av_interleaved_write_frame(context, packet))
        }
        lastDts[index] = dts
        return true
    }

    /// Pushes what libavformat has buffered to the file or socket (recordings: at each keyframe and every
    /// half second, so a killed server leaves all but about the last 1.5 s on disk).
    /// Throws the write error when the buffer did not reach the file.
    func flush() throws(FFmpegError) {
        guard let pb = context?.pointee.pb else { return }
        interrupt.startOperation(seconds: ioTimeout)
        defer { interrupt.endOperation() }
        avio_flush(pb)
        try check("avio_flush", pb.pointee.error)
    }

    /// Pushes everything written so far into the file: the interleaving queue, the muxer's own buffer
    /// (Matroska's open cluster) and libavformat's I/O buffer. Throws the write error when it did not all
    /// reach the file (a full disk): opening a file and writing its header and a keyframe "succeed" while
    /// they are only buffered, so a recording knows its file holds media only after this.
    func flushAll() throws(FFmpegError) {
        guard let context, let pb = context.pointee.pb else { throw FFmpegError(call: "avio_flush", message: "muxer closed") }
        interrupt.startOperation(seconds: ioTimeout)
        defer { interrupt.endOperation() }
        try check("av_interleaved_write_frame(flush)", av_interleaved_write_frame(context, nil))
        // 1 means the format keeps nothing of its own (FLV); Matroska closes its cluster.
        try check("av_write_frame(flush)", av_write_frame(context, nil))
        avio_flush(pb)
        try check("avio_flush", pb.pointee.error)
    }

    /// Where the next byte goes in the output (after a successful flush: how much of the file is on
    /// disk, ending between two Matroska clusters or FLV tags); nil when closed.
    var position: Int64? {
        guard let pb = context?.pointee.pb else { return nil }
        let offset = avio_seek(pb, 0, SEEK_CUR)
        return offset >= 0 ? offset : nil
    }

    /// Bytes handed to the protocol so far (kept after close).
    var bytesWritten: Int64 {
        if let pb = context?.pointee.pb { finalBytes = pb.pointee.bytes_written }
        return finalBytes
    }
    private var finalBytes: Int64 = 0

    /// Ends a file for good: writes the trailer and pushes everything to the file, then closes it. Throws
    /// when any of it did not reach the file (a full disk), unlike `close`, which is best effort.
    func finish() throws(FFmpegError) {
        guard let context else { throw FFmpegError(call: "av_write_trailer", message: "muxer closed") }
        interrupt.startOperation(seconds: ioTimeout)
        defer { interrupt.endOperation() }
        if headerWritten { try check("av_write_trailer", av_write_trailer(context)) }
        headerWritten = false
        if let pb = context.pointee.pb {
            avio_flush(pb)
            try check("avio_flush", pb.pointee.error)
        }
        close(writeTrailer: false)
    }

    /// Writes the trailer (if asked and the header went out), closes the connection/file and frees the
    /// context. Bounded by the I/O timeout (networks) and by stop's hard deadline. Safe to call twice.
    func close(writeTrailer: Bool) {
        guard let context else { return }
        interrupt.startOperation(seconds: ioTimeout)
        defer { interrupt.endOperation() }
        if writeTrailer && headerWritten { av_write_trailer(context) }
        if let pb = context.pointee.pb {
            avio_flush(pb)
            finalBytes = pb.pointee.bytes_written
            avio_closep(&context.pointee.pb)
        }
        avformat_free_context(context)
        self.context = nil
    }
}
