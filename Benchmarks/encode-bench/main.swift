import BenchmarkSupport
import Foundation
import Capture
import Encoding
import StudioCore
import StudioSystem

/// The bare encode loop of scripts/bench-overhead.sh: studio's own encoders (`X264Encoder`, `AACEncoder`)
/// with the program's settings, fed the very pictures a test-pattern camera with `--camera-noise NOISE`
/// shows (`TestPatternCamera.renderFrames`, the same camera name) and the demo tone's samples, at the
/// program's pace (one picture and 1/30 s of audio per frame interval, on the clock), with nothing else:
/// no capture thread, no program clock, no queues, no output. What is left of studio's CPU beyond this is
/// its overhead.
///
/// Usage: encode-bench SECONDS [NOISE (default 8)] [WxH@FPS (default 1280x720@30)] [PRESET (default veryfast)]
///        [BITRATE bits/s (default 4500000)] [LOOP frames rendered up front and repeated (default 60)]
/// Prints: `encode-bench CPU_S_PER_S FRAMES_ENCODED BYTES` (CPU: user + system of the whole process over
/// the run, per second of wall time).
let arguments = BenchmarkArguments(usage: "encode-bench SECONDS [NOISE] [WxH@FPS] [PRESET] [BITRATE] [LOOP]")
let seconds = Double(arguments.first) ?? 20
let noise = arguments.int(2, default: 8)
let program = arguments[3].flatMap { ProgramFormat(parsing: $0) } ?? .default
let preset = arguments[4] ?? "veryfast"
let bitRate = arguments.int(5, default: 4_500_000)
let loop = max(1, arguments.int(6, default: 60))

let format = CameraFormat(pixelFormat: .i420, width: program.width, height: program.height, frameRate: program.frameRate)
var pictures: [VideoFrame] = []
TestPatternCamera.renderFrames(of: CameraID("cam1"), format: format, count: loop, noise: noise) { pictures.append($0) }
let video = try X264Encoder(settings: VideoEncoderSettings(format: program, bitRate: bitRate, preset: preset))
let audio = try AACEncoder()
let audioFormat = AudioFormat.program
let samplesPerFrame = Int(Int64(audioFormat.sampleRate) * Int64(program.frameRate.denominator) / Int64(program.frameRate.numerator))

let grid = FrameGrid(origin: MonotonicClock.now(), rate: program.frameRate)
let cpuStart = cpuSeconds(), wallStart = MonotonicClock.now()
var frames = 0, bytes = 0
var nextSample: Int64 = 0
var tick: Int64 = 0
while Double(MonotonicClock.now() - wallStart) / 1e9 < seconds {
    MonotonicClock.sleep(until: grid.time(ofFrame: tick))
    for packet in try video.encode(pictures[Int(tick) % loop], pts: grid.pts(ofFrame: tick), forceKeyframe: false) { bytes += packet.data.count }
    var samples = [Float](repeating: 0, count: samplesPerFrame * audioFormat.channels)
    for index in 0..<samplesPerFrame {
        let value = TestToneSource.sampleValue(at: nextSample + Int64(index), signal: .standard, sampleRate: audioFormat.sampleRate)
        for channel in 0..<audioFormat.channels { samples[index * audioFormat.channels + channel] = value }
    }
    let chunk = AudioChunk(format: audioFormat, samples: samples, pts: MediaTime(count: nextSample, rate: Rational(Int32(audioFormat.sampleRate))),
                           firstSample: nextSample)
    for packet in try audio.encode(chunk) { bytes += packet.data.count }
    nextSample += Int64(samplesPerFrame)
    frames += 1
    tick += 1
}
let wall = Double(MonotonicClock.now() - wallStart) / 1e9
print(String(format: "encode-bench %.4f %d %d", (cpuSeconds() - cpuStart) / wall, frames, bytes))
