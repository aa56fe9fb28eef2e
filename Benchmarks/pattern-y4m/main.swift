import BenchmarkSupport
import Foundation
import Capture
import StudioCore

/// Writes a test-pattern camera's frames as YUV4MPEG2 (I420) to a file, so the benchmark can give the
/// ffmpeg CLI exactly the pictures `studio serve` encodes.
/// Usage: pattern-y4m OUTPUT.y4m [FRAMES (default 300)] [WIDTHxHEIGHT@FPS (default 1280x720@30)] [CAMERA (default cam1)]
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: pattern-y4m OUTPUT.y4m [FRAMES] [WxH@FPS] [CAMERA]\n".utf8))
    exit(2)
}
let count = arguments.count > 2 ? Int(arguments[2]) ?? 300 : 300
let program = arguments.count > 3 ? ProgramFormat(parsing: arguments[3]) ?? .default : .default
let camera = CameraID(arguments.count > 4 ? arguments[4] : "cam1")
let format = CameraFormat(pixelFormat: .i420, width: program.width, height: program.height, frameRate: program.frameRate)

guard let output = Y4MWriter(path: arguments[1], width: program.width, height: program.height, rate: program.frameRate) else {
    FileHandle.standardError.write(Data("pattern-y4m: cannot write \(arguments[1])\n".utf8))
    exit(1)
}
TestPatternCamera.renderFrames(of: camera, format: format, count: count) { frame in output.write(frame) }
