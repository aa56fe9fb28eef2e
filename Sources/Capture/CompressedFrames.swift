import Synchronization
import StudioCore
import StudioSystem

/// The compression a camera's frames arrive in, when they arrive compressed. MJPEG today; an H.264
/// camera would add a case (its frames then carry `isKeyframe` false between keyframes).
public enum CompressedCodec: String, Sendable, CaseIterable {
    case mjpeg

    /// The codec as the muxers name it.
    public var codecKind: CodecKind {
        switch self {
        case .mjpeg: .mjpeg
        }
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
/// consumer is behind, the newest frame is refused and counted in `dropped` (JPEG frames are all
/// keyframes, so any frame may go).
public final class CompressedFrameQueue: Sendable {
    private let queue: BoundedQueue<CompressedVideoFrame>
    private let droppedCount = Atomic<Int>(0)
    private let offeredCount = Atomic<Int>(0)

    public init(capacity: Int) {
        queue = BoundedQueue(capacity: capacity)
    }

    /// Frames refused because the queue was full.
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }
    /// Frames the camera offered, taken or not.
    public var offered: Int { offeredCount.load(ordering: .relaxed) }

    /// Never blocks.
    public func offer(_ frame: CompressedVideoFrame) {
        offeredCount.add(1, ordering: .relaxed)
        if !queue.offer(frame) { droppedCount.add(1, ordering: .relaxed) }
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
