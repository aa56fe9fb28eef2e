import BenchmarkSupport
import Foundation
import Graphics
import StudioCore

/// Measures `PictureProcessor` per 1280x720 frame (CPU time of this single thread) on noisy pictures
/// that are mostly skin (the beauty filter's worst case: it works everywhere the skin weight is above
/// zero), and writes the same pictures as YUV4MPEG2 so the ffmpeg CLI can filter them too.
/// Usage: picture-bench OUTPUT.y4m [FRAMES (default 60)] [ROUNDS over the frames (default 10)] [BEAUTY.y4m]
/// Prints one line per job: "NAME ms_per_frame". With BEAUTY.y4m also writes the frames as beauty 100
/// leaves them, to look at (`ffplay`, or `ffmpeg -i BEAUTY.y4m -frames:v 1 beauty.png`).
let arguments = BenchmarkArguments(usage: "picture-bench OUTPUT.y4m [FRAMES] [ROUNDS] [BEAUTY.y4m]")
let count = arguments.int(2, default: 60)
let rounds = arguments.int(3, default: 10)
let width = 1280, height = 720

/// A face-sized skin-coloured ellipse with darker features, a skin-coloured band, blue-grey
/// background, and luma noise that changes every frame (about 9 codes standard deviation).
func noisyFrame(_ index: Int) -> VideoFrame {
    let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
    var state = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 | 1
    for plane in 0..<3 {
        let divisor = plane == 0 ? 1 : 2
        for y in 0..<(height / divisor) {
            let row = (frame.plane(plane) + y * frame.planes[plane].stride).assumingMemoryBound(to: UInt8.self)
            for x in 0..<(width / divisor) {
                let dx = Double(x * divisor - 640) / 300, dy = Double(y * divisor - 340) / 320
                let face = dx * dx + dy * dy < 1, band = y * divisor > 620
                let eye = abs(abs(x * divisor - 640) - 110) < 40 && abs(y * divisor - 280) < 18
                let skin = face || band
                switch plane {
                case 0:
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let base = skin ? (eye ? 60 : 150 + (x * divisor) / 40) : 90
                    row[x] = UInt8(clamping: base + Int(state >> 59) - 16)
                case 1: row[x] = skin ? 108 : 150
                default: row[x] = skin ? 152 : 120
                }
            }
        }
    }
    return frame
}

let frames = (0..<count).map(noisyFrame)

Y4MWriter.write(frames, to: arguments.first, tool: "picture-bench")

func settings(_ change: (inout PictureSettings) -> Void) -> PictureSettings {
    var settings = PictureSettings()
    change(&settings)
    return settings
}

let jobs: [(String, PictureSettings)] = [
    ("beauty-100", settings { $0.beauty = 100 }),
    ("beauty-40", settings { $0.beauty = 40 }),
    ("mirror", settings { $0.mirror = true }),
    ("rotate-90", settings { $0.rotation = 90 }),
    ("crop-half", settings { $0.crop = RelativeRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5) }),
    ("colour", settings {
        $0.brightness = 0.05
        $0.contrast = 1.2
        $0.saturation = 1.3
        $0.gamma = 1.1
    }),
    ("all", settings {
        $0.mirror = true
        $0.brightness = 0.05
        $0.contrast = 1.2
        $0.saturation = 1.3
        $0.beauty = 40
    }),
]
for (name, settings) in jobs {
    let processor = PictureProcessor()
    // One warm-up round: buffers and pools are made here, not measured.
    for frame in frames { _ = try processor.process(frame, settings: settings) }
    let start = cpuSeconds()
    for _ in 0..<rounds {
        for frame in frames { _ = try processor.process(frame, settings: settings) }
    }
    let perFrame = (cpuSeconds() - start) / Double(rounds * frames.count)
    print("\(name) \(String(format: "%.3f", perFrame * 1000))")
}

if let beautyPath = arguments[4] {
    var settings = PictureSettings()
    settings.beauty = 100
    let processor = PictureProcessor()
    Y4MWriter.write(try frames.map { try processor.process($0, settings: settings) }, to: beautyPath, tool: "picture-bench")
}
