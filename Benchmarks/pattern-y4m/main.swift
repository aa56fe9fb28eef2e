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

_ = FileManager.default.createFile(atPath: arguments[1], contents: nil)
guard let output = FileHandle(forWritingAtPath: arguments[1]) else {
    FileHandle.standardError.write(Data("pattern-y4m: cannot write \(arguments[1])\n".utf8))
    exit(1)
}
let rate = program.frameRate
output.write(Data("YUV4MPEG2 W\(program.width) H\(program.height) F\(rate.numerator):\(rate.denominator) Ip A1:1 C420jpeg\n".utf8))
TestPatternCamera.renderFrames(of: camera, format: format, count: count) { frame in
    var bytes = Data("FRAME\n".utf8)
    for (index, plane) in frame.planes.enumerated() {
        let rowBytes = index == 0 ? frame.width : (frame.width + 1) / 2
        for row in 0..<plane.rows {
            bytes.append(Data(bytes: frame.plane(index) + row * plane.stride, count: rowBytes))
        }
    }
    output.write(bytes)
}
output.closeFile()
