import CPipeWire

/// When a PipeWire camera's frame was captured: the producer's own time for the buffer when it gives a
/// plausible one, else the moment the camera dequeued it.
///
/// The producer's time is the `pts` of the buffer's `spa_meta_header` (the camera asks for that meta
/// when it connects; PipeWire's V4L2 plugin and libcamera fill it from the driver's CLOCK_MONOTONIC
/// timestamp, pw-virtual-camera with the moment it hands the frame over). Stamping at dequeue instead
/// makes every frame that waited in the stream's queue (a loop thread starved of CPU) look as late as
/// its wait; the pts does not move with the wait.
///
/// Plausible means on this machine's CLOCK_MONOTONIC near `now`: not ahead of it by more than
/// `futureTolerance`, and not older than `maximumAge`. Anything else (no
/// meta, a pts of 0 or below, a producer counting on another clock: wall time, a stream's own zero)
/// falls back to `now`.
enum PipeWireBufferTime {
    /// How far ahead of `now` a pts may be: a producer on the same clock is never ahead; this is room
    /// for a producer that rounds its times.
    static let futureTolerance: UInt64 = 2_000_000
    /// How far behind `now` a pts may be: a frame that waited longer than this in a queue is taken for
    /// one stamped on another clock.
    static let maximumAge: UInt64 = 1_000_000_000

    /// The frame's capture time (CLOCK_MONOTONIC ns) for a buffer whose header says `pts` (nil: no
    /// header), dequeued at `now`.
    static func captureTime(pts: Int64?, now: UInt64) -> UInt64 {
        guard let pts, pts > 0 else { return now }
        let time = UInt64(pts)
        let plausible = time > now ? time - now <= futureTolerance : now - time <= maximumAge
        return plausible ? time : now
    }

    /// The capture time of `buffer`, dequeued at `now` (see the type).
    static func captureTime(of buffer: UnsafePointer<spa_buffer>, now: UInt64) -> UInt64 {
        let header = spa_buffer_find_meta_data(buffer, SPA_META_Header.rawValue, MemoryLayout<spa_meta_header>.size)
        return captureTime(pts: header?.assumingMemoryBound(to: spa_meta_header.self).pointee.pts, now: now)
    }
}
