import Synchronization
import StudioCore
import StudioSystem

/// The MJPEG side of a camera, one for the PipeWire and the V4L2 camera alike: the thread that
/// receives a JPEG (a PipeWire process callback, a V4L2 capture thread) hands the newest one to the
/// thread that decodes it by `demand` (`DemandDecoding`), and offers every JPEG, as it came, to `tap`
/// (a passthrough ISO's bounded queue; copied only while one is attached, never blocking). A JPEG that
/// comes before the last one was looked at replaces it (the caller counts it as dropped). The demand
/// rising wakes the decoding thread, which then decodes the newest JPEG as now needed, at once.
final class CompressedCapture: Sendable {
    let codec: CompressedCodec
    let tap: CompressedFrameTap
    let demand: CameraDemand
    private let wakeup: DecodeWakeup
    /// Times the reduced decodes (`DemandDecoding`'s rate window).
    private let clock: any Clock
    /// The newest JPEG, between the receiving and the decoding thread.
    private let slot = Mutex(CompressedFrame())

    init(codec: CompressedCodec = .mjpeg, tap: CompressedFrameTap, clock: any Clock = .monotonic) {
        let wakeup = DecodeWakeup()
        self.clock = clock
        self.codec = codec
        self.tap = tap
        self.wakeup = wakeup
        demand = CameraDemand(wake: { wakeup.signal() })
    }

    /// Receiving thread: copies `bytes` (one JPEG, captured at `captureTime`, received at `arrived`) for
    /// the decoding thread, offers it to the tap and wakes the decoder. True when it replaced a JPEG the
    /// decoding thread had not taken yet (a dropped frame).
    func take(_ bytes: UnsafeRawBufferPointer, captureTime: UInt64, arrived: UInt64, width: Int, height: Int) -> Bool {
        let replaced = slot.withLock { slot -> Bool in
            let replaced = slot.isFresh
            slot.bytes.removeAll(keepingCapacity: true)
            slot.bytes.append(contentsOf: bytes)
            slot.isFresh = true
            slot.captureTime = captureTime
            slot.arrivalTime = arrived
            slot.sequence += 1
            return replaced
        }
        tap.offer(codec: codec, bytes: bytes, captureTime: captureTime, width: width, height: height)
        wakeup.signal()
        return replaced
    }

    /// Decoding thread: takes the newest JPEG, if one came since the last call, into `newest` (kept
    /// between calls) and decodes it as the demand wants. A decoded picture carries its JPEG's arrival
    /// time; a full-size one is noted in `demand` (a take waiting for it may go).
    func decodeNewest(_ decoding: DemandDecoding, newest: inout CompressedFrame, width: Int) -> DemandDecoding.Outcome {
        let fresh = slot.withLock { slot -> Bool in
            guard slot.isFresh else { return false }
            swap(&slot.bytes, &newest.bytes)
            slot.isFresh = false
            newest.captureTime = slot.captureTime
            newest.arrivalTime = slot.arrivalTime
            newest.sequence = slot.sequence
            return true
        }
        var outcome = decoding.step(fresh: fresh, newest: newest.bytes, captureTime: newest.captureTime, sequence: newest.sequence,
                                    demand: demand, width: width, now: clock.now())
        if case .decoded(var frame) = outcome {
            frame.arrivalTime = newest.arrivalTime
            outcome = .decoded(frame)
        }
        return outcome
    }

    /// Notes that a full-size picture was published (after the caller published it).
    func published(_ frame: VideoFrame) {
        if frame.reduction == 1 { demand.noteFullPicture() }
    }

    /// Decoding thread: returns at once if a JPEG came or the demand rose since the last wait, else at
    /// the next such signal or after `seconds`.
    func wait(seconds: Double) { wakeup.wait(seconds: seconds) }
}

/// The newest JPEG image of an MJPEG camera, between the receiving and the decoding thread.
struct CompressedFrame {
    var bytes: [UInt8] = []
    var isFresh = false
    var captureTime: UInt64 = 0
    /// When it was received (`VideoFrame.arrivalTime` of its decoded picture).
    var arrivalTime: UInt64 = 0
    /// 1 for the camera's first JPEG, one more for each after (the decoded frame's `sequence`).
    var sequence: UInt64 = 0
}
