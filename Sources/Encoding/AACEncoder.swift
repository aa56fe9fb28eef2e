import CFFmpeg
import MediaSupport
import StudioCore

/// AAC-LC through FFmpeg's native `aac` encoder: planar float input in 1024-sample frames, global
/// header (AudioSpecificConfig in `streamDescription.extradata`).
///
/// Incoming interleaved chunks of any size are buffered; each encoder frame's pts is its first
/// sample's index on the program's audio timeline, so timestamps never drift. A gap in the sample
/// index up to `maximumSilenceFill` is filled with silence, so the AAC stream stays continuous (FLV
/// players and most others drive their clock from the audio and stumble over an audio timestamp gap):
/// chunks the encoding stage's queue dropped (in the burst of silence after a stall of the whole
/// process, see `AudioClock`) become the silence they would have been. A longer gap restarts the
/// timeline at the new index; samples that overlap what was already taken are skipped. Packet timestamps are libavcodec's: the
/// first packet carries the encoder delay (priming) and sits 1024 samples before the first input sample.
public final class AACEncoder {
    public let format: AudioFormat
    public let streamDescription: StreamDescription
    /// Samples per channel in one AAC frame (1024).
    public let frameSize: Int

    /// The codec context, frame and packet (freed when the session goes).
    private let session: CodecSession
    /// Buffered samples per channel, starting at sample index `pendingStart`.
    private var pending: [[Float]]
    private var pendingStart: Int64?
    private var flushed = false
    /// Frames handed to libavcodec so far (full, padded or the last short one).
    private(set) var framesSent = 0

    public init(format: AudioFormat = .program, bitRate: Int = 128_000) throws {
        guard format.sampleRate > 0, (1...8).contains(format.channels), bitRate > 0 else {
            throw FFmpegError(call: "AACEncoder", message: "unsupported audio format \(format.sampleRate) Hz x\(format.channels), \(bitRate) b/s")
        }
        let session = try CodecSession(encoderNamed: "aac")
        let context = session.context
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(format.channels))
        context.pointee.bit_rate = Int64(bitRate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        try session.open("aac")
        self.format = format
        self.session = session
        frameSize = Int(context.pointee.frame_size > 0 ? context.pointee.frame_size : 1024)
        pending = Array(repeating: [], count: format.channels)
        streamDescription = StreamDescription(
            kind: .audio, codec: .aac, sampleRate: format.sampleRate, channels: format.channels, bitRate: bitRate,
            extradata: session.extradata, encoderName: "aac")
    }

    /// The longest gap filled with silence, in seconds: a minute of silence costs about 0.2 s of one
    /// core to encode, so catching up never holds the audio stage long.
    public static let maximumSilenceFill = 60.0

    public var name: String { "aac" }
    /// Samples per channel waiting for a full frame.
    public var bufferedSamples: Int { pending.first?.count ?? 0 }

    public func encode(_ chunk: AudioChunk) throws -> [EncodedPacket] {
        guard !flushed else { throw FFmpegError(call: "AACEncoder.encode", message: "encoder already flushed") }
        guard chunk.format == format, chunk.samples.count % format.channels == 0 else {
            throw FFmpegError(call: "AACEncoder.encode",
                             message: "chunk \(chunk.format.sampleRate) Hz x\(chunk.format.channels) (\(chunk.samples.count) samples) does not match \(format.sampleRate) Hz x\(format.channels)")
        }
        var packets: [EncodedPacket] = []
        let start = chunk.firstSample
        let expected = (pendingStart ?? start) + Int64(bufferedSamples)
        if pendingStart == nil { pendingStart = start }
        var skip = 0
        if start > expected {
            var gap = start - expected
            if gap <= Int64(Double(format.sampleRate) * Self.maximumSilenceFill) {
                // A frame at a time, so a long gap never sits in the buffer whole.
                while gap > 0 {
                    let count = min(gap, Int64(frameSize))
                    for channel in pending.indices { pending[channel].append(contentsOf: repeatElement(0, count: Int(count))) }
                    gap -= count
                    packets += try encodeFullFrames()
                }
            } else {
                packets += try encodeFullFrames()
                packets += try encodePartialFrame(padded: true)
                pendingStart = start
            }
        } else if start < expected {
            skip = Int(min(expected - start, Int64(chunk.frameCount)))
        }
        let channels = format.channels
        let frames = chunk.frameCount - skip
        chunk.samples.withUnsafeBufferPointer { samples in
            // Planar, as the encoder takes it: each channel's samples copied out of the interleaved chunk
            // into room made at the end of its buffer in one step.
            for channel in 0..<channels where frames > 0 {
                let end = pending[channel].count
                pending[channel].append(contentsOf: repeatElement(0, count: frames))
                pending[channel].withUnsafeMutableBufferPointer { buffer in
                    var source = samples.baseAddress! + skip * channels + channel
                    var destination = buffer.baseAddress! + end
                    for _ in 0..<frames {
                        destination.pointee = source.pointee
                        source += channels
                        destination += 1
                    }
                }
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
        try session.send(nil)
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
        let frame = session.frame
        av_frame_unref(frame)
        frame.pointee.nb_samples = Int32(count)
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = Int32(format.sampleRate)
        try check("av_channel_layout_copy", av_channel_layout_copy(&frame.pointee.ch_layout, &session.context.pointee.ch_layout))
        try check("av_frame_get_buffer", av_frame_get_buffer(frame, 0))
        for channel in 0..<format.channels {
            let destination = UnsafeMutableRawPointer(cff_frame_plane(frame, Int32(channel))!).assumingMemoryBound(to: Float.self)
            pending[channel].withUnsafeBufferPointer { source in
                destination.update(from: source.baseAddress!, count: count)
            }
            pending[channel].removeFirst(count)
        }
        frame.pointee.pts = pendingStart ?? 0
        framesSent += 1
        pendingStart = (pendingStart ?? 0) + Int64(count)
        defer { av_frame_unref(frame) }
        try session.send(frame)
        return try receivePackets()
    }

    private func receivePackets() throws -> [EncodedPacket] {
        let rate = Rational(Int32(format.sampleRate))
        let generation = streamDescription.generation
        return try session.receivePackets { packet in
            let pts = packet.pointee.pts
            let dts = packet.pointee.dts == cff_nopts_value() ? pts : packet.pointee.dts
            return EncodedPacket(
                kind: .audio, data: copiedBytes(packet.pointee.data, count: packet.pointee.size),
                pts: MediaTime(count: pts, rate: rate), dts: MediaTime(count: dts, rate: rate),
                duration: MediaTime(count: packet.pointee.duration, rate: rate), isKeyframe: true,
                generation: generation)
        }
    }
}

/// Which of the chunks handed to an `AACEncoder` complete one of its frames (`frameSize` samples on the
/// encoder's timeline: from the first chunk's first sample on, across gaps it fills with silence,
/// restarted after a longer gap, as `encode` counts them). Only those make packets; the others only
/// fill the encoder's buffer. The audio stage wakes its thread for those and for anything off the
/// timeline (a gap, an overlap), so with 10 ms chunks and 1024-sample frames its thread wakes 47 times
/// a second, not 100, and every packet leaves as early as before.
struct FrameCompletion {
    let frameSize: Int
    let sampleRate: Int
    /// The timeline's first sample, and the sample after the newest chunk's last.
    private var origin: Int64?
    private var expected: Int64 = 0

    init(frameSize: Int, sampleRate: Int) {
        self.frameSize = max(1, frameSize)
        self.sampleRate = sampleRate
    }

    /// Whether `chunk`, the next handed to the encoder, completes a frame (or is off the timeline).
    mutating func completesFrame(_ chunk: AudioChunk) -> Bool {
        let start = chunk.firstSample, end = start + Int64(chunk.frameCount), size = Int64(frameSize)
        defer { expected = max(expected, end) }
        guard let origin else {
            self.origin = start
            return end - start >= size
        }
        if start != expected {
            // A gap longer than the encoder fills restarts its timeline there.
            if start - expected > Int64(AACEncoder.maximumSilenceFill * Double(sampleRate)) { self.origin = start }
            return true
        }
        // The frame the previous chunk ended in is complete once this one reaches its end.
        let done = { (sample: Int64) in sample > origin ? (sample - origin) / size : 0 }
        return done(end) > done(start)
    }
}
