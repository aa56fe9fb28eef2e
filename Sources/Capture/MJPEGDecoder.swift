import CFFmpeg
import MediaSupport
import StudioCore
import StudioSystem
import Synchronization

/// Decodes camera MJPEG frames with libavcodec's MJPEG decoder into I420 `VideoFrame`s (converted by
/// libswscale from whatever the JPEG holds, usually 4:2:2). Owns a `CodecSession` and a
/// `FrameConverter`; used by one capture thread only.
///
/// A damaged frame (not a JPEG, truncated, or one the decoder flags as corrupt) throws `Failure` and
/// leaves the decoder ready for the next frame: the capture thread drops and counts it.
///
/// A decoder made with a `reduction` of 2, 4 or 8 decodes at that fraction of the JPEG's size, for a
/// fraction of the cost: libavcodec's `lowres` (1, 2, 3), which FFmpeg 5.1's MJPEG decoder supports
/// (its `max_lowres` is 3): the IDCT makes only the low-frequency 4x4, 2x2 or 1x1 of each 8x8 block,
/// and the picture is ceil(width / reduction) x ceil(height / reduction) (1280x720: 640x360, 320x180,
/// 160x90). An odd side is cut to even for I420 (1920x1080 at 1/8: 240x134). The frames say their
/// `reduction`. One decoder per reduction (the codec takes `lowres` when it opens).
public final class MJPEGDecoder {
    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { "corrupt MJPEG frame: \(message)" }
    }

    private let session: CodecSession
    private let converter = FrameConverter()
    private var pool: FramePool?
    /// 1 (full size), 2, 4 or 8.
    public let reduction: Int

    /// The reductions libavcodec's MJPEG decoder offers (lowres 0...3).
    public static let reductions = [1, 2, 4, 8]

    /// The largest reduction whose picture of a `width` wide JPEG is still at least `atLeast` wide (1
    /// when even half the width is too narrow).
    public static func reduction(width: Int, atLeast: Int) -> Int {
        reductions.last { reducedSide(width, by: $0) >= atLeast } ?? 1
    }

    /// One side of the picture decoded at `reduction` (even, as I420 wants, unless the reduction is 1).
    public static func reducedSide(_ side: Int, by reduction: Int) -> Int {
        guard reduction > 1 else { return side }
        let decoded = (side + reduction - 1) / reduction
        return max(2, decoded & ~1)
    }

    public init(reduction: Int = 1) throws(CaptureError) {
        guard let lowres = Self.reductions.firstIndex(of: reduction) else {
            throw CaptureError(camera: nil, message: "an MJPEG reduction of \(reduction) (1, 2, 4 or 8 are possible)")
        }
        self.reduction = reduction
        do {
            session = try CodecSession(AV_CODEC_ID_MJPEG, decoder: true)
            session.context.pointee.lowres = Int32(lowres)
            // Report damage as errors instead of concealing it, so a broken frame is dropped, not shown.
            session.context.pointee.err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER
            session.context.pointee.thread_count = 1
            try session.open("mjpeg")
        } catch {
            throw CaptureError(camera: nil, message: error.description)
        }
    }

    /// Decodes one JPEG image. The bytes are copied; the caller may reuse its buffer at once.
    public func decode(_ bytes: UnsafeRawBufferPointer, captureTime: UInt64 = 0, sequence: UInt64 = 0) throws(Failure) -> VideoFrame {
        // A JPEG starts with SOI (FF D8); a buffer that does not is not one (a driver's or the bus's garbage).
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw Failure(message: "\(bytes.count) bytes without a JPEG start marker")
        }
        let frame: UnsafeMutablePointer<AVFrame>
        do { frame = try session.decode(bytes) } catch { throw Failure(message: error.description) }
        defer { av_frame_unref(frame) }
        if frame.pointee.decode_error_flags != 0 || frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 {
            throw Failure(message: "the decoder flagged the picture as damaged")
        }
        var width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        guard width > 0, height > 0 else { throw Failure(message: "no picture size") }
        if reduction > 1 {
            // An odd side (1080 / 8 = 135) loses its last row or column: I420 wants even sides.
            width = max(2, width & ~1)
            height = max(2, height & ~1)
        }
        // JPEG is full range (yuvj*), the program limited-range I420: libswscale converts the range
        // (`FrameConverter` gives it the plain format with the range set before it initialises; with
        // sws_setColorspaceDetails afterwards its same-format fast path skipped the range conversion).
        let byteCount = VideoFrame.byteCount(format: .i420, width: width, height: height)
        if pool?.capacity != byteCount { pool = FramePool(capacity: byteCount, limit: 4) }
        var output = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, captureTime: captureTime, sequence: sequence)
        output.reduction = reduction
        // A webcam's 4:2:2 or 4:2:0 JPEG converts in one vector pass; anything else through libswscale.
        if !JPEGRangeConversion.convert(frame, into: output) {
            do { try converter.convert(frame, into: output) } catch { throw Failure(message: error.description) }
        }
        return output
    }
}

/// An MJPEG camera's decoding by demand, on its capture thread: at full size every frame while the
/// camera is needed (`DecodeDemand.full`); while only the tiles or a backup rule need it (`reduced`), at
/// the smallest reduction still as wide as the tiles, at most one frame per tile interval; while nobody
/// needs it (`idle`), not at all. The newest JPEG is always kept: when the demand rises, `step` decodes
/// it as now needed at once, without waiting for the next frame. One decoder per reduction, made when
/// first needed. Used by one thread only.
final class DemandDecoding {
    enum Outcome {
        /// Nothing to do: no new frame, and the newest one is decoded as the demand wants.
        case idle
        /// A new frame not decoded (idle demand, or reduced and the tiles had a picture recently enough).
        case skipped
        case decoded(VideoFrame)
        /// The JPEG did not decode (counted as corrupt; the next frame is tried).
        case corrupt
        /// No decoder could be made (the camera cannot work).
        case failed(String)
    }

    private var decoders: [Int: MJPEGDecoder] = [:]
    /// When a reduced picture was last decoded (monotonic nanoseconds).
    private var lastReduced: UInt64?
    /// What became of the newest kept JPEG.
    private enum Newest {
        /// Not decoded yet (it came while the camera was idle, or just now).
        case waiting
        /// The reduced rate skipped it: a reduced demand leaves it; a full one decodes it.
        case passedOver
        /// Decoded at this reduction (1: full size); a corrupt one counts, never retried.
        case decoded(reduction: Int)
    }
    private var kept = Newest.waiting

    /// - Parameters:
    ///   - fresh: `newest` arrived since the previous step.
    ///   - newest: the newest JPEG (kept by the caller between steps).
    ///   - width: the JPEG's width (the negotiated format's), to pick the reduction.
    func step(fresh: Bool, newest: [UInt8], captureTime: UInt64, sequence: UInt64, demand: CameraDemand, width: Int,
              now: UInt64) -> Outcome {
        if fresh { kept = .waiting }
        guard !newest.isEmpty else { return .idle }
        let reduction: Int
        switch demand.demand {
        case .full:
            if case .decoded(reduction: 1) = kept { return .idle }
            reduction = 1
        case .reduced:
            // Any decode of the newest JPEG will do; one not decoded yet (it came while idle) is decoded
            // at once, whatever the interval, so a tile or a backup has a recent picture.
            guard case .waiting = kept else { return .idle }
            // A quarter interval of slack: a 30 fps camera's frames 100 ms apart give 10 pictures a second.
            let interval = demand.reducedInterval
            if fresh, let last = lastReduced, now &- last + interval / 4 < interval {
                kept = .passedOver
                return .skipped
            }
            lastReduced = now
            reduction = MJPEGDecoder.reduction(width: width, atLeast: demand.reducedWidth)
        case .idle:
            return fresh ? .skipped : .idle
        }
        kept = .decoded(reduction: reduction)
        let decoder: MJPEGDecoder
        if let made = decoders[reduction] {
            decoder = made
        } else {
            do { decoder = try MJPEGDecoder(reduction: reduction) } catch { return .failed(error.message) }
            decoders[reduction] = decoder
        }
        let frame = newest.withUnsafeBytes { try? decoder.decode($0, captureTime: captureTime, sequence: sequence) }
        return frame.map { .decoded($0) } ?? .corrupt
    }
}

/// Wakes an MJPEG camera's thread: a new JPEG came, or the demand rose. A signal given while the
/// thread is busy is kept for its next wait (never lost).
final class DecodeWakeup: Sendable {
    private let condition = ConditionLock()
    /// Set and cleared under `condition`'s lock (an atomic only to be Sendable).
    private let pending = Atomic<Bool>(false)

    func signal() {
        condition.withLock {
            pending.store(true, ordering: .relaxed)
            condition.signal()
        }
    }

    /// Returns at once if signalled since the last wait, else at the next signal or after `seconds`.
    func wait(seconds: Double) {
        condition.withLock {
            if !pending.load(ordering: .relaxed) {
                // Real time: the deadline of a condition wait (CLOCK_MONOTONIC); only bounds the sleep.
                _ = condition.wait(untilMonotonic: MonotonicClock.now() + UInt64(seconds * 1e9))
            }
            pending.store(false, ordering: .relaxed)
        }
    }
}
