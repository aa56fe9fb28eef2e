import CFFmpeg

/// One libavcodec session, encoder or decoder: the one owner of codec contexts. Owns the codec context,
/// a reusable frame and a reusable packet, allocated together in `init` and freed only in `deinit`.
/// Users configure `context` (and fill `frame`), then `open` it; encoders go through `send` and
/// `receivePackets(making:)`, decoders through `decode(_:)`. Used by one thread at a time.
public final class CodecSession {
    public let codec: UnsafePointer<AVCodec>
    public let context: UnsafeMutablePointer<AVCodecContext>
    public let frame: UnsafeMutablePointer<AVFrame>
    public let packet: UnsafeMutablePointer<AVPacket>

    public init(codec: UnsafePointer<AVCodec>) throws(FFmpegError) {
        guard let context = avcodec_alloc_context3(codec) else { throw .outOfMemory("avcodec_alloc_context3") }
        var optionalContext: UnsafeMutablePointer<AVCodecContext>? = context
        var frame = av_frame_alloc()
        var packet = av_packet_alloc()
        guard let frame, let packet else {
            avcodec_free_context(&optionalContext)
            av_frame_free(&frame)
            av_packet_free(&packet)
            throw .outOfMemory("av_frame_alloc")
        }
        self.codec = codec
        self.context = context
        self.frame = frame
        self.packet = packet
    }

    /// A session for the encoder libavcodec knows as `name` (`libx264`, `aac`, `h264_vaapi`).
    public convenience init(encoderNamed name: String) throws(FFmpegError) {
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw FFmpegError(call: "avcodec_find_encoder_by_name", message: "\(name) is not available in this libavcodec")
        }
        try self.init(codec: codec)
    }

    /// A session for libavcodec's encoder (`decoder` false) or decoder of `id`.
    public convenience init(_ id: AVCodecID, decoder: Bool) throws(FFmpegError) {
        let found = decoder ? avcodec_find_decoder(id) : avcodec_find_encoder(id)
        guard let codec = found else {
            let name = avcodec_get_name(id).map { String(cString: $0) } ?? "codec \(id.rawValue)"
            throw FFmpegError(call: decoder ? "avcodec_find_decoder" : "avcodec_find_encoder", message: "libavcodec has no \(name) \(decoder ? "decoder" : "encoder")")
        }
        try self.init(codec: codec)
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
    public func setOptions(_ options: [(String, String)]) throws(FFmpegError) {
        for (key, value) in options {
            try check("av_opt_set(\(key)=\(value))", av_opt_set(context.pointee.priv_data, key, value, 0))
        }
    }

    /// Opens the codec; `description` goes into the error's call name (`avcodec_open2(<description>)`).
    public func open(_ description: String) throws(FFmpegError) {
        try check("avcodec_open2(\(description))", avcodec_open2(context, codec, nil))
    }

    /// The encoder's global header (extradata), copied.
    public var extradata: [UInt8] { copiedBytes(context.pointee.extradata, count: context.pointee.extradata_size) }

    // MARK: Encoding

    /// Sends `frame` to the encoder, or nil to start draining it (end of stream).
    public func send(_ frame: UnsafeMutablePointer<AVFrame>?) throws(FFmpegError) {
        if let frame {
            try check("avcodec_send_frame", avcodec_send_frame(context, frame))
        } else {
            try check("avcodec_send_frame(flush)", avcodec_send_frame(context, nil))
        }
    }

    /// Drains the packets that are ready, turning each into a value with `making` (the packet is
    /// unreferenced right after).
    public func receivePackets<Packet>(making: (UnsafeMutablePointer<AVPacket>) -> Packet) throws(FFmpegError) -> [Packet] {
        var packets: [Packet] = []
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == FFmpegError.tryAgain || result == FFmpegError.endOfFile { break }
            try check("avcodec_receive_packet", result)
            defer { av_packet_unref(packet) }
            packets.append(making(packet))
        }
        return packets
    }

    // MARK: Decoding

    /// Decodes one complete picture (a JPEG image): copies `bytes` into the packet, sends it and receives
    /// the picture into `frame`, which the caller reads and then unreferences (`av_frame_unref`). On a
    /// failure the decoder is flushed, ready for the next picture.
    public func decode(_ bytes: UnsafeRawBufferPointer) throws(FFmpegError) -> UnsafeMutablePointer<AVFrame> {
        av_packet_unref(packet)
        try check("av_new_packet(\(bytes.count))", av_new_packet(packet, Int32(bytes.count)))
        if let data = packet.pointee.data, let source = bytes.baseAddress {
            data.update(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        do {
            try check("avcodec_send_packet", sent)
            try check("avcodec_receive_frame", avcodec_receive_frame(context, frame))
        } catch {
            avcodec_flush_buffers(context)
            throw error
        }
        return frame
    }
}
