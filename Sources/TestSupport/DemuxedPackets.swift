import CFFmpeg
import MediaSupport

/// Every packet of a media file as libavformat demuxes it, with its bytes: for checking that a
/// recording holds exactly what a source sent (a passthrough ISO's JPEG frames). A file cut short (a
/// killed server's) is read up to where it stops making sense; `readError` says why reading ended
/// early, nil when the file was read to its end.
public struct DemuxedPackets: Sendable {
    public struct Packet: Sendable {
        public var streamIndex: Int
        public var ptsMilliseconds: Double?
        public var isKeyframe: Bool
        public var bytes: [UInt8]
    }
    public struct Stream: Sendable {
        /// `mjpeg`, `h264`, `aac`...
        public var codecName: String
        public var isVideo: Bool
        public var width: Int
        public var height: Int
    }

    public var streams: [Stream]
    public var packets: [Packet]
    public var readError: String?

    public var video: Stream? { streams.first(where: \.isVideo) }
    /// The video stream's packets, in file order.
    public var videoPackets: [Packet] {
        guard let index = streams.firstIndex(where: \.isVideo) else { return [] }
        return packets.filter { $0.streamIndex == index }
    }

    public init(path: String) throws {
        var context: UnsafeMutablePointer<AVFormatContext>?
        try check("avformat_open_input(\(path))", avformat_open_input(&context, path, nil, nil))
        defer { avformat_close_input(&context) }
        guard let context else { throw FFmpegError(call: "avformat_open_input", message: "no context") }
        try check("avformat_find_stream_info", avformat_find_stream_info(context, nil))
        streams = (0..<Int(context.pointee.nb_streams)).map { index in
            let parameters = context.pointee.streams[index]!.pointee.codecpar!.pointee
            return Stream(codecName: String(cString: avcodec_get_name(parameters.codec_id)),
                          isVideo: parameters.codec_type == AVMEDIA_TYPE_VIDEO,
                          width: Int(parameters.width), height: Int(parameters.height))
        }
        guard let packet = av_packet_alloc() else { throw FFmpegError.outOfMemory("av_packet_alloc") }
        defer {
            var optional: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&optional)
        }
        packets = []
        readError = nil
        while true {
            let result = av_read_frame(context, packet)
            if result < 0 {
                if result != FFmpegError.endOfFile { readError = FFmpegError(call: "av_read_frame", code: result).description }
                break
            }
            let stream = context.pointee.streams[Int(packet.pointee.stream_index)]!.pointee
            let timeBase = av_q2d(stream.time_base)
            let pts = packet.pointee.pts == cff_nopts_value() ? nil : Double(packet.pointee.pts) * timeBase * 1000
            packets.append(Packet(streamIndex: Int(packet.pointee.stream_index), ptsMilliseconds: pts,
                                  isKeyframe: packet.pointee.flags & AV_PKT_FLAG_KEY != 0,
                                  bytes: copiedBytes(packet.pointee.data, count: packet.pointee.size)))
            av_packet_unref(packet)
        }
    }
}
