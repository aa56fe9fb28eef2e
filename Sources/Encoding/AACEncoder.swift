import CFFmpeg
import StudioCore

/// AAC-LC through FFmpeg's native `aac` encoder: planar float input in 1024-sample frames, global
/// header (AudioSpecificConfig in `streamDescription.extradata`).
///
/// Incoming interleaved chunks of any size are buffered; each encoder frame's pts is its first
/// sample's index on the program's audio timeline, so timestamps never drift. A gap in the sample
/// index up to one second is filled with silence; a longer gap restarts the timeline at the new index;
/// samples that overlap what was already taken are skipped. Packet timestamps are libavcodec's: the
/// first packet carries the encoder delay (priming) and sits 1024 samples before the first input sample.
public final class AACEncoder {
    public let format: AudioFormat
    public let streamDescription: StreamDescription
    /// Samples per channel in one AAC frame (1024).
    public let frameSize: Int

    // Owned here, freed in deinit.
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// Buffered samples per channel, starting at sample index `pendingStart`.
    private var pending: [[Float]]
    private var pendingStart: Int64?
    private var flushed = false

    public init(format: AudioFormat = .program, bitRate: Int = 128_000) throws {
        guard format.sampleRate > 0, (1...8).contains(format.channels), bitRate > 0 else {
            throw CodecError(call: "AACEncoder", message: "unsupported audio format \(format.sampleRate) Hz x\(format.channels), \(bitRate) b/s")
        }
        guard let codec = avcodec_find_encoder_by_name("aac") else {
            throw CodecError(call: "avcodec_find_encoder_by_name", message: "aac encoder is not available")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw CodecError(call: "avcodec_alloc_context3", code: cff_averror(ENOMEM))
        }
        var frame = av_frame_alloc()
        var packet = av_packet_alloc()
        func release() {
            var optionalContext: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&optionalContext)
            av_frame_free(&frame)
            av_packet_free(&packet)
        }
        guard let frame, let packet else {
            release()
            throw CodecError(call: "av_frame_alloc", code: cff_averror(ENOMEM))
        }
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(format.channels))
        context.pointee.bit_rate = Int64(bitRate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        do {
            try check("avcodec_open2(aac)", avcodec_open2(context, codec, nil))
        } catch {
            release()
            throw error
        }
        self.format = format
        self.context = context
        self.frame = frame
        self.packet = packet
        frameSize = Int(context.pointee.frame_size > 0 ? context.pointee.frame_size : 1024)
        pending = Array(repeating: [], count: format.channels)
        streamDescription = StreamDescription(
            kind: .audio, codec: .aac, sampleRate: format.sampleRate, channels: format.channels, bitRate: bitRate,
            extradata: bytes(context.pointee.extradata, count: context.pointee.extradata_size), encoderName: "aac")
    }

    deinit {
        var optionalContext: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&optionalContext)
        var optionalFrame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&optionalFrame)
        var optionalPacket: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&optionalPacket)
    }

    public var name: String { "aac" }
    /// Samples per channel waiting for a full frame.
    public var bufferedSamples: Int { pending.first?.count ?? 0 }

    public func encode(_ chunk: AudioChunk) throws -> [EncodedPacket] {
        guard !flushed else { throw CodecError(call: "AACEncoder.encode", message: "encoder already flushed") }
        guard chunk.format == format, chunk.samples.count % format.channels == 0 else {
            throw CodecError(call: "AACEncoder.encode",
                             message: "chunk \(chunk.format.sampleRate) Hz x\(chunk.format.channels) (\(chunk.samples.count) samples) does not match \(format.sampleRate) Hz x\(format.channels)")
        }
        var packets: [EncodedPacket] = []
        let start = chunk.firstSample
        let expected = (pendingStart ?? start) + Int64(bufferedSamples)
        if pendingStart == nil { pendingStart = start }
        var skip = 0
        if start > expected {
            let gap = start - expected
            if gap <= Int64(format.sampleRate) {
                for channel in pending.indices { pending[channel].append(contentsOf: repeatElement(0, count: Int(gap))) }
            } else {
                packets += try encodeFullFrames()
                packets += try encodePartialFrame(padded: true)
                pendingStart = start
            }
        } else if start < expected {
            skip = Int(min(expected - start, Int64(chunk.frameCount)))
        }
        let channels = format.channels
        chunk.samples.withUnsafeBufferPointer { samples in
            for channel in 0..<channels {
                pending[channel].reserveCapacity(pending[channel].count + chunk.frameCount - skip)
                for index in skip..<chunk.frameCount { pending[channel].append(samples[index * channels + channel]) }
            }
        }
        packets += try encodeFullFrames()
        return packets
    }

    /// End of stream: encodes what is buffered (a short last frame) and drains the encoder.
    public func flush() throws -> [EncodedPacket] {
        guard !flushed else { return [] }
        var packets = try encodeFullFrames()
        packets += try encodePartialFrame(padded: false)
        flushed = true
        try check("avcodec_send_frame(flush)", avcodec_send_frame(context, nil))
        packets += try receivePackets()
        return packets
    }

    private func encodeFullFrames() throws -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        while bufferedSamples >= frameSize { packets += try sendFrame(count: frameSize) }
        return packets
    }

    private func encodePartialFrame(padded: Bool) throws -> [EncodedPacket] {
        let count = bufferedSamples
        guard count > 0 else { return [] }
        if padded {
            for channel in pending.indices { pending[channel].append(contentsOf: repeatElement(0, count: frameSize - count)) }
            return try sendFrame(count: frameSize)
        }
        return try sendFrame(count: count)
    }

    private func sendFrame(count: Int) throws -> [EncodedPacket] {
        av_frame_unref(frame)
        frame.pointee.nb_samples = Int32(count)
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = Int32(format.sampleRate)
        try check("av_channel_layout_copy", av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout))
        try check("av_frame_get_buffer", av_frame_get_buffer(frame, 0))
        for channel in 0..<format.channels {
            let destination = UnsafeMutableRawPointer(cff_frame_plane(frame, Int32(channel))!).assumingMemoryBound(to: Float.self)
            pending[channel].withUnsafeBufferPointer { source in
                destination.update(from: source.baseAddress!, count: count)
            }
            pending[channel].removeFirst(count)
        }
        frame.pointee.pts = pendingStart ?? 0
        pendingStart = (pendingStart ?? 0) + Int64(count)
        defer { av_frame_unref(frame) }
        try check("avcodec_send_frame", avcodec_send_frame(context, frame))
        return try receivePackets()
    }

    private func receivePackets() throws -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        let rate = Rational(Int32(format.sampleRate))
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == CodecError.tryAgain || result == CodecError.endOfFile { break }
            try check("avcodec_receive_packet", result)
            defer { av_packet_unref(packet) }
            let pts = packet.pointee.pts
            let dts = packet.pointee.dts == cff_nopts_value() ? pts : packet.pointee.dts
            packets.append(EncodedPacket(
                kind: .audio, data: bytes(packet.pointee.data, count: packet.pointee.size),
                pts: MediaTime(count: pts, rate: rate), dts: MediaTime(count: dts, rate: rate),
                duration: MediaTime(count: packet.pointee.duration, rate: rate), isKeyframe: true,
                generation: streamDescription.generation))
        }
        return packets
    }
}
