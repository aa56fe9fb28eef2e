import CFFmpeg
import StudioCore

/// One libavcodec encoding session: owns the codec context, a reusable frame and a reusable packet,
/// allocated together in `init` and freed only in `deinit`. The encoders configure `context` and
/// fill `frame`, then go through `open`, `send` and `receivePackets(making:)`.
final class CodecSession {
    let codec: UnsafePointer<AVCodec>
    let context: UnsafeMutablePointer<AVCodecContext>
    let frame: UnsafeMutablePointer<AVFrame>
    let packet: UnsafeMutablePointer<AVPacket>

    init(codec: UnsafePointer<AVCodec>) throws(CodecError) {
        guard let context = avcodec_alloc_context3(codec) else {
            throw CodecError(call: "avcodec_alloc_context3", code: cff_averror(ENOMEM))
        }
        var optionalContext: UnsafeMutablePointer<AVCodecContext>? = context
        var frame = av_frame_alloc()
        var packet = av_packet_alloc()
        guard let frame, let packet else {
            avcodec_free_context(&optionalContext)
            av_frame_free(&frame)
            av_packet_free(&packet)
            throw CodecError(call: "av_frame_alloc", code: cff_averror(ENOMEM))
        }
        self.codec = codec
        self.context = context
        self.frame = frame
        self.packet = packet
    }

    deinit {
        var optionalContext: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&optionalContext)
        var optionalFrame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&optionalFrame)
        var optionalPacket: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&optionalPacket)
    }

    /// Sets the codec's private options in order; the first failure throws with the option in the call name.
    func setOptions(_ options: [(String, String)]) throws(CodecError) {
        for (key, value) in options {
            try check("av_opt_set(\(key)=\(value))", av_opt_set(context.pointee.priv_data, key, value, 0))
        }
    }

    /// Opens the encoder; `description` goes into the error's call name (`avcodec_open2(<description>)`).
    func open(_ description: String) throws(CodecError) {
        try check("avcodec_open2(\(description))", avcodec_open2(context, codec, nil))
    }

    /// The encoder's global header (extradata), copied.
    var extradata: [UInt8] { bytes(context.pointee.extradata, count: context.pointee.extradata_size) }

    /// Sends `frame` to the encoder, or nil to start draining it (end of stream).
    func send(_ frame: UnsafeMutablePointer<AVFrame>?) throws(CodecError) {
        if let frame {
            try check("avcodec_send_frame", avcodec_send_frame(context, frame))
        } else {
            try check("avcodec_send_frame(flush)", avcodec_send_frame(context, nil))
        }
    }

    /// Drains the packets that are ready, turning each into an `EncodedPacket` with `making` (the
    /// packet is unreferenced right after).
    func receivePackets(making: (UnsafeMutablePointer<AVPacket>) -> EncodedPacket) throws(CodecError) -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == CodecError.tryAgain || result == CodecError.endOfFile { break }
            try check("avcodec_receive_packet", result)
            defer { av_packet_unref(packet) }
            packets.append(making(packet))
        }
        return packets
    }

    /// Drains the ready packets as MP4-style (4-byte length-prefixed) H.264 packets on the
    /// one-tick-per-frame time base. Shared by the H.264 encoders.
    func receiveMP4Packets(rate: Rational, generation: Int) throws(CodecError) -> [EncodedPacket] {
        try receivePackets { packet in
            let pts = packet.pointee.pts
            let dts = packet.pointee.dts == cff_nopts_value() ? pts : packet.pointee.dts
            return EncodedPacket(
                kind: .video, data: AVCFormat.lengthPrefixed(annexB: bytes(packet.pointee.data, count: packet.pointee.size)),
                pts: MediaTime(count: pts, rate: rate), dts: MediaTime(count: dts, rate: rate),
                duration: MediaTime(count: 1, rate: rate),
                isKeyframe: packet.pointee.flags & AV_PKT_FLAG_KEY != 0, generation: generation)
        }
    }
}
