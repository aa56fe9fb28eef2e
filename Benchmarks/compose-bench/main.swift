import BenchmarkSupport
import Foundation
import StudioCore
import Switcher

/// Measures the switcher's compositor (`Switcher.CompositorBenchmark`: the program thread's
/// `Compositor` and `TransitionRenderer`) per program frame on camera-like pictures (moving texture and
/// sensor noise), and writes the same pictures as YUV4MPEG2 with, for each job, the ffmpeg filter graph
/// that makes the same composition from them (the same rectangles and crops, taken from the layers the
/// compositor places), so scripts/bench-compose.sh can run ffmpeg's own filters on the same frames.
///
/// Usage: compose-bench DIRECTORY [FRAMES per camera (default 30)] [ROUNDS over the frames (default 10)]
///        [REPEATS of each measurement, the least counts (default 3)]
/// Writes DIRECTORY/cam480-N.y4m and DIRECTORY/cam720-N.y4m (N = 1...4; 640x480 and 1280x720).
/// Prints one line per (job, ffmpeg peer), tab-separated:
///   JOB  STUDIO_MS_PER_FRAME  PEER_LABEL  INPUT_FILES(comma-separated)  FFMPEG_FILTER_GRAPH  STUDIO_PICTURES
/// where STUDIO_PICTURES (scene jobs only) is DIRECTORY/JOB.studio.y4m: the compositor's pictures of the
/// job, one per frame of the cameras, to compare with what the ffmpeg graph makes of the same frames.
let arguments = BenchmarkArguments(usage: "compose-bench DIRECTORY [FRAMES] [ROUNDS] [REPEATS]")
let directory = arguments.first
let count = arguments.int(2, default: 30)
let rounds = arguments.int(3, default: 10)
let repeats = arguments.int(4, default: 3)

// MARK: Camera-like pictures

/// A smooth random value 0...1 on a lattice of `cell` pixels (value noise, smoothstep between lattice points).
func valueNoise(_ x: Double, _ y: Double, cell: Double, seed: UInt64) -> Double {
    func lattice(_ ix: Int, _ iy: Int) -> Double {
        var h = UInt64(bitPattern: Int64(ix)) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: Int64(iy)) &* 0xC2B2_AE3D_27D4_EB4F ^ seed
        h ^= h >> 29
        h = h &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        return Double(h & 0xFFFF) / 65535
    }
    let fx = x / cell, fy = y / cell
    let ix = Int(fx.rounded(.down)), iy = Int(fy.rounded(.down))
    let tx = fx - Double(ix), ty = fy - Double(iy)
    let sx = tx * tx * (3 - 2 * tx), sy = ty * ty * (3 - 2 * ty)
    let top = lattice(ix, iy) + (lattice(ix + 1, iy) - lattice(ix, iy)) * sx
    let bottom = lattice(ix, iy + 1) + (lattice(ix + 1, iy + 1) - lattice(ix, iy + 1)) * sx
    return top + (bottom - top) * sy
}

/// A camera's scene, larger than its picture so the picture can pan over it: value noise at three
/// scales (large shapes down to fine detail), hard-edged stripes in one part (edges for the scaler), and
/// coloured blotches in the chroma.
struct Scenery {
    static let pan = (x: 256, y: 128)
    let width: Int, height: Int
    var luma: [UInt8], u: [UInt8], v: [UInt8]

    init(width pictureWidth: Int, height pictureHeight: Int, seed: UInt64) {
        width = pictureWidth + Self.pan.x
        height = pictureHeight + Self.pan.y
        let (w, h) = (width, height)
        luma = [UInt8](repeating: 0, count: w * h)
        u = [UInt8](repeating: 0, count: w / 2 * (h / 2))
        v = u
        for y in 0..<h {
            for x in 0..<w {
                let (dx, dy) = (Double(x), Double(y))
                var value = 0.5 * valueNoise(dx, dy, cell: 96, seed: seed) + 0.3 * valueNoise(dx, dy, cell: 17, seed: seed &+ 1)
                    + 0.2 * valueNoise(dx, dy, cell: 3, seed: seed &+ 2)
                if x < w / 3, (x / 12 + y / 40) % 2 == 0 { value = value * 0.4 + 0.55 }
                luma[y * w + x] = UInt8(16 + 219 * min(1, max(0, value)))
            }
        }
        for y in 0..<(h / 2) {
            for x in 0..<(w / 2) {
                let (dx, dy) = (Double(x), Double(y))
                u[y * (w / 2) + x] = UInt8(128 + 60 * (valueNoise(dx, dy, cell: 40, seed: seed &+ 3) - 0.5))
                v[y * (w / 2) + x] = UInt8(128 + 60 * (valueNoise(dx, dy, cell: 40, seed: seed &+ 4) - 0.5))
            }
        }
    }
}

/// Frame `index` of a camera: its picture panned over its scenery (a few pixels a frame, each camera
/// its own way) plus sensor noise that differs every frame (triangular, about 3 codes standard
/// deviation in luma, 1.5 in chroma).
func cameraFrame(_ scenery: Scenery, width: Int, height: Int, index: Int, seed: UInt64) -> VideoFrame {
    let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
    let speed = Int(seed % 3) + 2
    let ox = (index * 2 * speed) % Scenery.pan.x, oy = (index * 2) % Scenery.pan.y
    var state = (UInt64(index) &+ 1) &* 0x9E37_79B9_7F4A_7C15 ^ seed | 1
    func noise(_ bits: UInt64) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state & bits) + Int((state >> 8) & bits) - Int(bits)
    }
    for plane in 0..<3 {
        let (source, sourceWidth, shift, bits): ([UInt8], Int, Int, UInt64) =
            plane == 0 ? (scenery.luma, scenery.width, 0, 7) : (plane == 1 ? scenery.u : scenery.v, scenery.width / 2, 1, 3)
        let rowBytes = width >> shift, rows = height >> shift
        for y in 0..<rows {
            let row = (frame.plane(plane) + y * frame.planes[plane].stride).assumingMemoryBound(to: UInt8.self)
            let from = (y + (oy >> shift)) * sourceWidth + (ox >> shift)
            for x in 0..<rowBytes { row[x] = UInt8(clamping: Int(source[from + x]) + noise(bits)) }
        }
    }
    return frame
}

/// A camera: its `count` frames (written to `path` as Y4M), and the buffer its current frame arrives in.
struct Camera {
    let name: String
    let path: String
    let frames: [VideoFrame]
    /// Where frame `index` is copied before each compose (untimed), as a capture thread delivers a frame
    /// just before the program thread composes it (and as ffmpeg has just read it from the file): the
    /// compositor reads it warm, not from the far end of a 100 MB set of stored frames.
    let arrival: VideoFrame

    func arrive(_ index: Int) {
        memcpy(arrival.storage.bytes, frames[index].storage.bytes,
               VideoFrame.byteCount(format: .i420, width: arrival.width, height: arrival.height))
    }
}

/// The cameras: `count` frames each, written to DIRECTORY/NAME.y4m.
func cameras(prefix: String, width: Int, height: Int, seedBase: UInt64) -> [Camera] {
    (1...4).map { number in
        let seed = seedBase &+ UInt64(number) &* 1_000_003
        let scenery = Scenery(width: width, height: height, seed: seed)
        let frames = (0..<count).map { cameraFrame(scenery, width: width, height: height, index: $0, seed: seed) }
        let name = "\(prefix)-\(number)", path = "\(directory)/\(name).y4m"
        Y4MWriter.write(frames, to: path, tool: "compose-bench")
        return Camera(name: name, path: path, frames: frames, arrival: VideoFrame.allocate(format: .i420, width: width, height: height))
    }
}

let small = cameras(prefix: "cam480", width: 640, height: 480, seedBase: 480)
let large = cameras(prefix: "cam720", width: 1280, height: 720, seedBase: 720)

// MARK: Timing

/// CPU milliseconds per call of `work(frame index)`, each call after frame `index` of every one of
/// `cameras` arrived (untimed), after one warm-up round over the frames (scalers and pools are made
/// there, not measured): the least of `repeats` runs of `rounds` over the frames (the run the shared
/// machine disturbed least, as the script does with ffmpeg's runs).
func measure(arriving cameras: [Camera], _ work: (Int) throws -> VideoFrame) rethrows -> Double {
    for index in 0..<count { _ = try work(index) }
    var best = Double.infinity
    for _ in 0..<repeats {
        var spent = 0.0
        for _ in 0..<rounds {
            for index in 0..<count {
                for camera in cameras { camera.arrive(index) }
                let start = cpuSeconds()
                _ = try work(index)
                spent += cpuSeconds() - start
            }
        }
        best = min(best, spent * 1000 / Double(rounds * count))
    }
    return best
}

// MARK: The same composition as an ffmpeg filter graph

/// `scale` with libswscale's bilinear filter (what studio's scalers use: `FrameConverter` asks for
/// SWS_BILINEAR) and with ffmpeg's default, bicubic.
let scaleFlags = [("bilinear", "bilinear"), ("bicubic (ffmpeg's default)", "bicubic")]

/// Each camera layer of `scene` as ffmpeg filters on input `index` (its crop, then its scale), and where
/// it goes, from the compositor's own placement of the layer for a `sourceWidth` x `sourceHeight` camera.
func layerChains(_ layers: [ResolvedLayer], sourceWidth: Int, sourceHeight: Int, flags: String)
    -> [(chain: String, rect: PixelRect)] {
    var input = 0
    return layers.compactMap { layer in
        guard case .camera = layer.source else { return nil }
        let (crop, destination) = layer.placement(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        let c = crop.pixelRect(width: sourceWidth, height: sourceHeight)
        var filters: [String] = []
        if c.width != sourceWidth || c.height != sourceHeight { filters.append("crop=\(c.width):\(c.height):\(c.x):\(c.y)") }
        filters.append("scale=\(destination.width):\(destination.height):flags=\(flags)")
        defer { input += 1 }
        return ("[\(input):v]" + filters.joined(separator: ","), destination)
    }
}

/// Camera layers tiled with xstack (at their rectangles, black where none is), then each colour layer
/// as a filled `drawbox` with the layer's opacity.
func xstackGraph(_ layers: [ResolvedLayer], width: Int, height: Int, sourceWidth: Int, sourceHeight: Int, flags: String) -> String {
    let chains = layerChains(layers, sourceWidth: sourceWidth, sourceHeight: sourceHeight, flags: flags)
    var parts = chains.enumerated().map { "\($0.element.chain)[l\($0.offset)]" }
    let labels = chains.indices.map { "[l\($0)]" }.joined()
    let layout = chains.map { "\($0.rect.x)_\($0.rect.y)" }.joined(separator: "|")
    var last = "\(labels)xstack=inputs=\(chains.count):layout=\(layout):fill=black"
    for layer in layers {
        guard case .color(let color) = layer.source else { continue }
        let r = layer.rect
        last += String(format: ",drawbox=x=%d:y=%d:w=%d:h=%d:t=fill:color=0x%02X%02X%02X@%.2f",
                       r.x, r.y, r.width, r.height, color.red, color.green, color.blue, layer.opacity)
    }
    parts.append(last)
    return parts.joined(separator: ";")
}

/// The bottom camera layer (full frame) with the others overlaid on it at their rectangles.
func overlayGraph(_ layers: [ResolvedLayer], sourceWidth: Int, sourceHeight: Int, flags: String) -> String {
    let chains = layerChains(layers, sourceWidth: sourceWidth, sourceHeight: sourceHeight, flags: flags)
    var parts = chains.enumerated().map { "\($0.element.chain)[l\($0.offset)]" }
    var below = "[l0]"
    for (index, chain) in chains.enumerated().dropFirst() {
        let out = index == chains.count - 1 ? "" : "[o\(index)]"
        parts.append("\(below)[l\(index)]overlay=x=\(chain.rect.x):y=\(chain.rect.y):shortest=1\(out)")
        below = "[o\(index)]"
    }
    return parts.joined(separator: ";")
}

func emit(_ job: String, _ ms: Double, _ peer: String, _ inputs: [String], _ graph: String, pictures: String = "") {
    print([job, String(format: "%.3f", ms), peer, inputs.joined(separator: ","), graph, pictures].joined(separator: "\t"))
}

// MARK: The jobs

func sceneJob(_ job: String, _ scene: SceneDescription, width: Int, height: Int,
              cameras: [Camera], overlay: Bool) throws {
    let bench = CompositorBenchmark(width: width, height: height)
    let used = cameras.filter { scene.cameraNames.contains($0.name) }
    let frames = Dictionary(uniqueKeysWithValues: used.map { ($0.name, $0.arrival) })
    let ms = try measure(arriving: used) { index in try bench.render(scene, frames: frames, sequence: UInt64(index)) }
    // What it made, once over the frames, for the script to compare with what ffmpeg's graph makes.
    let pictures = "\(directory)/\(job).studio.y4m"
    Y4MWriter.write(try (0..<count).map { index in
        for camera in used { camera.arrive(index) }
        return try bench.render(scene, frames: frames, sequence: UInt64(index))
    }, to: pictures, tool: "compose-bench")
    let layers = try bench.layers(of: scene)
    let (sourceWidth, sourceHeight) = (cameras[0].frames[0].width, cameras[0].frames[0].height)
    for (label, flags) in scaleFlags {
        let graph = overlay ? overlayGraph(layers, sourceWidth: sourceWidth, sourceHeight: sourceHeight, flags: flags)
                            : xstackGraph(layers, width: width, height: height, sourceWidth: sourceWidth, sourceHeight: sourceHeight, flags: flags)
        emit(job, ms, (overlay ? "scale+overlay " : "scale+xstack ") + label, used.map(\.path), graph, pictures: pictures)
    }
}

do {
    let names480 = small.map(\.name), names720 = large.map(\.name)
    try sceneJob("grid-4x640x480-to-1280x720", SceneDescription(name: "grid", layout: .grid, sources: names480),
                 width: 1280, height: 720, cameras: small, overlay: false)
    // The same with a gap between the cells: each camera cropped to the cell's aspect and scaled.
    try sceneJob("grid-gap-4x640x480-to-1280x720", SceneDescription(name: "gap", layout: .grid, sources: names480, gap: 0.01),
                 width: 1280, height: 720, cameras: small, overlay: false)
    try sceneJob("pip-2x1280x720-to-1280x720", SceneDescription(name: "pip", layout: .pip, sources: Array(names720.prefix(2)), size: 0.3),
                 width: 1280, height: 720, cameras: large, overlay: true)

    // A mix between two full-frame cameras: the program thread renders each side (a program-size I420
    // camera passes through untouched) and mixes them; every frame of the run is a mix frame.
    let mixBench = CompositorBenchmark(width: 1280, height: 720)
    let spec = TransitionSpec(kind: .mix, frames: count)
    let mixMs = measure(arriving: Array(large.prefix(2))) { index in
        mixBench.render(spec, index: index, from: large[0].arrival, to: large[1].arrival)
    }
    let seconds = Double(count * 1000) / 30  // xfade's duration: longer than any run, so every frame is mid-fade
    emit("mix-2x1280x720", mixMs, "xfade=fade", [large[0].path, large[1].path],
         "[0:v][1:v]xfade=transition=fade:duration=\(min(60, seconds)):offset=0")
    emit("mix-2x1280x720", mixMs, "blend normal 50%", [large[0].path, large[1].path],
         "[0:v][1:v]blend=all_mode=normal:all_opacity=0.5:shortest=1")

    try sceneJob("grid-4x1280x720-to-1920x1080", SceneDescription(name: "grid", layout: .grid, sources: names720),
                 width: 1920, height: 1080, cameras: large, overlay: false)
    // The show at 1080p30: four camera layers and a translucent lower-third band over them.
    let band = LayerDescription(source: .color(RGBColor(red: 20, green: 40, blue: 160)),
                                rect: .fraction(RelativeRect(x: 0.05, y: 0.8, width: 0.9, height: 0.12)), z: 1, opacity: 0.7)
    try sceneJob("show-4cams+overlay-1920x1080", SceneDescription(name: "show", layout: .grid, sources: names720, layers: [band]),
                 width: 1920, height: 1080, cameras: large, overlay: false)

    // Graphics over the 1080p picture (studio only: the compositor's blend, no ffmpeg peer): a
    // lower-third picture with per-pixel alpha (transparent left margin, a ramp, opaque body, see-through
    // holes), and a translucent 1280x720 camera layer (opacity 0.7, no alpha).
    let canvas = VideoFrame.allocate(format: .i420, width: 1920, height: 1080)
    let third = VideoFrame.allocate(format: .i420, width: 1920, height: 270)
    for index in 0..<3 {
        let rows = third.planes[index].rows, stride = third.planes[index].stride
        memset(third.plane(index), index == 0 ? 180 : 110, rows * stride)
    }
    let alpha: [UInt8] = (0..<(1920 * 270)).map { i in
        let (x, y) = (i % 1920, i / 1920)
        if x < 80 { return 0 }
        if (x / 24 + y / 18) % 5 == 0 { return 64 }
        return UInt8(min(255, (x - 80) * 3, y * 8 + 40))
    }
    let graphicsBench = CompositorBenchmark(width: 1920, height: 1080)
    let alphaMs = alpha.withUnsafeBufferPointer { alpha in
        measure(arriving: []) { _ in
            graphicsBench.blend(third, alpha: alpha, opacity: 1, over: canvas, at: PixelRect(x: 0, y: 810, width: 1920, height: 270))
            return canvas
        }
    }
    emit("graphic-alpha-1920x270-over-1920x1080", alphaMs, "-", [], "")
    let translucentMs = measure(arriving: [large[1]]) { _ in
        graphicsBench.blend(large[1].arrival, alpha: nil, opacity: 0.7, over: canvas, at: PixelRect(x: 320, y: 180, width: 1280, height: 720))
        return canvas
    }
    emit("layer-opacity-0.7-1280x720-over-1920x1080", translucentMs, "-", [], "")

    // The 1080p worst case: a mix from the show to another scene, both composed every frame (the
    // program thread renders both sides, then mixes them).
    let other = SceneDescription(name: "pip", layout: .pip, sources: Array(names720.prefix(2)), size: 0.3)
    let show = SceneDescription(name: "show", layout: .grid, sources: names720, layers: [band])
    let showBench = CompositorBenchmark(width: 1920, height: 1080)
    let showMix = TransitionSpec(kind: .mix, frames: count)
    let frames = Dictionary(uniqueKeysWithValues: large.map { ($0.name, $0.arrival) })
    let showMixMs = try measure(arriving: large) { index in
        let a = try showBench.render(show, frames: frames), b = try showBench.render(other, frames: frames)
        return showBench.render(showMix, index: index, from: a, to: b)
    }
    emit("mix-show-to-pip-1920x1080", showMixMs, "-", [], "")
} catch {
    FileHandle.standardError.write(Data("compose-bench: \(error)\n".utf8))
    exit(1)
}
