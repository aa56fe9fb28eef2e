import CFFmpeg
import StudioCore
import MediaSupport
import Synchronization

/// How network cameras decode their video, the same for all of them (the server decides at start):
/// libavcodec's threads, and VAAPI where the machine has a render node whose driver decodes the codec.
public struct NetworkDecoding: Sendable, Equatable {
    /// libavcodec's threads per software decoder, slice threads: on one-slice streams (x264's defaults,
    /// most phones) the second thread idles and costs nothing measurable; on streams cut in slices (x264's
    /// `zerolatency`, many IP cameras) a picture decodes in about half the time, so it waits less before
    /// its turn in the buffer. Frame threads would add a picture of delay per thread and save no CPU;
    /// several sources on 2 cores are already spread over both by their own receive threads
    /// (scripts/bench-network-decode.sh, docs/benchmarks.md).
    public static let defaultThreads = 2

    public var threads: Int
    public var hardware: Hardware

    /// Where VAAPI decoding could happen.
    public enum Hardware: Sendable, Equatable {
        /// A render node whose driver decodes these codecs (libavcodec's names: `h264`, `hevc`).
        case vaapi(renderNode: String, codecs: Set<String>)
        /// None: why, in words for the status and the log (the VAAPI probe's).
        case unavailable(String)
    }

    public init(threads: Int = NetworkDecoding.defaultThreads, hardware: Hardware = .unavailable("VAAPI decoding was not looked for")) {
        self.threads = max(1, threads)
        self.hardware = hardware
    }
}

/// A network camera's video decoder: libavcodec's, on the GPU through VAAPI where `NetworkDecoding`
/// found a render node whose driver decodes the codec (the picture copied back to memory), else in
/// software with `NetworkDecoding.threads` slice threads. While nobody sees the camera only its reference
/// pictures are decoded (`skipsNonReference`: libavcodec's `skip_frame` at `AVDISCARD_NONREF`): what the
/// others are predicted from is still decoded in full, so every picture given is whole and current, and
/// every picture from the next packet on once it is seen again. Used by the receive thread alone.
final class PullVideoDecoder {
    let session: CodecSession
    /// What the status shows of it.
    private(set) var status: NetworkSourceStatus.DecoderStatus
    /// A picture copied back from the GPU (reused).
    private let transferred: UnsafeMutablePointer<AVFrame>
    /// Packets whose picture was skipped (sent while skipping, no picture and no refusal came of them).
    private(set) var skipped = 0
    /// False for a codec whose every picture stands alone (MJPEG): nothing to skip.
    private let predicts: Bool

    init(parameters: UnsafeMutablePointer<AVCodecParameters>, name: String, decoding: NetworkDecoding, preferring: String? = nil) throws(PullError) {
        session = try PullConnection.decoderSession(for: parameters, name: name, missing: ": this stream's video cannot be shown (send H.264 or HEVC)",
                                                    preferring: preferring)
        guard let transferred = av_frame_alloc() else { throw PullError("out of memory") }
        self.transferred = transferred
        let decoderName = session.context.pointee.codec.map { String(cString: $0.pointee.name) } ?? name
        predicts = (Int32(avcodec_descriptor_get(parameters.pointee.codec_id)?.pointee.props ?? 0) & AV_CODEC_PROP_INTRA_ONLY) == 0
        var hardware: String?
        var softwareReason: String?
        switch decoding.hardware {
        case .vaapi(let node, let codecs) where codecs.contains(name):
            var device: UnsafeMutablePointer<AVBufferRef>?
            let made = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, node, nil, 0)
            if made >= 0, let device {
                session.context.pointee.hw_device_ctx = av_buffer_ref(device)
                var own: UnsafeMutablePointer<AVBufferRef>? = device
                av_buffer_unref(&own)
                session.context.pointee.get_format = preferVAAPI
                hardware = "vaapi \(node)"
            } else {
                softwareReason = "VAAPI on \(node) could not be opened (\(FFmpegError(call: "av_hwdevice_ctx_create", code: made).message))"
            }
        case .vaapi(let node, _):
            softwareReason = "the VAAPI driver on \(node) does not decode \(name)"
        case .unavailable(let reason):
            softwareReason = reason
        }
        // The GPU decodes one picture at a time; threads would only hold pictures.
        let threads = hardware == nil ? decoding.threads : 1
        session.context.pointee.thread_count = Int32(threads)
        // Slice threads add no delay; frame threads would hold a picture per thread.
        session.context.pointee.thread_type = FF_THREAD_SLICE
        session.context.pointee.flags |= AV_CODEC_FLAG_LOW_DELAY
        do { try session.open(name) } catch { throw PullError("cannot open the \(name) decoder: \(error)") }
        status = NetworkSourceStatus.DecoderStatus(name: decoderName, threads: threads, threadType: threads > 1 ? "slice" : "none",
                                                   hardware: hardware, softwareReason: softwareReason)
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = transferred
        av_frame_free(&frame)
    }

    /// Whether only reference pictures are decoded (nobody sees the camera); applied from the next packet.
    /// Stays false for an intra-only codec.
    var skipsNonReference = false {
        didSet {
            if !predicts { skipsNonReference = false }
            guard skipsNonReference != oldValue else { return }
            session.context.pointee.skip_frame = skipsNonReference ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
            status.pictures = skipsNonReference ? "reference" : "all"
        }
    }

    /// Notes what one packet gave: a packet sent while skipping that gave no picture and was not refused
    /// was skipped.
    func noteDecoded(pictures: Int, refused: Bool) {
        if skipsNonReference, pictures == 0, !refused { skipped += 1 }
    }

    /// The picture in memory: `frame` itself from software, else the GPU's copied back (nil: the copy
    /// failed, with libavcodec's words). A software picture from a hardware decoder (its driver refused
    /// this stream's profile, libavcodec fell back) is noted in the status.
    func picture(_ frame: UnsafeMutablePointer<AVFrame>) -> Result<UnsafeMutablePointer<AVFrame>, PullError> {
        guard frame.pointee.format == AV_PIX_FMT_VAAPI.rawValue else {
            if status.hardware != nil {
                status.softwareReason = "the VAAPI driver on \(status.hardware ?? "") refused this stream; libavcodec decodes it in software"
                status.hardware = nil
            }
            return .success(frame)
        }
        av_frame_unref(transferred)
        let copied = av_hwframe_transfer_data(transferred, frame, 0)
        guard copied >= 0 else { return .failure(PullError(FFmpegError(call: "av_hwframe_transfer_data", code: copied).message)) }
        av_frame_copy_props(transferred, frame)
        return .success(transferred)
    }
}

/// libavcodec's choice of output format for a VAAPI decoder: the GPU's surfaces when offered, else the
/// software format libavcodec would take.
private let preferVAAPI: @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVPixelFormat>?) -> AVPixelFormat = { context, formats in
    guard let formats else { return AV_PIX_FMT_NONE }
    var index = 0
    while formats[index] != AV_PIX_FMT_NONE {
        if formats[index] == AV_PIX_FMT_VAAPI { return AV_PIX_FMT_VAAPI }
        index += 1
    }
    return avcodec_default_get_format(context, formats)
}

/// The wake-up of a network camera's demand: notes its newest picture good for a cut at once (every
/// picture it publishes is whole and full size). Holds the demand weakly (the demand holds this).
final class DemandRise: Sendable {
    struct Weak { weak var demand: CameraDemand? }
    let demand = Mutex(Weak())
    func noteFullPicture() { demand.withLock { $0.demand }?.noteFullPicture() }
}
