import BenchmarkSupport
import Capture
import Foundation
import LivePictures
import MediaSupport
import StudioCore
import StudioSystem
import Switcher

/// Measures the console's live tiles: `JPEGThumbnailer` (libswscale to 320 wide + libavcodec's MJPEG
/// encoder, what the tile thread does for each picture) per picture on camera-like 1280x720 frames (the
/// test pattern with its moving sweep and timecode, plus sensor noise new every frame), and writes the
/// same frames as 10 fps YUV4MPEG2 so scripts/bench-tiles.sh can run the ffmpeg CLI on the same job.
/// Then the whole service: `TilePictures` on four live 1280x720 30 fps test-pattern cameras, every
/// camera tile watched, for SECONDS, with a 720p30 program switcher running beside it: the tile
/// thread's CPU time per second of wall time, and the program's late ticks.
///
/// Usage: tile-bench DIRECTORY [FRAMES per camera (default 30)] [ROUNDS over the frames (default 10)]
///        [REPEATS, the least counts (default 3)] [SECONDS of the live service (default 5)]
/// Writes DIRECTORY/camN.y4m (N = 1...4). Prints tab-separated lines:
///   thumbnail  MS_PER_PICTURE  WIDTHxHEIGHT  AVERAGE_JPEG_BYTES
///   service  PERCENT_OF_ONE_CORE  PICTURES_PER_SECOND  SKIPPED_ROUNDS  PROGRAM_LATE_TICKS
let arguments = BenchmarkArguments(usage: "tile-bench DIRECTORY [FRAMES] [ROUNDS] [REPEATS] [SECONDS]")
let directory = arguments.first
let count = arguments.int(2, default: 30)
let rounds = arguments.int(3, default: 10)
let repeats = arguments.int(4, default: 3)
let seconds = arguments.double(5, default: 5)
let format = CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30))

/// Adds sensor noise (a fresh ±12 on every luma sample, ±6 on chroma) to a copy of `frame`.
func noisy(_ frame: VideoFrame, seed: inout UInt64) -> VideoFrame {
    let copy = VideoFrame.allocate(format: .i420, width: frame.width, height: frame.height)
    for index in 0..<3 {
        let amplitude: UInt64 = index == 0 ? 25 : 13
        let rows = frame.planes[index].rows, columns = index == 0 ? frame.width : frame.width / 2
        let source = frame.plane(index).assumingMemoryBound(to: UInt8.self), target = copy.plane(index).assumingMemoryBound(to: UInt8.self)
        for row in 0..<rows {
            for column in 0..<columns {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let offset = Int((seed >> 33) % amplitude) - Int(amplitude / 2)
                let value = Int(source[row * frame.planes[index].stride + column]) + offset
                target[row * copy.planes[index].stride + column] = UInt8(min(235, max(16, value)))
            }
        }
    }
    return copy
}

var seed: UInt64 = 1
let cameras = (1...4).map { CameraID("cam\($0)") }
var frames: [[VideoFrame]] = []
for id in cameras {
    var list: [VideoFrame] = [], tick = 0
    // Every third frame of the 30 fps pattern: what a 10 fps tile takes.
    TestPatternCamera.renderFrames(of: id, format: format, count: count * 3) { frame in
        if tick % 3 == 0 { list.append(noisy(frame, seed: &seed)) }
        tick += 1
    }
    guard let writer = Y4MWriter(path: "\(directory)/\(id.name).y4m", width: format.width, height: format.height, rate: Rational(10)) else {
        FileHandle.standardError.write(Data("tile-bench: cannot write in \(directory)\n".utf8))
        exit(1)
    }
    list.forEach(writer.write)
    frames.append(list)
}

// MARK: Per picture

let thumbnailers = cameras.map { _ in JPEGThumbnailer(width: 320, quality: 5) }
var best = Double.infinity
var bytes = 0, pictures = 0, size = (0, 0)
for _ in 0..<repeats {
    // A warm-up round (encoders opened, scalers made), then the timed rounds.
    for (camera, list) in frames.enumerated() { _ = try thumbnailers[camera].encode(list[0]) }
    let start = cpuSeconds()
    bytes = 0
    pictures = 0
    for _ in 0..<rounds {
        for index in 0..<count {
            for (camera, list) in frames.enumerated() {
                let made = try thumbnailers[camera].encode(list[index])
                bytes += made.jpeg.count
                pictures += 1
                size = (made.width, made.height)
            }
        }
    }
    best = min(best, (cpuSeconds() - start) * 1000 / Double(pictures))
}
print("thumbnail\t\(String(format: "%.3f", best))\t\(size.0)x\(size.1)\t\(bytes / max(1, pictures))")

// MARK: The live service

let live = try cameras.map { try TestPatternCamera(id: $0, format: format) }
for camera in live { camera.start() }
let tiles = TilePictures()
// The program runs beside them (720p30 on cam1, as the server runs it, its frames offered to the tiles):
// its late ticks say whether the tiles disturbed it.
let switcher = ProgramSwitcher(format: ProgramFormat(width: 1280, height: 720, frameRate: Rational(30)), events: DiscardingEventSink(),
                               deliver: { frame, _ in tiles.offerProgram(frame) })
for camera in live { switcher.addSource(camera.id, frames: camera.frames) }
switcher.start()
switcher.switchProgram(to: cameras[0]) { _ in }
tiles.start(sources: TileSources(camera: { name in live.first { $0.id.name == name }?.frames }, cameraNames: { live.map(\.id.name) },
                                 previewCamera: { nil }, lateTicks: { switcher.status.lateTicks }))
for id in cameras { tiles.subscribe(id.name) }
// One second to settle (encoders opened), then the measured stretch.
MonotonicClock.sleep(seconds: 1)
let before = tiles.counters, started = MonotonicClock.now()
MonotonicClock.sleep(seconds: seconds)
let after = tiles.counters, elapsed = Double(MonotonicClock.now() - started) / 1e9
let lateTicks = switcher.status.lateTicks
tiles.stop()
switcher.stop()
for camera in live { camera.stop() }
let percent = Double(after.cpuNanoseconds - before.cpuNanoseconds) / 1e9 / elapsed * 100
let skipped = (after.skippedOverrun + after.skippedOverBudget + after.skippedProgramBehind)
    - (before.skippedOverrun + before.skippedOverBudget + before.skippedProgramBehind)
print("service\t\(String(format: "%.2f", percent))\t\(String(format: "%.1f", Double(after.pictures - before.pictures) / elapsed))\t\(skipped)\t\(lateTicks)")
