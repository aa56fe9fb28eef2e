import MediaSupport
import StudioCore

/// One camera's picture settings applied to its frames before composition, in the order
/// `PictureSettings` documents: crop, mirror/flip, rotation, colour, beauty.
///
/// Takes I420 (other pipeline formats are converted to I420 first) and returns I420. Settings that
/// change nothing return the very frame given (same storage, no copy). Outputs come from frame pools
/// kept per output size, the lookup tables are rebuilt only when the colour settings change and the
/// beauty filter keeps its buffers, so a steady stream of frames allocates nothing.
///
/// Not thread-safe: one per camera, owned by the program thread.
public final class PictureProcessor {
    private var pools: [Int: FramePool] = [:]
    private var tables: ColourTables?
    private let beauty = BeautyFilter()
    private let converter = FrameConverter()

    public init() {}

    /// `frame` with `settings` applied. Throws when `settings` have a `problem` (named as the operator
    /// would see it) or a non-I420 frame cannot be converted.
    public func process(_ frame: VideoFrame, settings: PictureSettings) throws -> VideoFrame {
        if let problem = settings.problem { throw PictureError(problem) }
        var current = frame
        if frame.format != .i420 {
            current = makeFrame(width: frame.width, height: frame.height, like: frame)
            try converter.convert(frame, into: current)
        }
        if settings.isIdentity { return current }
        // True once `current` is a frame of ours, which later steps may change in place.
        var owned = current.storage !== frame.storage

        let geometry = PictureGeometry(settings: settings, sourceWidth: current.width, sourceHeight: current.height)
        if !geometry.isIdentity(sourceWidth: current.width, sourceHeight: current.height) {
            let output = makeFrame(width: geometry.outputWidth, height: geometry.outputHeight, like: current)
            geometry.apply(current, into: output)
            current = output
            owned = true
        }

        if tables.map({ !$0.matches(settings) }) ?? true { tables = ColourTables(settings) }
        if let tables, tables.luma != nil || tables.chroma != nil {
            let output = owned ? current : makeFrame(width: current.width, height: current.height, like: current)
            tables.apply(current, into: output)
            current = output
            owned = true
        }

        if settings.beauty > 0 {
            let output = owned ? current : makeFrame(width: current.width, height: current.height, like: current)
            if !owned { for plane in 1..<3 { ColourTables.copyPlane(plane, of: current, into: output) } }
            beauty.apply(current, into: output, strength: settings.beauty)
            current = output
        }
        return current
    }

    /// An I420 frame from the pool for its size, carrying `source`'s capture time and sequence.
    private func makeFrame(width: Int, height: Int, like source: VideoFrame) -> VideoFrame {
        let bytes = VideoFrame.byteCount(format: .i420, width: width, height: height)
        let pool: FramePool
        if let existing = pools[bytes] {
            pool = existing
        } else {
            // Sizes change only with the settings; keep the few most recent.
            if pools.count >= 4 { pools.removeAll() }
            pool = FramePool(capacity: bytes)
            pools[bytes] = pool
        }
        return VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool,
                                   captureTime: source.captureTime, sequence: source.sequence)
    }
}

/// Picture settings that cannot be applied, in the operator's words.
public struct PictureError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
