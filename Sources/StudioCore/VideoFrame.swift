import Synchronization

/// Pixel layouts the pipeline understands. The program runs in `i420` end to end (what x264 takes);
/// cameras may deliver others, which the switcher's scaler converts in the same pass as scaling.
public enum PixelFormat: String, Sendable, Codable, CaseIterable {
    case i420      // planar Y, U, V; 4:2:0 (V4L2 YU12, FFmpeg yuv420p)
    case nv12      // planar Y, interleaved UV; 4:2:0
    case yuyv      // packed 4:2:2 (V4L2 YUYV, FFmpeg yuyv422)
    case uyvy      // packed 4:2:2
    case rgb24
    case bgr24
    case bgra
    case rgba

    /// Bytes per row and rows of each plane for a frame of this format, with rows padded to `alignment`.
    public func planeLayouts(width: Int, height: Int, alignment: Int = 32) -> [PlaneLayout] {
        func align(_ value: Int) -> Int { (value + alignment - 1) / alignment * alignment }
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        switch self {
        case .i420:
            let y = align(width), c = align(chromaWidth)
            return [PlaneLayout(offset: 0, stride: y, rows: height),
                    PlaneLayout(offset: y * height, stride: c, rows: chromaHeight),
                    PlaneLayout(offset: y * height + c * chromaHeight, stride: c, rows: chromaHeight)]
        case .nv12:
            let y = align(width), c = align(chromaWidth * 2)
            return [PlaneLayout(offset: 0, stride: y, rows: height),
                    PlaneLayout(offset: y * height, stride: c, rows: chromaHeight)]
        case .yuyv, .uyvy:
            return [PlaneLayout(offset: 0, stride: align(width * 2), rows: height)]
        case .rgb24, .bgr24:
            return [PlaneLayout(offset: 0, stride: align(width * 3), rows: height)]
        case .bgra, .rgba:
            return [PlaneLayout(offset: 0, stride: align(width * 4), rows: height)]
        }
    }
}

/// Where one plane sits inside a frame's storage.
public struct PlaneLayout: Hashable, Sendable {
    public var offset: Int
    public var stride: Int
    public var rows: Int
    public init(offset: Int, stride: Int, rows: Int) {
        self.offset = offset
        self.stride = stride
        self.rows = rows
    }
    public var byteCount: Int { stride * rows }
}

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

    public init(format: PixelFormat, width: Int, height: Int, planes: [PlaneLayout], storage: FrameStorage,
                captureTime: UInt64, sequence: UInt64) {
        precondition(planes.allSatisfy { $0.offset + $0.byteCount <= storage.capacity }, "plane outside storage")
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
}
