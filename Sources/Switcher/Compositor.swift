import FrameDrawing
import Graphics
import MediaSupport
import StudioCore
import StudioSystem

/// A camera's picture for one program tick, as the program thread found it: its newest frame, or the
/// slate that stands for it ("CAMERA LOST", "cam2").
enum CameraPicture {
    case frame(VideoFrame)
    case slate([String])

    /// `camera`'s newest frame at `now`, or the slate that stands for it: "CAMERA LOST" when its device
    /// went away (`lost`), it was removed, or its newest frame is older than `lossTimeout`; "WAITING FOR"
    /// before its first frame; "NO CAMERA" for a name never added. The frame is as captured (no picture
    /// settings applied). A camera with a `schedule` (a player) gives its picture for `tick` (a program
    /// tick's due time) instead, where it published one by then (stamped with the time it is shown from).
    static func newest(_ camera: CameraID, sources: [CameraID: LatestValue<VideoFrame>], schedules: [CameraID: PictureSchedule] = [:],
                       tick: UInt64? = nil, lost: Set<CameraID>, known: Set<CameraID>, now: UInt64, lossTimeout: UInt64) -> CameraPicture {
        if lost.contains(camera) { return .slate(["CAMERA LOST", camera.name]) }
        guard let slot = sources[camera] else { return .slate([known.contains(camera) ? "CAMERA LOST" : "NO CAMERA", camera.name]) }
        let latest = slot.latest()
        // A picture published ahead is as live as one published now.
        if let scheduled = tick.flatMap({ schedules[camera]?.picture(at: $0) }), scheduled.arrivedAt + lossTimeout >= now { return .frame(scheduled) }
        if let frame = latest.value, frame.arrivedAt + lossTimeout >= now { return .frame(frame) }
        // Never delivered a frame yet (just started or plugged in): not a loss.
        return .slate([latest.version == 0 ? "WAITING FOR" : "CAMERA LOST", camera.name])
    }
}

/// Layers placed in pixels for the program's size, with the pictures of their images and texts made
/// (decoded, rendered, scaled) once, when the scenes or overlays are set, not per frame.
struct PreparedLayers: Sendable {
    let layers: [ResolvedLayer]
    /// Per layer: its image's or text's picture; nil for cameras, colours and empty layers.
    let graphics: [LayerGraphic?]

    /// `what` names the scene or overlay in errors ("scene 'news'").
    init(_ layers: [ResolvedLayer], what: String, texts: TextRenderer) throws(SwitchError) {
        self.layers = layers
        var graphics: [LayerGraphic?] = []
        for (index, layer) in layers.enumerated() {
            do { graphics.append(try LayerGraphics.prepare(layer, texts: texts)) } catch {
                throw .invalidScene("\(what), layer \(index + 1) (\(layer.source)): \(error.description)")
            }
        }
        self.graphics = graphics
    }

    init(layers: [ResolvedLayer], graphics: [LayerGraphic?]) {
        self.layers = layers
        self.graphics = graphics
    }
}

/// A scene ready to compose at the program's size: its layers placed in pixels once, when the scenes
/// are set, not per frame.
struct PreparedScene: Sendable {
    let description: SceneDescription
    let layers: PreparedLayers
    let background: YUVColor
    /// The cameras it shows, for tally and for fetching their frames once per tick.
    let cameras: [CameraID]

    init(_ description: SceneDescription, width: Int, height: Int, texts: TextRenderer) throws(SwitchError) {
        self.description = description
        layers = try PreparedLayers(description.resolvedLayers(width: width, height: height), what: "scene '\(description.name)'", texts: texts)
        background = YUVColor(description.background)
        cameras = description.cameraNames.map { CameraID($0) }
    }

    init(description: SceneDescription, layers: PreparedLayers, background: YUVColor, cameras: [CameraID]) {
        self.description = description
        self.layers = layers
        self.background = background
        self.cameras = cameras
    }

    var name: String { description.name }
}

/// An overlay ready to draw over the program picture, and whether it is on air.
struct PreparedOverlay: Sendable {
    let description: OverlayDescription
    let layers: PreparedLayers
    var on: Bool

    init(_ description: OverlayDescription, width: Int, height: Int, texts: TextRenderer) throws(SwitchError) {
        self.description = description
        layers = try PreparedLayers(description.resolvedLayers(width: width, height: height), what: "overlay '\(description.name)'", texts: texts)
        on = description.on
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
/// untouched when it already is program-size I420, else scaled with libswscale; a player's frame with
/// alpha is composited over black there), or a scene composed from its layers, bottom first: each
/// camera layer's crop scaled to its rectangle (one scaler per layer, kept while its source's format and
/// size stay), copied where it is opaque and blended where it has opacity or alpha (a player's item with
/// transparency keys over the layers below), then its border. A lost camera shows its slate in its
/// layer only. Not thread-safe.
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
        let newest = draw(scene.layers, scope: .scene(scene.name), pictures: pictures, on: canvas)
        var result = canvas
        // A composed picture is as old as its newest camera frame (for latency accounting downstream).
        if newest > 0 { result.captureTime = newest }
        return RenderedPicture(frame: result, kind: .composed)
    }

    /// `picture` with the overlays drawn on top, bottom first. A camera frame passed through is shared
    /// with whoever else holds it (ISO recorders, the next tick): it is copied first, never drawn on.
    func overlay(_ picture: RenderedPicture, with overlays: [PreparedOverlay], pictures: (CameraID) -> CameraPicture) -> RenderedPicture {
        guard !overlays.isEmpty else { return picture }
        var result = picture
        if picture.kind == .passThrough {
            let copy = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool,
                                           captureTime: picture.frame.captureTime, sequence: picture.frame.sequence)
            PlaneOps.copy(picture.frame, into: copy)
            result = RenderedPicture(frame: copy, kind: .composed)
        }
        for overlay in overlays {
            _ = draw(overlay.layers, scope: .overlay(overlay.name), pictures: pictures, on: result.frame)
        }
        return result
    }

    /// Forgets the scalers of scenes that are gone (after the scenes changed).
    func retainScalers(forScenes names: Set<String>) {
        layerScalers = layerScalers.filter { (entry: (key: LayerKey, value: FrameConverter)) -> Bool in
            if case .scene(let name) = entry.key.scope { return names.contains(name) }
            return true
        }
    }

    /// Draws `prepared`'s layers on `canvas`, bottom first; the capture time of the newest camera frame shown.
    private func draw(_ prepared: PreparedLayers, scope: LayerKey.Scope, pictures: (CameraID) -> CameraPicture, on canvas: VideoFrame) -> UInt64 {
        var newest: UInt64 = 0
        for (index, layer) in prepared.layers.enumerated() where !layer.rect.isEmpty && layer.opacity > 0 {
            let opacity = Int((layer.opacity * 256).rounded())
            switch layer.source {
            case .color(let color):
                PlaneOps.blend(YUVColor(color), opacity: opacity, over: layer.rect, of: canvas)
            case .image, .text:
                guard let graphic = prepared.graphics[index], let target = canvas.region(graphic.rect) else { break }
                if let alpha = graphic.picture.alpha {
                    alpha.withUnsafeBufferPointer { PlaneOps.blend(graphic.picture.picture, alpha: $0, opacity: opacity, over: target) }
                } else {
                    PlaneOps.blend(graphic.picture.picture, alpha: nil, opacity: opacity, over: target)
                }
            case .camera(let name):
                let camera = CameraID(name)
                switch pictures(camera) {
                case .slate(let lines):
                    draw(slate: lines, in: layer.rect, opacity: opacity, on: canvas)
                case .frame(let frame):
                    newest = max(newest, frame.captureTime)
                    do {
                        try draw(frame, layer: layer, key: LayerKey(scope: scope, index: index), opacity: opacity, on: canvas)
                    } catch {
                        errors.append((camera, "\(frame.format.rawValue) \(frame.width)x\(frame.height): \(error.description)"))
                        draw(slate: ["CAMERA ERROR", name], in: layer.rect, opacity: opacity, on: canvas)
                    }
                }
            }
            if layer.borderWidth > 0 { drawBorder(layer, on: canvas) }
        }
        return newest
    }

    // MARK: Layers

    private func draw(_ frame: VideoFrame, layer: ResolvedLayer, key: LayerKey, opacity: Int, on canvas: VideoFrame) throws(FFmpegError) {
        let (crop, destination) = layer.placement(sourceWidth: frame.width, sourceHeight: frame.height)
        guard let target = canvas.region(destination) else { return }
        let cropRect = crop.pixelRect(width: frame.width, height: frame.height)
        let source = (cropRect.width == frame.width && cropRect.height == frame.height) ? frame : (frame.region(cropRect) ?? frame)
        // A frame with alpha (a player's item with transparency) is keyed by it: scaled with its alpha
        // plane (yuva420p), then blended where it is opaque, over the layers below, with the layer's opacity.
        let format: PixelFormat = source.format.hasAlpha ? .yuva420p : .i420
        if source.format == format, source.width == destination.width, source.height == destination.height {
            PlaneOps.blend(source, opacity: opacity, over: target)
            return
        }
        let scaled = VideoFrame.allocate(format: format, width: destination.width, height: destination.height,
                                         pool: layerPool(format, width: destination.width, height: destination.height))
        let converter = layerScalers[key] ?? FrameConverter()
        if layerScalers.count > 64 { layerScalers.removeAll() }
        layerScalers[key] = converter
        try converter.convert(source, into: scaled)
        PlaneOps.blend(scaled, opacity: opacity, over: target)
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

    private func layerPool(_ format: PixelFormat, width: Int, height: Int) -> FramePool {
        let bytes = VideoFrame.byteCount(format: format, width: width, height: height)
        if let pool = layerPools[bytes] { return pool }
        if layerPools.count > 32 { layerPools.removeAll() }
        let pool = FramePool(capacity: bytes, limit: 4)
        layerPools[bytes] = pool
        return pool
    }

    private struct LayerKey: Hashable {
        enum Scope: Hashable {
            case scene(String), overlay(String)
        }
        var scope: Scope
        var index: Int
    }
}
