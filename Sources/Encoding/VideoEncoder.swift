import CFFmpeg
import MediaSupport
import StudioCore

/// Which H.264 encoder `makeEncoder(for:)` builds.
public enum VideoEncoderChoice: String, Sendable, Codable, CaseIterable {
    /// VAAPI when a render node encodes H.264 and the encoder opens, x264 otherwise (with a reason).
    case auto
    /// VAAPI only: asking for hardware that is not there is an error.
    case vaapi = "h264_vaapi"
    case x264 = "libx264"
}

/// What the program feed is encoded to.
public struct VideoEncoderSettings: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var frameRate: Rational
    /// Target bits per second; the encoder runs CBR-like (max rate = bit rate, ~1 s buffer).
    public var bitRate: Int
    /// x264 preset (`ultrafast` ... `veryslow`).
    public var preset: String
    /// x264 only: constant quality (CRF, 0-51, lower is better) for a file made after the show
    /// (`studio transcode`), instead of the live CBR-like `bitRate`: no `zerolatency` tune (lookahead and
    /// frame threads, packets come out a few frames late and `flush` returns the rest), still no B-frames.
    /// nil for everything live.
    public var constantQuality: Int?
    /// Distance between keyframes (IDR), in seconds.
    public var keyframeIntervalSeconds: Double
    public var encoder: VideoEncoderChoice
    /// VAAPI: the render node to use; nil probes `/dev/dri/renderD*` and takes the first that encodes H.264.
    public var renderNode: String?
    /// VAAPI: force the low-power entrypoint on (true) or off (false); nil follows the probe (low power
    /// only when the driver has nothing else).
    public var lowPower: Bool?
    /// Rehearsal of the mid-show fallback: when set, the chosen encoder is wrapped in a
    /// `FaultInjectingEncoder` that fails every frame after this many.
    public var faultInjectionAfterFrames: Int?

    public init(width: Int, height: Int, frameRate: Rational, bitRate: Int = 4_500_000, preset: String = "veryfast",
                keyframeIntervalSeconds: Double = 2, encoder: VideoEncoderChoice = .x264,
                renderNode: String? = nil, lowPower: Bool? = nil, faultInjectionAfterFrames: Int? = nil) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.bitRate = bitRate
        self.preset = preset
        self.keyframeIntervalSeconds = keyframeIntervalSeconds
        self.encoder = encoder
        self.renderNode = renderNode
        self.lowPower = lowPower
        self.faultInjectionAfterFrames = faultInjectionAfterFrames
    }

    public init(format: ProgramFormat, bitRate: Int = 4_500_000, preset: String = "veryfast",
                keyframeIntervalSeconds: Double = 2, encoder: VideoEncoderChoice = .x264) {
        self.init(width: format.width, height: format.height, frameRate: format.frameRate, bitRate: bitRate,
                  preset: preset, keyframeIntervalSeconds: keyframeIntervalSeconds, encoder: encoder)
    }

    /// Frames between keyframes (at least 1).
    public var keyframeIntervalFrames: Int {
        max(1, Int((keyframeIntervalSeconds * frameRate.doubleValue).rounded()))
    }

    /// Throws, naming `encoder`, unless the size is even and positive and the rates are positive
    /// (what every H.264 encoder here needs before it allocates anything).
    func validate(for encoder: String) throws(FFmpegError) {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw FFmpegError(call: encoder, message: "frame size \(width)x\(height) must be even and positive")
        }
        guard frameRate.numerator > 0, frameRate.denominator > 0, bitRate > 0 else {
            throw FFmpegError(call: encoder, message: "frame rate \(frameRate) and bit rate \(bitRate) must be positive")
        }
    }
}

/// An H.264 encoder for program frames (I420). Not thread-safe: one stage thread owns it.
/// `streamDescription` is complete (with avcC extradata) as soon as the encoder exists.
public protocol VideoEncoder: AnyObject {
    /// libavcodec's name for the encoder (`libx264`, later `h264_vaapi`).
    var name: String { get }
    var settings: VideoEncoderSettings { get }
    var streamDescription: StreamDescription { get }
    /// Encodes one frame at program time `pts`. `forceKeyframe` makes this frame an IDR.
    /// Returns the packets that became ready (with zerolatency x264: this frame's).
    func encode(_ frame: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket]
    /// End of stream: returns the packets still inside the encoder.
    func flush() throws -> [EncodedPacket]
}

/// The encoder `makeEncoder(for:)` built, and why it is not the one asked for (`.auto` that fell back to x264).
public struct EncoderSelection {
    public var encoder: VideoEncoder
    /// Why VAAPI was not used under `.auto` (the probe's text or the encoder's init error); nil otherwise.
    public var fallbackReason: String?

    public init(encoder: VideoEncoder, fallbackReason: String? = nil) {
        self.encoder = encoder
        self.fallbackReason = fallbackReason
    }
}

/// `.vaapi` was asked for and cannot be had.
public struct VAAPIUnavailableError: Error, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String {
        "video encoder vaapi was requested but cannot be used: \(reason) (use auto to fall back to x264)"
    }
}

/// Builds the encoder chosen in `settings`: `.x264` -> x264; `.vaapi` -> VAAPI or a `VAAPIUnavailableError`;
/// `.auto` -> VAAPI when a render node encodes H.264 and the encoder opens, else x264 with the reason.
/// With `faultInjectionAfterFrames`, the encoder is wrapped in a `FaultInjectingEncoder`.
public func makeEncoder(for settings: VideoEncoderSettings) throws -> EncoderSelection {
    var selection: EncoderSelection
    switch settings.encoder {
    case .x264:
        selection = EncoderSelection(encoder: try X264Encoder(settings: settings))
    case .vaapi:
        switch makeVAAPIEncoder(for: settings) {
        case .success(let encoder): selection = EncoderSelection(encoder: encoder)
        case .failure(let error): throw error
        }
    case .auto:
        switch makeVAAPIEncoder(for: settings) {
        case .success(let encoder): selection = EncoderSelection(encoder: encoder)
        case .failure(let error):
            selection = EncoderSelection(encoder: try X264Encoder(settings: settings), fallbackReason: error.reason)
        }
    }
    if let frames = settings.faultInjectionAfterFrames {
        selection.encoder = FaultInjectingEncoder(wrapping: selection.encoder, failAfterFrames: max(0, frames))
    }
    return selection
}

/// The software encoder a stage switches to when its encoder fails mid-show (`VideoEncodingStage`'s
/// `fallback:`): x264 with the same size, rate, bit rate and GOP, never fault-injected.
public func makeSoftwareFallback(for settings: VideoEncoderSettings) throws -> VideoEncoder {
    var software = settings
    software.encoder = .x264
    software.faultInjectionAfterFrames = nil
    return try X264Encoder(settings: software)
}

/// Probes (unless `settings.renderNode` names the node) and opens a VAAPI encoder.
private func makeVAAPIEncoder(for settings: VideoEncoderSettings) -> Result<VAAPIEncoder, VAAPIUnavailableError> {
    let probed = settings.renderNode.map { VAAPIProbe.probe(renderNode: $0) } ?? VAAPIProbe.probe()
    switch probed {
    case .unusable(let failure):
        return .failure(VAAPIUnavailableError(reason: failure.description))
    case .usable(let device):
        let profile: H264EncodeProfile? = device.profiles.contains(.high) ? .high : device.profiles.last
        do {
            return .success(try VAAPIEncoder(settings: settings, renderNode: device.renderNode,
                                              lowPower: settings.lowPower ?? device.lowPower, profile: profile))
        } catch {
            return .failure(VAAPIUnavailableError(
                reason: "h264_vaapi did not open on \(device.renderNode) (\(device.driver)): \(error)"))
        }
    }
}

extension CodecSession {
    /// Drains the ready packets as MP4-style (4-byte length-prefixed) H.264 packets on the
    /// one-tick-per-frame time base. Shared by the H.264 encoders.
    func receiveMP4Packets(rate: Rational, generation: Int) throws(FFmpegError) -> [EncodedPacket] {
        try receivePackets { packet in
            let pts = packet.pointee.pts
            let dts = packet.pointee.dts == cff_nopts_value() ? pts : packet.pointee.dts
            return EncodedPacket(
                kind: .video, data: AVCFormat.lengthPrefixed(annexB: copiedBytes(packet.pointee.data, count: packet.pointee.size)),
                pts: MediaTime(count: pts, rate: rate), dts: MediaTime(count: dts, rate: rate),
                duration: MediaTime(count: 1, rate: rate),
                isKeyframe: packet.pointee.flags & AV_PKT_FLAG_KEY != 0, generation: generation)
        }
    }
}
