import FrameDrawing
import MediaSupport
import StudioCore

/// A camera's picture for one program tick, as the program thread found it: its newest frame, or the
/// slate that stands for it ("CAMERA LOST", "cam2").
enum CameraPicture {
    case frame(VideoFrame)
    case slate([String])
}

/// A scene ready to compose at the program's size: its layers placed in pixels once, when the scenes
/// are set, not per frame.
struct PreparedScene: Sendable {
    let description: SceneDescription
    let layers: [ResolvedLayer]
    let background: YUVColor
    /// The cameras it shows, for tally and for fetching their frames once per tick.
    let cameras: [CameraID]

    init(_ description: SceneDescription, width: Int, height: Int) {
        self.description = description
        layers = description.resolvedLayers(width: width, height: height)
        background = YUVColor(description.background)
        cameras = description.cameraNames.map { CameraID($0) }
    }

    var name: String { description.name }
}

/// One program picture and how it was made.
struct RenderedPicture {
    enum Kind { case passThrough, scaled, slate, composed }
    var frame: VideoFrame
    var kind: Kind
    /// The slate's lines when the picture is a full-frame slate.
    var slate: [String]?
}

/// Renders what the program shows, on the program thread: a camera full frame (its frame passed on
/// untouched when it already is program-size I420, else scaled with libswscale), or a scene composed
/// from its layers, bottom first: each camera layer's crop scaled to its rectangle (one scaler per
/// layer, kept while its source's format and size stay), copied where it is opaque and blended where
/// it has opacity, then its border. A lost camera shows its slate in its layer only. Not thread-safe.
final class Compositor {
    let width: Int
    let height: Int
    private let pool: FramePool
    private let slates: SlateRenderer
    private let scaler: FrameScaler
    private var layerScalers: [LayerKey: FrameConverter] = [:]
    private var layerPools: [Int: FramePool] = [:]
    /// Conversion failures since the last `takeErrors()`: (camera, error text).
    private var errors: [(camera: CameraID, error: String)] = []

    init(width: Int, height: Int, pool: FramePool) {
        self.width = width
        self.height = height
        self.pool = pool
        slates = SlateRenderer(width: width, height: height, pool: pool)
        scaler = FrameScaler(width: width, height: height, pool: pool)
    }

    func takeErrors() -> [(camera: CameraID, error: String)] {
        defer { errors.removeAll() }
        return errors
    }

    /// A full-frame slate with the program time.
    func slate(_ lines: [String], programTime: MediaTime, captureTime: UInt64, sequence: UInt64) -> RenderedPicture {
        RenderedPicture(frame: slates.render(lines: lines.map { $0.uppercased() }, programTime: programTime,
                                             captureTime: captureTime, sequence: sequence),
                        kind: .slate, slate: lines)
    }

    /// One camera, full frame.
    func render(camera: CameraID, _ picture: CameraPicture, programTime: MediaTime, now: UInt64, sequence: UInt64) -> RenderedPicture {
        switch picture {
        case .slate(let lines):
            return slate(lines, programTime: programTime, captureTime: now, sequence: sequence)
        case .frame(let frame):
            if frame.format == .i420, frame.width == width, frame.height == height {
                return RenderedPicture(frame: frame, kind: .passThrough)
            }
            do {
                return RenderedPicture(frame: try scaler.convert(frame, sequence: sequence), kind: .scaled)
            } catch {
                errors.append((camera, "\(frame.format.rawValue) \(frame.width)x\(frame.height): \(error.description)"))
                return slate(["CAMERA ERROR", camera.name], programTime: programTime, captureTime: now, sequence: sequence)
            }
        }
    }

    /// A scene, composed from its layers; `picture` gives each camera's picture for this tick.
    func render(scene: PreparedScene, pictures: (CameraID) -> CameraPicture, now: UInt64, sequence: UInt64) -> RenderedPicture {
        let canvas = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, captureTime: now, sequence: sequence)
        canvas.fill(with: scene.background)
        var newest: UInt64 = 0
        for (index, layer) in scene.layers.enumerated() where !layer.rect.isEmpty && layer.opacity > 0 {
            let opacity = Int((layer.opacity * 256).rounded())
            switch layer.source {
            case .color(let color):
                PlaneOps.blend(YUVColor(color), opacity: opacity, over: layer.rect, of: canvas)
            case .camera(let name):
                let camera = CameraID(name)
                switch pictures(camera) {
                case .slate(let lines):
                    draw(slate: lines, in: layer.rect, opacity: opacity, on: canvas)
                case .frame(let frame):
                    newest = max(newest, frame.captureTime)
                    let key = LayerKey(scene: scene.name, index: index)
                    do {
                        try draw(frame, layer: layer, key: key, opacity: opacity, on: canvas)
                    } catch {
                        errors.append((camera, "\(frame.format.rawValue) \(frame.width)x\(frame.height): \(error.description)"))
                        draw(slate: ["CAMERA ERROR", name], in: layer.rect, opacity: opacity, on: canvas)
                    }
                }
            }
            if layer.borderWidth > 0 { drawBorder(layer, on: canvas) }
        }
        var result = canvas
        // A composed picture is as old as its newest camera frame (for latency accounting downstream).
        if newest > 0 { result.captureTime = newest }
        return RenderedPicture(frame: result, kind: .composed)
    }

    /// Forgets the scalers of scenes that are gone (after the scenes changed).
    func retainScalers(forScenes names: Set<String>) {
        layerScalers = layerScalers.filter { names.contains($0.key.scene) }
    }

    // MARK: Layers

    private func draw(_ frame: VideoFrame, layer: ResolvedLayer, key: LayerKey, opacity: Int, on canvas: VideoFrame) throws(FFmpegError) {
        let (crop, destination) = layer.placement(sourceWidth: frame.width, sourceHeight: frame.height)
        guard let target = canvas.region(destination) else { return }
        let cropRect = crop.pixelRect(width: frame.width, height: frame.height)
        let source = (cropRect.width == frame.width && cropRect.height == frame.height) ? frame : (frame.region(cropRect) ?? frame)
        if source.format == .i420, source.width == destination.width, source.height == destination.height {
            PlaneOps.blend(source, alpha: nil, opacity: opacity, over: target)
            return
        }
        let scaled = VideoFrame.allocate(format: .i420, width: destination.width, height: destination.height,
                                         pool: layerPool(width: destination.width, height: destination.height))
        let converter = layerScalers[key] ?? FrameConverter()
        if layerScalers.count > 64 { layerScalers.removeAll() }
        layerScalers[key] = converter
        try converter.convert(source, into: scaled)
        PlaneOps.blend(scaled, alpha: nil, opacity: opacity, over: target)
    }

    private func draw(slate lines: [String], in rect: PixelRect, opacity: Int, on canvas: VideoFrame) {
        guard let target = canvas.region(rect) else { return }
        let background = slates.background(lines.map { $0.uppercased() }, width: rect.width, height: rect.height)
        PlaneOps.blend(background, alpha: nil, opacity: opacity, over: target)
    }

    private func drawBorder(_ layer: ResolvedLayer, on canvas: VideoFrame) {
        let r = layer.rect, w = min(layer.borderWidth, r.width / 2, r.height / 2)
        let color = YUVColor(layer.borderColor)
        for edge in [PixelRect(x: r.x, y: r.y, width: r.width, height: w), PixelRect(x: r.x, y: r.maxY - w, width: r.width, height: w),
                     PixelRect(x: r.x, y: r.y, width: w, height: r.height), PixelRect(x: r.maxX - w, y: r.y, width: w, height: r.height)] {
            canvas.fill(edge, with: color)
        }
    }

    private func layerPool(width: Int, height: Int) -> FramePool {
        let bytes = VideoFrame.byteCount(format: .i420, width: width, height: height)
        if let pool = layerPools[bytes] { return pool }
        if layerPools.count > 32 { layerPools.removeAll() }
        let pool = FramePool(capacity: bytes, limit: 4)
        layerPools[bytes] = pool
        return pool
    }

    private struct LayerKey: Hashable {
        var scene: String
        var index: Int
    }
}
