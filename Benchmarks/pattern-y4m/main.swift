import BenchmarkSupport
import Foundation
import Capture
import StudioCore

/// Writes a test-pattern camera's frames as YUV4MPEG2 (I420) to a file, so the benchmark can give the
/// ffmpeg CLI exactly the pictures `studio serve` encodes.
/// Usage: pattern-y4m OUTPUT.y4m [FRAMES (default 300)] [WIDTHxHEIGHT@FPS (default 1280x720@30)] [CAMERA (default cam1)]
///        [NOISE (default 0: the camera's `--camera-noise`, the same pictures for the same camera name)]
let arguments = BenchmarkArguments(usage: "pattern-y4m OUTPUT.y4m [FRAMES] [WxH@FPS] [CAMERA] [NOISE]")
let count = arguments.int(2, default: 300)
let program = arguments[3].flatMap { ProgramFormat(parsing: $0) } ?? .default
let camera = CameraID(arguments[4] ?? "cam1")
let noise = arguments.int(5, default: 0)
let format = CameraFormat(pixelFormat: .i420, width: program.width, height: program.height, frameRate: program.frameRate)

guard let output = Y4MWriter(path: arguments.first, width: program.width, height: program.height, rate: program.frameRate) else {
    FileHandle.standardError.write(Data("pattern-y4m: cannot write \(arguments.first)\n".utf8))
    exit(1)
}
TestPatternCamera.renderFrames(of: camera, format: format, count: count, noise: noise) { frame in output.write(frame) }
