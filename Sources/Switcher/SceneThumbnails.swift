import Synchronization
import FrameDrawing
import Graphics
import StudioCore
import StudioSystem

/// Small live pictures of the switcher's scenes (the console's scene tiles): a scene composed by the
/// program's `Compositor`, with all its layers (cameras, images, texts, colours, borders; a lost
/// camera's slate in its layer), from its cameras' newest frames, at a thumbnail's size.
///
/// - The scenes are prepared at thumbnail size when they are set (`ProgramSwitcher.setScenes`, so on
///   `studio reload` too), on that caller's thread: the switcher's program-size layers scaled, their
///   images' and texts' pictures shrunk (not decoded or rendered a second time).
/// - `compose` runs on its caller's thread (the tile thread), never the program's: the program's
///   frames and compositor are not touched. Compositions run one at a time (a lock; one caller in practice).
/// - Each picture comes with its inputs (the scenes' generation, each camera's frame slot and version,
///   or its slate): given the previous picture's, `compose` does nothing while they are the same.
public final class SceneThumbnails: Sendable {
    public let width: Int
    public let height: Int
    private let switcher: ProgramSwitcher
    private let prepared = Mutex<(generation: UInt64, scenes: [String: PreparedScene])>((0, [:]))
    /// Only touched under its lock; frames come from its own pool.
    private let compositor: Mutex<Compositor>

    /// Thumbnails `width` pixels wide (even), the program's aspect.
    public init(switcher: ProgramSwitcher, width: Int = 320) {
        let format = switcher.format
        let small = max(2, min(width, format.width) & ~1)
        self.width = small
        height = max(2, Int((Double(format.height) * Double(small) / Double(format.width)).rounded()) & ~1)
        self.switcher = switcher
        let pool = FramePool(capacity: VideoFrame.byteCount(format: .i420, width: small, height: height), limit: 4)
        compositor = Mutex(Compositor(width: small, height: height, pool: pool))
        switcher.core.sceneObservers.withLock { observers in
            observers.append { [weak self] scenes, generation in self?.prepare(scenes, generation: generation) }
        }
        let (scenes, generation) = switcher.core.shared.withLock { ($0.scenes, $0.scenesGeneration) }
        prepare(scenes, generation: generation)
    }

    /// The scenes' names, as declared.
    public var sceneNames: [String] { switcher.status.scenes }

    /// The scene on preview, nil when preview is empty or a camera.
    public var sceneOnPreview: String? {
        if case .scene(let name) = switcher.status.preview { return name }
        return nil
    }

    /// The scene `name` composed now from its cameras' newest frames, with its inputs; the frame is nil
    /// when the inputs are `previous` (nothing changed since that picture: nothing composed). Nil for no
    /// such scene.
    public func compose(_ name: String, unless previous: [UInt64]?) -> (frame: VideoFrame?, inputs: [UInt64])? {
        let (generation, scene) = prepared.withLock { ($0.generation, $0.scenes[name]) }
        guard let scene else { return nil }
        let core = switcher.core
        let (sources, lost, known) = core.shared.withLock { ($0.sources, $0.lost, $0.known) }
        let now = core.clock.now(), lossTimeout = switcher.configuration.lossTimeoutNanoseconds(for: switcher.format)
        var inputs = [generation], pictures: [CameraID: CameraPicture] = [:]
        for camera in scene.cameras where pictures[camera] == nil {
            // The version is read before the frame: a frame that comes in between makes the next call compose again.
            let slot = sources[camera], version = slot?.latest().version ?? 0
            let picture = CameraPicture.newest(camera, sources: sources, lost: lost, known: known, now: now, lossTimeout: lossTimeout)
            pictures[camera] = picture
            switch picture {
            case .frame: inputs += [UInt64(UInt(bitPattern: slot.map(ObjectIdentifier.init)?.hashValue ?? 0)), version]
            case .slate(let lines): inputs += [0, UInt64(Self.slateKinds.firstIndex(of: lines.first ?? "") ?? Self.slateKinds.count)]
            }
        }
        guard inputs != previous else { return (nil, inputs) }
        let frame = compositor.withLock { compositor in
            defer { _ = compositor.takeErrors() }  // a frame it could not scale shows "CAMERA ERROR" in its layer; the program reports it
            return compositor.render(scene: scene, pictures: { pictures[$0] ?? .slate(["NO CAMERA", $0.name]) }, now: now, sequence: 0).frame
        }
        return (frame, inputs)
    }

    private static let slateKinds = ["CAMERA LOST", "WAITING FOR", "NO CAMERA"]

    /// Takes the switcher's scenes of `generation` (newer than the ones held), scaled to thumbnail size.
    private func prepare(_ scenes: [String: PreparedScene], generation: UInt64) {
        guard generation > prepared.withLock({ $0.generation }) || generation == 0 else { return }
        let sx = Double(width) / Double(switcher.format.width), sy = Double(height) / Double(switcher.format.height)
        let small = scenes.mapValues { Self.scaled($0, x: sx, y: sy) }
        prepared.withLock { held in
            if generation >= held.generation { held = (generation, small) }
        }
        compositor.withLock { $0.retainScalers(forScenes: Set(small.keys)) }
    }

    /// `scene` for a picture `x` times as wide and `y` times as high: rectangles and borders scaled
    /// (borders at least 2 pixels), image and text pictures shrunk to their new rectangles.
    static func scaled(_ scene: PreparedScene, x sx: Double, y sy: Double) -> PreparedScene {
        func even(_ value: Double) -> Int { Int((value / 2).rounded()) * 2 }
        func scale(_ rect: PixelRect) -> PixelRect {
            let x = even(Double(rect.x) * sx), y = even(Double(rect.y) * sy)
            return PixelRect(x: x, y: y, width: even(Double(rect.maxX) * sx) - x, height: even(Double(rect.maxY) * sy) - y)
        }
        var layers: [ResolvedLayer] = [], graphics: [LayerGraphic?] = []
        for (layer, graphic) in zip(scene.layers.layers, scene.layers.graphics) {
            var small = layer
            small.rect = scale(layer.rect)
            small.borderWidth = layer.borderWidth > 0 ? max(2, even(Double(layer.borderWidth) * sx)) : 0
            layers.append(small)
            graphics.append(graphic.flatMap { graphic -> LayerGraphic? in
                let rect = scale(graphic.rect)
                guard !rect.isEmpty else { return nil }
                return LayerGraphic(picture: LayerGraphics.shrink(graphic.picture, width: rect.width, height: rect.height), rect: rect)
            })
        }
        return PreparedScene(description: scene.description, layers: PreparedLayers(layers: layers, graphics: graphics),
                             background: scene.background, cameras: scene.cameras)
    }
}
