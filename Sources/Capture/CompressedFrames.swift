import Synchronization
import StudioCore
import StudioSystem

/// The compression a camera's frames arrive in, when they arrive compressed: a webcam's MJPEG, a
/// network camera's H.264 or HEVC (whose frames carry `isKeyframe` false between keyframes), and a
/// network camera's own sound, AAC, which rides the same queue to its ISO (`isAudio`).
public enum CompressedCodec: String, Sendable, CaseIterable {
    case mjpeg
    case h264
    case hevc
    case aac

    public var isAudio: Bool { self == .aac }

    /// The codec as the muxers name it.
    public var codecKind: CodecKind {
        switch self {
        case .mjpeg: .mjpeg
        case .h264: .h264
        case .hevc: .hevc
        case .aac: .aac
        }
    }
}

/// A network camera's packet on its stream's clock, and where that clock is on this machine's: the
/// packet is due (on CLOCK_MONOTONIC) at its media time plus `offset`, the same mapping (the jitter
/// buffer's `PullTimeline`) that times its decoded picture. `epoch` changes where the mapping does not
/// continue (a new connection, a publisher's restart, a jump of its timestamps): a copy starts again
/// at the next keyframe.
public struct StreamTiming: Sendable, Equatable {
    /// Presentation and decoding time on the stream's clock (ns).
    public var pts: Int64
    public var dts: Int64
    /// How long the packet lasts (ns; 0: unknown).
    public var duration: Int64
    public var offset: Int64
    public var epoch: Int

    public init(pts: Int64, dts: Int64, duration: Int64, offset: Int64, epoch: Int) {
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.offset = offset
        self.epoch = epoch
    }
}

/// One frame exactly as the camera sent it: the compressed bytes, when they were captured
/// (CLOCK_MONOTONIC ns, the same time the decoded frame is stamped with) and the size the stream
/// negotiated.
public struct CompressedVideoFrame: Sendable {
    public var codec: CompressedCodec
    public var bytes: [UInt8]
    public var captureTime: UInt64
    public var width: Int
    public var height: Int
    /// Every JPEG image stands alone.
    public var isKeyframe: Bool
    /// H.264/HEVC: the stream's codec parameters (extradata: avcC/hvcC from FLV, the parameter sets in
    /// Annex B from MPEG-TS); empty for MJPEG.
    public var parameters: [UInt8] = []
    /// A network camera's packet: its times and their mapping to this machine's clock (nil: a webcam's
    /// frame, placed by `captureTime`).
    public var timing: StreamTiming?
    /// The frames the queue had refused when it took this one (set by `CompressedFrameQueue`): when it
    /// grew since the previous frame, one was refused between them.
    public var refusedBefore = 0
    /// AAC: the sound's rate and channels (the picture's size is 0).
    public var sampleRate = 0
    public var channels = 0
    /// The last picture a network connection gave before it ended: at the end of a stream the demuxer
    /// hands over whatever it had of its last packet (an MPEG-TS video PES has no length to check it
    /// by), so it may be cut short; an ISO copy sets it aside rather than write a damaged picture.
    public var endsItsStream = false

    public init(codec: CompressedCodec, bytes: [UInt8], captureTime: UInt64, width: Int, height: Int, isKeyframe: Bool = true) {
        self.codec = codec
        self.bytes = bytes
        self.captureTime = captureTime
        self.width = width
        self.height = height
        self.isKeyframe = isKeyframe
    }
}

/// Where a camera that receives compressed frames offers every one of them (an ISO recorder that
/// copies them into its file). A bounded queue: the camera's callback never blocks on it; when the
/// consumer is behind, the newest frame is refused and counted in `dropped`. Keyframes are not refused
/// first: a frame that is not a keyframe (H.264/HEVC between keyframes) is refused once the queue is
/// three quarters full, a keyframe only when it is full (JPEG frames are all keyframes, so any frame
/// may go). Each frame taken carries the count of those refused before it (`refusedBefore`), so the
/// consumer sees where one was refused.
public final class CompressedFrameQueue: Sendable {
    private let queue: BoundedQueue<CompressedVideoFrame>
    private let droppedCount = Atomic<Int>(0)
    private let offeredCount = Atomic<Int>(0)
    /// Frames that are not keyframes are refused from this many queued on.
    private let deltaLimit: Int

    public init(capacity: Int) {
        queue = BoundedQueue(capacity: capacity)
        deltaLimit = max(1, capacity * 3 / 4)
    }

    /// Frames refused because the queue was full.
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }
    /// Frames the camera offered, taken or not.
    public var offered: Int { offeredCount.load(ordering: .relaxed) }

    /// Never blocks.
    public func offer(_ frame: CompressedVideoFrame) {
        offeredCount.add(1, ordering: .relaxed)
        var frame = frame
        frame.refusedBefore = droppedCount.load(ordering: .relaxed)
        guard frame.isKeyframe || queue.count < deltaLimit, queue.offer(frame) else {
            droppedCount.add(1, ordering: .relaxed)
            return
        }
    }

    /// The oldest frame, waiting up to `timeoutSeconds`.
    public func pop(timeoutSeconds: Double) -> BoundedQueue<CompressedVideoFrame>.PopResult {
        queue.pop(timeoutSeconds: timeoutSeconds)
    }

    /// Refuses further frames; `pop` drains what is queued, then says end of stream.
    public func close() { queue.close() }
    public var isClosed: Bool { queue.isClosed }
}

/// A camera's hand-off point for its compressed frames: nothing is copied while no queue is attached.
public final class CompressedFrameTap: Sendable {
    private let queue = Mutex<CompressedFrameQueue?>(nil)

    public init() {}

    /// Frames from now on go to `queue` (replacing any attached before).
    public func attach(_ queue: CompressedFrameQueue) { self.queue.withLock { $0 = queue } }

    /// Stops offering to `queue` (if it is the one attached).
    public func detach(_ queue: CompressedFrameQueue) {
        self.queue.withLock { if $0 === queue { $0 = nil } }
    }

    public var isAttached: Bool { queue.withLock { $0 != nil } }

    /// Copies `bytes` into a frame for the attached queue, if any. Never blocks (the lock only guards
    /// the reference; the copy and the offer happen outside it).
    public func offer(codec: CompressedCodec, bytes: UnsafeRawBufferPointer, captureTime: UInt64, width: Int, height: Int,
                      isKeyframe: Bool = true) {
        guard let queue = queue.withLock({ $0 }) else { return }
        queue.offer(CompressedVideoFrame(codec: codec, bytes: Array(bytes), captureTime: captureTime, width: width, height: height,
                                         isKeyframe: isKeyframe))
    }

    /// Offers the frame `make` builds, if a queue is attached (nothing is built otherwise). Never blocks.
    public func offer(_ make: () -> CompressedVideoFrame) {
        guard let queue = queue.withLock({ $0 }) else { return }
        queue.offer(make())
    }

    /// The frame `make` builds, if a queue is attached now (nil, and nothing built, otherwise): for a
    /// camera that holds a frame back before it offers it (`offer(_:)` with the frame).
    public func frame(_ make: () -> CompressedVideoFrame) -> CompressedVideoFrame? {
        queue.withLock { $0 } == nil ? nil : make()
    }

    /// Offers `frame` to the attached queue, if any. Never blocks.
    public func offer(_ frame: CompressedVideoFrame) {
        queue.withLock { $0 }?.offer(frame)
    }
}

/// A camera that receives its frames compressed and can hand them on as they came (see
/// `CompressedFrameTap`), besides publishing them decoded to `frames`.
public protocol CompressedFrameSource: Camera {
    /// The codec its frames arrive in; nil when it receives raw frames (then nothing is offered).
    var compressedCodec: CompressedCodec? { get }
    var compressedFrames: CompressedFrameTap { get }
    /// True while the camera's current mode delivers compressed frames to `compressedFrames`: a camera
    /// that started compressed can be switched to a mode its device offers raw only (`V4L2Camera`).
    var isSendingCompressed: Bool { get }
}

extension CompressedFrameSource {
    public var isSendingCompressed: Bool { compressedCodec != nil }
}

extension Camera {
    /// Whether this camera sends compressed frames now (`CompressedFrameSource.isSendingCompressed`);
    /// false for a camera that never does.
    public var sendsCompressedFrames: Bool { (self as? any CompressedFrameSource)?.isSendingCompressed ?? false }
}
