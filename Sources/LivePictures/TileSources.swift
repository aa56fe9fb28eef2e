import Synchronization
import StudioCore
import StudioSystem
import MediaSupport

/// One tile's newest picture: a small JPEG.
public struct TilePicture: Sendable, Equatable {
    public let jpeg: [UInt8]
    public let width: Int
    public let height: Int
    /// 1 for the tile's first picture, one more for each after (gaps never: a reader that sees a jump
    /// missed pictures, as a slow reader should).
    public let sequence: UInt64
    /// When the frame it shows was captured (CLOCK_MONOTONIC nanoseconds; the program's: when composed).
    public let captureTime: UInt64
}

/// What the tile thread did, since it started.
public struct TileCounters: Sendable, Equatable {
    /// JPEGs made.
    public var pictures: Int64 = 0
    /// Rounds skipped because the program's late ticks grew (and the back-off after).
    public var skippedProgramBehind: Int64 = 0
    /// Rounds skipped because the tile thread had spent its CPU budget for the second.
    public var skippedOverBudget: Int64 = 0
    /// Rounds that fell due while the previous round's pictures were still being made: skipped, never queued.
    public var skippedOverrun: Int64 = 0
    /// Frames that could not be scaled or encoded (the tile keeps its previous picture).
    public var failures: Int64 = 0
    /// Scene pictures composed (each then made a JPEG, counted in `pictures` too).
    public var sceneCompositions: Int64 = 0
    /// Times a watched tile was due but its source had not changed since its picture (for a scene: none
    /// of its cameras' frames, slates or its layout): nothing composed or encoded.
    public var unchanged: Int64 = 0
    /// CPU time of the tile thread (nanoseconds).
    public var cpuNanoseconds: UInt64 = 0
}

/// Where the tiles' pictures come from. The program's frames come through `TilePictures.offerProgram`.
public struct TileSources: Sendable {
    /// The newest-frame slot of the camera named so (present or lost), nil for a name that is no camera.
    public var camera: @Sendable (String) -> LatestValue<VideoFrame>?
    /// Every camera's name, in order.
    public var cameraNames: @Sendable () -> [String]
    /// The camera on preview; nil when preview is empty or a scene.
    public var previewCamera: @Sendable () -> String?
    /// The program's late ticks so far: when they grow, the machine is behind and the tiles skip.
    public var lateTicks: @Sendable () -> Int64
    /// The scenes (their tiles are composed; see `TileScenes`).
    public var scenes: TileScenes
    /// Told (on the tile thread, only when it changes) whether a camera or scene tile is watched: the
    /// cameras' pictures are wanted (a camera nobody else needs is then decoded small, else not at all).
    public var camerasWatched: @Sendable (Bool) -> Void

    public init(camera: @escaping @Sendable (String) -> LatestValue<VideoFrame>?, cameraNames: @escaping @Sendable () -> [String],
                previewCamera: @escaping @Sendable () -> String?, lateTicks: @escaping @Sendable () -> Int64, scenes: TileScenes = .none,
                camerasWatched: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.camera = camera
        self.cameraNames = cameraNames
        self.previewCamera = previewCamera
        self.lateTicks = lateTicks
        self.scenes = scenes
        self.camerasWatched = camerasWatched
    }
}

/// The scenes' tiles: their names and a composer of their pictures (the switcher's `SceneThumbnails`,
/// wired by the server: this module does not know the switcher).
public struct TileScenes: Sendable {
    /// Every scene's name, in order.
    public var names: @Sendable () -> [String]
    /// The scene on preview; nil when preview is empty or a camera.
    public var onPreview: @Sendable () -> String?
    /// `compose(name, previous)`: the scene composed now at tile size, with what it was made from (its
    /// inputs); the frame is nil when the inputs are `previous` (nothing changed: nothing composed). Nil
    /// for no such scene. Called on the tile thread only.
    public var compose: @Sendable (String, [UInt64]?) -> (frame: VideoFrame?, inputs: [UInt64])?

    public init(names: @escaping @Sendable () -> [String], onPreview: @escaping @Sendable () -> String?,
                compose: @escaping @Sendable (String, [UInt64]?) -> (frame: VideoFrame?, inputs: [UInt64])?) {
        self.names = names
        self.onPreview = onPreview
        self.compose = compose
    }

    /// No scenes.
    public static let none = TileScenes(names: { [] }, onPreview: { nil }, compose: { _, _ in nil })
}
