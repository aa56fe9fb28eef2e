import Synchronization

/// Raw bytes of one frame, 64-byte aligned. Written only by the producer before the frame is
/// published; after that every holder only reads it.
///
/// `@unchecked Sendable`: invariant — the memory is mutated only before the owning `VideoFrame` is
/// handed to another thread (publication through a lock or queue orders the writes), never after.
public final class FrameStorage: @unchecked Sendable {
    public let bytes: UnsafeMutableRawPointer
    public let capacity: Int
    /// True when the memory came back from the pool: it still holds a picture its producer made
    /// earlier, so a producer that redraws only what changed may skip the rest.
    public let isRecycled: Bool
    private let pool: FramePool?

    /// Fresh, unpooled storage.
    public init(capacity: Int) {
        self.capacity = capacity
        self.bytes = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 64)
        self.pool = nil
        self.isRecycled = false
    }

    fileprivate init(bytes: UnsafeMutableRawPointer, capacity: Int, pool: FramePool, isRecycled: Bool) {
        self.bytes = bytes
        self.capacity = capacity
        self.pool = pool
        self.isRecycled = isRecycled
    }

    deinit {
        if let pool { pool.recycle(bytes, capacity: capacity) } else { bytes.deallocate() }
    }
}

/// Recycles frame memory of one size, so steady-state capture and compose allocate nothing.
/// Holds at most `limit` idle buffers; more are freed.
public final class FramePool: Sendable {
    public let capacity: Int
    private let limit: Int
    /// Idle buffers, kept as addresses (a plain Sendable value): the pool alone owns them, and the
    /// Mutex makes handing one out exclusive.
    private let idle = Mutex<[UInt]>([])

    public init(capacity: Int, limit: Int = 8) {
        self.capacity = capacity
        self.limit = limit
    }

    public func makeStorage() -> FrameStorage {
        if let reused = idle.withLock({ $0.popLast() }).flatMap(UnsafeMutableRawPointer.init(bitPattern:)) {
            return FrameStorage(bytes: reused, capacity: capacity, pool: self, isRecycled: true)
        }
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 64)
        return FrameStorage(bytes: bytes, capacity: capacity, pool: self, isRecycled: false)
    }

    fileprivate func recycle(_ bytes: UnsafeMutableRawPointer, capacity: Int) {
        let kept = idle.withLock { list -> Bool in
            guard list.count < limit else { return false }
            list.append(UInt(bitPattern: bytes))
            return true
        }
        if !kept { bytes.deallocate() }
    }

    deinit { idle.withLock { $0.forEach { UnsafeMutableRawPointer(bitPattern: $0)?.deallocate() } } }
}


/// One picture from a camera or from the program compositor.
public struct VideoFrame: Sendable {
    public var format: PixelFormat
    public var width: Int
    public var height: Int
    public var planes: [PlaneLayout]
    public var storage: FrameStorage
    /// CLOCK_MONOTONIC nanoseconds when the frame was captured (or composed).
    public var captureTime: UInt64
    /// Counts frames from one producer; gaps mean the producer dropped some.
    public var sequence: UInt64
    /// The source's full size divided by this gives the picture's size: 1 for a full-size picture, 2, 4
    /// or 8 for an MJPEG camera's reduced decode (`DecodeDemand.reduced`), which only the multiview takes.
    public var reduction = 1
    /// A program frame's way so far (set by the program thread on the frame it delivers; the encoder
    /// carries it on to the frame's packet): nil for a camera's frames.
    public var times: FrameTimes?
    /// When the frame reached the pipeline (CLOCK_MONOTONIC ns), when that is not its capture time: a
    /// PipeWire camera's frame stamped with its producer's time but dequeued later. 0: `captureTime`.
    public var arrivalTime: UInt64 = 0
    /// When another machine took the picture, on this server's wall clock (µs since 1970): a capture
    /// node's picture (its `CaptureTimeSEI`, in the switcher's time base). nil for this machine's own
    /// cameras, whose `captureTime` says it.
    public var remoteCaptureTime: Int64?

    /// When the frame reached the pipeline: what a source's liveness is judged by (a frame that waited
    /// in a starved queue is late, not a sign of a lost camera). Its age for latency is `captureTime`'s.
    public var arrivedAt: UInt64 { arrivalTime != 0 ? arrivalTime : captureTime }

    public init(format: PixelFormat, width: Int, height: Int, planes: [PlaneLayout], storage: FrameStorage,
                captureTime: UInt64, sequence: UInt64) {
        // The last row of a plane ends after its picture bytes (a region's rows need not reach the stride).
        precondition(zip(planes, format.rowBytes(width: width)).allSatisfy { plane, rowBytes in
            plane.offset >= 0 && plane.offset + max(0, plane.rows - 1) * plane.stride + rowBytes <= storage.capacity
        }, "plane outside storage")
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.storage = storage
        self.captureTime = captureTime
        self.sequence = sequence
    }

    /// Allocates a frame of the given format with the default plane layout.
    public static func allocate(format: PixelFormat, width: Int, height: Int, pool: FramePool? = nil,
                                captureTime: UInt64 = 0, sequence: UInt64 = 0) -> VideoFrame {
        let planes = format.planeLayouts(width: width, height: height)
        let size = planes.map { $0.offset + $0.byteCount }.max() ?? 0
        let storage: FrameStorage
        if let pool, pool.capacity >= size { storage = pool.makeStorage() } else { storage = FrameStorage(capacity: size) }
        return VideoFrame(format: format, width: width, height: height, planes: planes, storage: storage,
                          captureTime: captureTime, sequence: sequence)
    }

    /// Bytes needed by `allocate(format:width:height:)`, to size a `FramePool`.
    public static func byteCount(format: PixelFormat, width: Int, height: Int) -> Int {
        format.planeLayouts(width: width, height: height).map { $0.offset + $0.byteCount }.max() ?? 0
    }

    public func plane(_ index: Int) -> UnsafeMutableRawPointer { storage.bytes + planes[index].offset }

    /// The part of the picture inside `rect`, as a frame sharing this one's storage (no copy): a crop to
    /// read from, or a place in a composed picture to write into before it is published. Nil when the
    /// rectangle is empty, not inside the picture, or does not start on a whole sample of every plane
    /// (4:2:0 needs even x and y; packed 4:2:2 even x).
    public func region(_ rect: PixelRect) -> VideoFrame? {
        guard !rect.isEmpty, rect.x >= 0, rect.y >= 0, rect.maxX <= width, rect.maxY <= height else { return nil }
        let geometry = format.row.planes
        guard geometry.allSatisfy({ rect.x % $0.groupWidth == 0 && rect.y % $0.rowStep == 0 }) else { return nil }
        let regionPlanes = zip(planes, geometry).map { plane, shape in
            PlaneLayout(offset: plane.offset + rect.y / shape.rowStep * plane.stride + rect.x / shape.groupWidth * shape.bytesPerGroup,
                        stride: plane.stride, rows: shape.rows(height: rect.height))
        }
        var part = VideoFrame(format: format, width: rect.width, height: rect.height, planes: regionPlanes, storage: storage,
                              captureTime: captureTime, sequence: sequence)
        part.reduction = reduction
        return part
    }
}
