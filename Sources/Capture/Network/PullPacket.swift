import CFFmpeg
import StudioCore

/// A network source's compressed packet as it arrived, before decoding: what its ISO copies into the
/// file (`NetworkPullCamera`'s `compressedFrames`): a picture's H.264/HEVC, or its own sound's AAC.
/// Valid during `PullConnection.readAndDecode`'s call only (it points at the connection's packet).
struct PullPacket {
    let packet: UnsafePointer<AVPacket>
    /// H.264, HEVC or AAC; nil for a codec that is not copied (its ISO encodes the decoded pictures).
    let codec: CompressedCodec?
    /// The stream's codec parameters now (see `PullStreamParameters`).
    let parameters: [UInt8]
    var width = 0, height = 0
    var sampleRate = 0, channels = 0
    /// Bytes at the start of the packet that are not copied (an AAC packet's ADTS header).
    var header = 0
    /// Presentation, decoding time and duration on the stream's clock (ns).
    let pts: Int64
    let dts: Int64
    let duration: Int64
    var isKeyframe: Bool { codec?.isAudio == true || packet.pointee.flags & AV_PKT_FLAG_KEY != 0 }

    /// A capture node's picture: its capture time, from the SEI before its slices (H.264 only).
    var captureTime: CaptureTimeSEI? {
        guard codec == .h264, let data = packet.pointee.data else { return nil }
        return CaptureTimeSEI.find(inAnnexB: UnsafeBufferPointer(start: data, count: Int(max(0, packet.pointee.size))))
    }

    /// The packet's bytes and times as a frame for an ISO's queue, mapped to this machine's clock by
    /// `offset` (`PullTimeline.mapping`), in the mapping's `epoch`.
    func compressedFrame(codec: CompressedCodec, arrival: UInt64, offset: Int64, epoch: Int) -> CompressedVideoFrame {
        let size = Int(max(0, packet.pointee.size))
        let bytes = Array(UnsafeBufferPointer(start: packet.pointee.data, count: size).dropFirst(min(header, size)))
        var frame = CompressedVideoFrame(codec: codec, bytes: bytes, captureTime: arrival, width: width, height: height, isKeyframe: isKeyframe)
        frame.parameters = parameters
        frame.sampleRate = sampleRate
        frame.channels = channels
        frame.timing = StreamTiming(pts: pts, dts: dts, duration: duration, offset: offset, epoch: epoch)
        return frame
    }
}

/// A stream's codec and parameters as the ISO copy needs them: the extradata the demuxer found (avcC/
/// hvcC or the AAC AudioSpecificConfig from FLV, the parameter sets in Annex B from MPEG-TS), replaced
/// when a packet brings new ones (FLV's sequence header mid-stream, `AV_PKT_DATA_NEW_EXTRADATA`). AAC
/// in ADTS (MPEG-TS) has no extradata: its AudioSpecificConfig is made from the ADTS header, which is
/// not copied (`PullPacket.header`).
struct PullStreamParameters {
    let codec: CompressedCodec?
    private(set) var extradata: [UInt8]
    /// The picture's size as the demuxer found it (before the decoder knows it); the sound's format.
    private let probedSize: (width: Int, height: Int)
    private let sound: (rate: Int, channels: Int)

    init(_ parameters: UnsafePointer<AVCodecParameters>) {
        codec = switch parameters.pointee.codec_id {
        case AV_CODEC_ID_H264: .h264
        case AV_CODEC_ID_HEVC: .hevc
        case AV_CODEC_ID_AAC: .aac
        default: nil
        }
        extradata = Self.bytes(parameters.pointee.extradata, Int(parameters.pointee.extradata_size))
        probedSize = (Int(parameters.pointee.width), Int(parameters.pointee.height))
        sound = (Int(parameters.pointee.sample_rate), Int(parameters.pointee.ch_layout.nb_channels))
    }

    /// Notes `packet`'s new extradata, if it brings one, and describes it for the copy. `timeBase` is the
    /// stream's; `decoderSize` the picture's as the decoder knows it now (0 before it does: the probed one).
    mutating func describe(_ packet: UnsafePointer<AVPacket>, timeBase: AVRational, decoderSize: (width: Int, height: Int) = (0, 0)) -> PullPacket {
        var sideSize = 0
        if let side = av_packet_get_side_data(packet, AV_PKT_DATA_NEW_EXTRADATA, &sideSize), sideSize > 0 {
            extradata = Self.bytes(side, sideSize)
        }
        let nanoseconds = AVRational(num: 1, den: 1_000_000_000)
        let none = cff_nopts_value()
        let rawPTS = packet.pointee.pts != none ? packet.pointee.pts : packet.pointee.dts
        let rawDTS = packet.pointee.dts != none ? packet.pointee.dts : rawPTS
        let pts = rawPTS == none ? Int64.min : av_rescale_q(rawPTS, timeBase, nanoseconds)
        let dts = rawDTS == none ? Int64.min : av_rescale_q(rawDTS, timeBase, nanoseconds)
        var described = PullPacket(packet: packet, codec: codec, parameters: extradata, pts: pts, dts: dts,
                                   duration: av_rescale_q(max(0, packet.pointee.duration), timeBase, nanoseconds))
        if codec?.isAudio == true {
            (described.sampleRate, described.channels) = sound
            if extradata.isEmpty {
                // ADTS: one frame per packet is copied without its header, under the config it describes.
                let bytes = UnsafeBufferPointer(start: packet.pointee.data, count: Int(max(0, packet.pointee.size)))
                guard let adts = ADTSHeader(bytes), adts.frameLength == bytes.count else {
                    return PullPacket(packet: packet, codec: nil, parameters: [], pts: pts, dts: dts, duration: 0)
                }
                described = PullPacket(packet: packet, codec: codec, parameters: adts.audioSpecificConfig, sampleRate: sound.rate,
                                       channels: sound.channels, header: adts.length, pts: pts, dts: dts, duration: described.duration)
            }
        } else {
            let size = decoderSize.width > 0 && decoderSize.height > 0 ? decoderSize : probedSize
            (described.width, described.height) = size
        }
        return described
    }

    private static func bytes(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }
}

/// An AAC frame's ADTS header (ISO/IEC 13818-7): its length, the frame's, and the AudioSpecificConfig
/// (ISO/IEC 14496-3) it implies: object type = profile + 1, the sampling frequency index, the channel
/// configuration.
struct ADTSHeader: Equatable {
    let length: Int
    let frameLength: Int
    let audioSpecificConfig: [UInt8]

    init(length: Int, frameLength: Int, audioSpecificConfig: [UInt8]) {
        self.length = length
        self.frameLength = frameLength
        self.audioSpecificConfig = audioSpecificConfig
    }

    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 7, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return nil }
        length = bytes[1] & 1 == 1 ? 7 : 9
        frameLength = Int(bytes[3] & 0x03) << 11 | Int(bytes[4]) << 3 | Int(bytes[5]) >> 5
        let objectType = (bytes[2] >> 6) + 1, frequency = (bytes[2] >> 2) & 0x0F
        let channels = (bytes[2] & 0x01) << 2 | bytes[3] >> 6
        guard frequency < 13, bytes[6] & 0x03 == 0, frameLength >= length else { return nil }
        audioSpecificConfig = [objectType << 3 | frequency >> 1, (frequency & 1) << 7 | channels << 3]
    }
}

/// A node's pictures' capture times (`CaptureTimeSEI`) from their packets, kept by pts until the
/// decoder gives the picture (pictures come out in presentation order, packets in decoding order).
/// Bounded: a packet whose picture never comes (not decoded, or refused) is forgotten behind newer ones.
struct CaptureStamps {
    static let limit = 32
    private var byPTS: [(pts: Int64, captureTime: Int64)] = []

    mutating func note(pts: Int64, captureTime: Int64) {
        guard pts != .min else { return }
        if byPTS.count >= Self.limit { byPTS.removeFirst(byPTS.count - Self.limit + 1) }
        byPTS.append((pts, captureTime))
    }

    /// The capture time of the picture at `pts` (nil when its packet had none), forgotten once taken.
    mutating func take(pts: Int64) -> Int64? {
        guard let index = byPTS.firstIndex(where: { $0.pts == pts }) else { return nil }
        return byPTS.remove(at: index).captureTime
    }
}
