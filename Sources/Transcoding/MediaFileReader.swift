import CFFmpeg
import MediaSupport
import StudioCore

/// One recording file opened with libavformat for reading: its first video stream and its first audio
/// stream, and their packets in file order with their timestamps as `MediaTime` (the program time the
/// recording wrote). Owns the demuxer context and a packet; freed in deinit. One thread at a time.
final class MediaFileReader {
    struct VideoStream {
        var index: Int
        var codecID: AVCodecID
        var width: Int
        var height: Int
        /// The rate of the frame grid the file's frames sit on (snapped: see `gridRate`); nil when unknown.
        var frameRate: Rational?
    }

    struct AudioStream {
        var index: Int
        var codecID: AVCodecID
        var sampleRate: Int
        var channels: Int
        var bitRate: Int
        var extradata: [UInt8]
    }

    /// One packet: its stream's kind, bytes and times.
    struct Packet {
        var kind: MediaKind
        var data: [UInt8]
        var pts: MediaTime
        var dts: MediaTime
        var duration: MediaTime
        var isKeyframe: Bool
    }

    let video: VideoStream?
    let audio: AudioStream?
    /// The whole file's duration, when the container says (a killed server's Matroska file does not).
    let duration: MediaTime?
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let packet: UnsafeMutablePointer<AVPacket>

    init(path: String) throws(FFmpegError) {
        guard let packet = av_packet_alloc() else { throw .outOfMemory("av_packet_alloc") }
        self.packet = packet
        var context: UnsafeMutablePointer<AVFormatContext>?
        do {
            try check("avformat_open_input", avformat_open_input(&context, path, nil, nil))
            try check("avformat_find_stream_info", avformat_find_stream_info(context, nil))
        } catch {
            avformat_close_input(&context)
            var optional: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&optional)
            throw error
        }
        let opened = context!
        self.context = opened
        var video: VideoStream?
        var audio: AudioStream?
        for index in 0..<Int(opened.pointee.nb_streams) {
            let stream = opened.pointee.streams[index]!
            let parameters = stream.pointee.codecpar.pointee
            if parameters.codec_type == AVMEDIA_TYPE_VIDEO, video == nil {
                let guessed = av_guess_frame_rate(opened, stream, nil)
                video = VideoStream(index: index, codecID: parameters.codec_id, width: Int(parameters.width),
                                    height: Int(parameters.height), frameRate: Self.gridRate(guessed))
            } else if parameters.codec_type == AVMEDIA_TYPE_AUDIO, audio == nil {
                audio = AudioStream(index: index, codecID: parameters.codec_id, sampleRate: Int(parameters.sample_rate),
                                    channels: Int(parameters.ch_layout.nb_channels), bitRate: Int(parameters.bit_rate),
                                    extradata: copiedBytes(parameters.extradata, count: parameters.extradata_size))
            }
        }
        self.video = video
        self.audio = audio
        let total = opened.pointee.duration
        duration = total > 0 && total != cff_nopts_value() ? MediaTime(microseconds: total) : nil
    }

    deinit {
        avformat_close_input(&context)
        var optional: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&optional)
    }

    /// The file's first timestamp (its program time), when the container says.
    var startTime: MediaTime? {
        guard let start = context?.pointee.start_time, start != cff_nopts_value() else { return nil }
        return MediaTime(microseconds: start)
    }

    /// The next packet of the video or audio stream (others are skipped); nil at the end of the file.
    /// Throws when reading fails before the end (a file cut short by a killed server ends that way).
    func next() throws(FFmpegError) -> Packet? {
        guard let context else { return nil }
        while true {
            av_packet_unref(packet)
            let result = av_read_frame(context, packet)
            if result == FFmpegError.endOfFile { return nil }
            try check("av_read_frame", result)
            let index = Int(packet.pointee.stream_index)
            let kind: MediaKind
            if index == video?.index { kind = .video } else if index == audio?.index { kind = .audio } else { continue }
            let timeBase = context.pointee.streams[index]!.pointee.time_base
            let microseconds = AVRational(num: 1, den: 1_000_000)
            let time = { (value: Int64) in MediaTime(microseconds: av_rescale_q(value, timeBase, microseconds)) }
            let pts = packet.pointee.pts == cff_nopts_value() ? packet.pointee.dts : packet.pointee.pts
            guard pts != cff_nopts_value() else { continue }  // nothing to place it by
            let dts = packet.pointee.dts == cff_nopts_value() ? pts : packet.pointee.dts
            return Packet(kind: kind, data: copiedBytes(packet.pointee.data, count: packet.pointee.size),
                          pts: time(pts), dts: time(dts), duration: time(packet.pointee.duration),
                          isKeyframe: packet.pointee.flags & AV_PKT_FLAG_KEY != 0)
        }
    }

    /// The frame rate a recording's grid runs at, from libavformat's guess: a container stores the
    /// frame duration rounded (Matroska: to the ns), so a guess near a whole rate or an NTSC rate
    /// (N*1000/1001) is that rate exactly; anything else is taken as guessed. nil when there is none.
    static func gridRate(_ guessed: AVRational) -> Rational? {
        guard guessed.num > 0, guessed.den > 0 else { return nil }
        let fps = Double(guessed.num) / Double(guessed.den)
        let whole = fps.rounded()
        if whole >= 1, abs(fps - whole) / whole < 0.0005 { return Rational(Int32(whole)) }
        let ntsc = (fps * 1.001).rounded()
        if ntsc >= 1, abs(fps - ntsc / 1.001) / fps < 0.0005 { return Rational(Int32(ntsc) * 1000, 1001) }
        return Rational(guessed.num, guessed.den)
    }
}
