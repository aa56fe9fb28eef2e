import CFFmpeg
import StudioCore

/// A network source's compressed video packet as it arrived, before decoding: what its ISO copies into
/// the file (`NetworkPullCamera`'s `compressedFrames`). Valid during `PullConnection.readAndDecode`'s
/// call only (it points at the connection's packet).
struct PullVideoPacket {
    let packet: UnsafePointer<AVPacket>
    /// H.264 or HEVC; nil for a codec that is not copied (its ISO encodes the decoded pictures).
    let codec: CompressedCodec?
    /// The stream's codec parameters now (see `PullVideoParameters`).
    let parameters: [UInt8]
    let width: Int
    let height: Int
    /// Presentation, decoding time and duration on the stream's clock (ns).
    let pts: Int64
    let dts: Int64
    let duration: Int64
    var isKeyframe: Bool { packet.pointee.flags & AV_PKT_FLAG_KEY != 0 }

    /// The packet's bytes and times as a frame for an ISO's queue, mapped to this machine's clock by
    /// `offset` (`PullTimeline.mapping`), in the mapping's `epoch`.
    func compressedFrame(codec: CompressedCodec, arrival: UInt64, offset: Int64, epoch: Int) -> CompressedVideoFrame {
        let bytes = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(max(0, packet.pointee.size))))
        var frame = CompressedVideoFrame(codec: codec, bytes: bytes, captureTime: arrival, width: width, height: height, isKeyframe: isKeyframe)
        frame.parameters = parameters
        frame.timing = StreamTiming(pts: pts, dts: dts, duration: duration, offset: offset, epoch: epoch)
        return frame
    }
}

/// The video stream's codec and parameters as the ISO copy needs them: the extradata the demuxer found
/// (avcC/hvcC from FLV, the parameter sets in Annex B from MPEG-TS), replaced when a packet brings new
/// ones (FLV's sequence header mid-stream, `AV_PKT_DATA_NEW_EXTRADATA`).
struct PullVideoParameters {
    let codec: CompressedCodec?
    private(set) var extradata: [UInt8]
    /// The picture's size as the demuxer found it (before the decoder knows it).
    private let probedSize: (width: Int, height: Int)

    init(_ parameters: UnsafePointer<AVCodecParameters>) {
        codec = switch parameters.pointee.codec_id {
        case AV_CODEC_ID_H264: .h264
        case AV_CODEC_ID_HEVC: .hevc
        default: nil
        }
        extradata = Self.bytes(parameters.pointee.extradata, Int(parameters.pointee.extradata_size))
        probedSize = (Int(parameters.pointee.width), Int(parameters.pointee.height))
    }

    /// Notes `packet`'s new extradata, if it brings one, and describes it for the copy. `timeBase` is the
    /// stream's; `decoderSize` the picture's as the decoder knows it now (0 before it does: the probed one).
    mutating func describe(_ packet: UnsafePointer<AVPacket>, timeBase: AVRational, decoderSize: (width: Int, height: Int)) -> PullVideoPacket {
        let size = decoderSize.width > 0 && decoderSize.height > 0 ? decoderSize : probedSize
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
        return PullVideoPacket(packet: packet, codec: codec, parameters: extradata, width: size.width, height: size.height,
                               pts: pts, dts: dts, duration: av_rescale_q(max(0, packet.pointee.duration), timeBase, nanoseconds))
    }

    private static func bytes(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }
}
