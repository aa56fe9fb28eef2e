// pw-virtual-camera: a PipeWire Video/Source for tests and the benchmark. It publishes the pictures of a
// test-pattern camera (`TestPatternCamera`): the ident block in that camera's colour (tells cameras apart
// after scaling and H.264) and a running timecode (the frame counter), at a fixed size and rate.
//
//   pw-virtual-camera --node NODE_NAME --camera cam2 [--size 640x480] [--rate 30] [--format i420|nv12|yuy2|mjpeg]
//                     [--description TEXT] [--flash 1] [--corrupt-every N] [--noise N] [--quality Q] [--log-frames PATH]
//                     [--stamp 1] [--replay N [--replay-phase K] [--replay-file PATH]]
//   pw-virtual-camera --v4l2-output /dev/videoN --camera cam3 --format mjpeg [same options]
//   pw-virtual-camera --node NODE_NAME --beep 1 [--beep-offset-ms -40]
//   pw-virtual-camera --mic NODE_NAME [--tone 440] [--ppm 300]
//   pw-virtual-camera --mic-stream NODE_NAME [--tone 440]
//
// --mic / --mic-stream: a virtual microphone (see `Beeper`): a sine on its own drifting clock, or a
// plain stream-published Audio/Source as virtual microphones and filter chains make them.
// --flash 1: frames are due on whole seconds of CLOCK_MONOTONIC, and the frame due on each whole second
// is all white (a known video event). --beep 1: an Audio/Source instead (48 kHz stereo float) that is
// silent except for a 1 kHz beep during the first 100 ms of each whole second of CLOCK_MONOTONIC (a
// known audio event at the same instants). Together they measure A/V sync through the whole pipeline.
// --beep-offset-ms MS moves every beep by MS (negative: early), as a microphone nearer than its camera.
// --format mjpeg: the node offers only MJPEG (like many USB webcams at 720p and above); each picture is
// encoded with libavcodec's MJPEG encoder. --corrupt-every N (mjpeg): every Nth frame (frames N-1,
// 2N-1...) is sent cut to a third of its bytes, as a USB transfer that lost its tail.
// --noise N: camera-like sensor noise of amplitude N (0-255, about 6-12 is a webcam in a lit room) on
// every sample, new in every frame (`SensorNoise`), over the pattern's moving box and running timecode:
// JPEG sizes and encoder load as from a real camera. --quality Q (mjpeg): the JPEG encoder's qscale,
// 1-31 (default 3; webcams send about 2-5, JPEG quality 80-90). --log-frames PATH (mjpeg): one line
// per JPEG made, `SEQUENCE BYTES FNV1A64` (`SentFrameLog`), to check a recording holds these bytes.
// --stamp 1: each picture carries the CLOCK_MONOTONIC time it is sent at as a `CaptureStamp` bar code
// (drawn when the frame is due, just before it is handed to the stream), for latency measurements.
// Every buffer carries its frame's send time as the pts of its SPA_META_Header (as a V4L2 node's carry
// the driver's time): the stamp's time for raw frames, the --log-frames time for JPEGs.
// --replay N (mjpeg): the first N frames (pattern, --noise, --quality as above) are encoded once before
// the node appears (`ReplayLoop`) and then sent in a loop at the rate, starting --replay-phase K frames
// in (default 0): many 720p cameras for the cost of copying their bytes. --replay-file PATH also writes
// the loop as a raw MJPEG stream (`ffmpeg -f mjpeg -framerate RATE -stream_loop -1 -i PATH` reads the
// same frames). Not with --stamp, --flash or --corrupt-every (their frames are made when due).
//
// --v4l2-output /dev/videoN (mjpeg): no PipeWire; the JPEGs are written to that V4L2 output node, one
// write(2) each, after setting its output format (MJPG at --size) and rate: a v4l2loopback node
// (scripts/vm/run.sh --loopback) is then an MJPEG capture camera to its readers, as USB webcams are.
// `ready` is said once the first JPEG is in (from then on the node presents itself as a capture device).
//
// It connects to PIPEWIRE_REMOTE (or pipewire-0 in XDG_RUNTIME_DIR), prints `ready` once its node is
// streaming-capable, and runs until it is killed. The stream is its own driver: a thread renders frame
// n at origin + n/rate, copies it into a buffer, queues it and triggers a cycle of the graph, which
// carries it to the consumers at once (as PipeWire's V4L2 cameras do with each frame the driver gives).
import CPipeWire
import Capture
import FrameDrawing
import Synchronization
import StudioCore
import StudioSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to fd 1 or 2 directly (the C stdio globals are not concurrency-safe in Swift 6).
func say(_ line: String, to fd: Int32 = 1) {
    let text = Array((line + "\n").utf8)
    _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
    say("pw-virtual-camera: \(message)", to: 2)
    exit(2)
}

var options: [String: String] = ["--size": "640x480", "--rate": "30", "--format": "i420"]
var argumentList = Array(CommandLine.arguments.dropFirst())
while !argumentList.isEmpty {
    let key = argumentList.removeFirst()
    guard key.hasPrefix("--"), !argumentList.isEmpty else { fail("usage: --node NAME|--v4l2-output /dev/videoN --camera camN [--size WxH] [--rate N] [--format i420|nv12|yuy2|mjpeg] [--corrupt-every N] [--noise N] [--quality Q] [--log-frames PATH] [--stamp 1] [--replay N [--replay-phase K] [--replay-file PATH]] [--object-path PATH]") }
    options[key] = argumentList.removeFirst()
}
if let nodeName = options["--node"], options["--beep"] != nil {
    guard let offset = Int64(options["--beep-offset-ms"] ?? "0"), abs(offset) < 1000 else { fail("bad --beep-offset-ms (whole ms, -999..999)") }
    Beeper.run(nodeName: nodeName, signal: .beeps(offset: offset * 1_000_000))
}
if let nodeName = options["--mic"] ?? options["--mic-stream"] {
    guard let frequency = Double(options["--tone"] ?? "440"), frequency > 0, frequency < 20_000 else { fail("bad --tone") }
    guard let ppm = Double(options["--ppm"] ?? "0"), abs(ppm) <= 10_000 else { fail("bad --ppm") }
    Beeper.run(nodeName: nodeName, signal: .tone(frequency: frequency), ppm: ppm, plainStream: options["--mic-stream"] != nil)
}
guard let nodeName = options["--node"] ?? options["--v4l2-output"], let cameraName = options["--camera"] else {
    fail("--camera and --node (or --v4l2-output) are required")
}
let flash = options["--flash"] != nil
let stamp = options["--stamp"] != nil
let sizeParts = options["--size"]!.split(separator: "x").compactMap { Int($0) }
guard sizeParts.count == 2, sizeParts[0] >= 16, sizeParts[1] >= 16, sizeParts[0] % 2 == 0, sizeParts[1] % 2 == 0 else { fail("bad --size") }
guard let rateValue = Int32(options["--rate"]!), (1...120).contains(rateValue) else { fail("bad --rate") }
let width = sizeParts[0], height = sizeParts[1], rate = Rational(rateValue)

/// The wire layout: one data block, planes packed one after the other, rows not padded.
/// For MJPEG: one JPEG per buffer, the buffers sized for the largest JPEG expected (2 bytes a pixel).
enum WireFormat: String {
    case i420, nv12, yuy2, mjpeg
    var spa: spa_video_format {
        switch self {
        case .i420: SPA_VIDEO_FORMAT_I420
        case .nv12: SPA_VIDEO_FORMAT_NV12
        case .yuy2: SPA_VIDEO_FORMAT_YUY2
        case .mjpeg: SPA_VIDEO_FORMAT_UNKNOWN
        }
    }
    func stride(width: Int) -> Int {
        switch self {
        case .yuy2: width * 2
        case .mjpeg: 0
        default: width
        }
    }
    func size(width: Int, height: Int) -> Int { self == .yuy2 || self == .mjpeg ? width * height * 2 : width * height * 3 / 2 }
}
guard let wire = WireFormat(rawValue: options["--format"]!.lowercased()) else { fail("bad --format") }
let corruptEvery = options["--corrupt-every"].map { Int($0) ?? -1 } ?? 0
guard corruptEvery >= 0 else { fail("bad --corrupt-every") }
guard let noiseAmplitude = Int(options["--noise"] ?? "0"), (0...255).contains(noiseAmplitude) else { fail("bad --noise (0-255)") }
guard let quality = Int(options["--quality"] ?? "3"), (1...31).contains(quality) else { fail("bad --quality (qscale 1-31)") }
var encoderProblem = ""
let encoder = wire == .mjpeg ? JPEGEncoder(width: width, height: height, rate: rate, quality: quality, problem: &encoderProblem) : nil
if wire == .mjpeg && encoder == nil { fail(encoderProblem) }
let frameLog = options["--log-frames"].map { path -> SentFrameLog in
    guard let log = SentFrameLog(path: path) else { fail("cannot write --log-frames \(path)") }
    return log
}
let replay: (loop: ReplayLoop, phase: Int)? = options["--replay"].map { countText in
    guard let count = Int(countText), (1...3600).contains(count) else { fail("bad --replay (frames in the loop, 1-3600)") }
    guard let encoder else { fail("--replay needs --format mjpeg") }
    guard !stamp, !flash, corruptEvery == 0 else { fail("--replay cannot be combined with --stamp, --flash or --corrupt-every") }
    guard let phase = Int(options["--replay-phase"] ?? "0"), phase >= 0 else { fail("bad --replay-phase (frames, 0 or more)") }
    var noise = SensorNoise(amplitude: noiseAmplitude, seed: UInt64(truncatingIfNeeded: MonotonicClock.now()) | 1)
    let format = CameraFormat(pixelFormat: .i420, width: width, height: height, frameRate: rate)
    guard let made = ReplayLoop.make(camera: CameraID(cameraName), format: format, count: count, noise: &noise, encoder: encoder) else {
        fail("the MJPEG encoder failed")
    }
    if let path = options["--replay-file"], let problem = made.write(to: path) { fail(problem) }
    return (made, phase % count)
}

/// Connects to PipeWire and publishes the stream (a driver) with the one format offered.
@MainActor func connectPipeWire() -> (loop: OpaquePointer, stream: OpaquePointer, producer: Producer) {
    cpw_init()
    guard let loop = pw_thread_loop_new("pw-virtual-cam", nil) else { fail("pw_thread_loop_new failed") }
    guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else { fail("pw_context_new failed") }
    guard let core = pw_context_connect(context, nil, 0) else { fail("no PipeWire daemon (pw_context_connect: \(String(cString: strerror(errno))))") }

    let properties = cpw_properties_new("media.class", "Video/Source")
    pw_properties_set(properties, "media.type", "Video")
    pw_properties_set(properties, "media.category", "Source")
    pw_properties_set(properties, "media.role", "Camera")
    pw_properties_set(properties, "node.name", nodeName)
    pw_properties_set(properties, "node.description", options["--description"] ?? "Virtual \(cameraName)")
    // `--object-path v4l2:/dev/video9` makes the node look like one of PipeWire's V4L2-monitor cameras
    // (tests of the server leaving those to its own V4L2 backend).
    if let path = options["--object-path"] { pw_properties_set(properties, "object.path", path) }
    guard let stream = pw_stream_new(core, nodeName, properties) else { fail("pw_stream_new failed") }

    let producer = Producer(stream: stream, wire: wire, width: width, height: height)

    let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    hook.initialize(to: spa_hook())
    let events = Producer.makeEvents()
    pw_stream_add_listener(stream, hook, events, Unmanaged.passUnretained(producer).toOpaque())

    var formatBuffer = [UInt8](repeating: 0, count: 512)
    let connected = formatBuffer.withUnsafeMutableBytes { bytes -> Int32 in
        var builder = cpw_pod_builder(bytes.baseAddress, UInt32(bytes.count))
        var param: UnsafePointer<spa_pod>? = wire == .mjpeg
            ? cpw_build_mjpg_format(&builder, SPA_PARAM_EnumFormat.rawValue, UInt32(width), UInt32(height), UInt32(rateValue), 1)
            : cpw_build_video_format(&builder, SPA_PARAM_EnumFormat.rawValue, wire.spa.rawValue, UInt32(width), UInt32(height), UInt32(rateValue), 1)
        let flags = pw_stream_flags(PW_STREAM_FLAG_DRIVER.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue)
        return pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, UInt32.max, flags, &param, 1)
    }
    guard connected >= 0 else { fail("pw_stream_connect: \(String(cString: cpw_strerror(connected)))") }
    guard pw_thread_loop_start(loop) >= 0 else { fail("pw_thread_loop_start failed") }
    return (loop, stream, producer)
}

/// With --v4l2-output PATH (mjpeg): the node the JPEGs are written to instead of a PipeWire stream,
/// its output format set to MJPG at the size and its rate to --rate (see `V4L2Device.setOutputFormat`).
@MainActor func openV4L2Output(_ path: String) -> V4L2Device {
    guard wire == .mjpeg else { fail("--v4l2-output needs --format mjpeg") }
    do {
        let device = try V4L2Device(path: path)
        let granted = try device.setOutputFormat(.mjpeg, width: width, height: height)
        guard granted.fourcc == .mjpeg, granted.width == width, granted.height == height else {
            fail("\(path) keeps \(granted.fourcc) \(granted.width)x\(granted.height), not MJPG \(width)x\(height) (another writer has it open?)")
        }
        try device.setOutputFrameRate(rate)
        return device
    } catch {
        fail("\(path): \(error) (is it a v4l2loopback node? scripts/vm/run.sh --loopback makes them)")
    }
}
let v4l2Output = options["--v4l2-output"].map(openV4L2Output)
let pipeWire = v4l2Output == nil ? connectPipeWire() : nil
let readyLine = "ready \(nodeName) \(cameraName) \(wire.rawValue) \(width)x\(height)@\(rateValue)"
// A V4L2 node is a capture device to its readers once the first frame is in: said then (`sendJPEG`).
var saidReady = v4l2Output == nil
if saidReady { say(readyLine) }

/// Hands a JPEG over: written to the V4L2 node at once (one write(2) each), or kept for the PipeWire
/// stream's next process callback.
@MainActor func sendJPEG(_ jpeg: [UInt8], sentAt: UInt64) {
    if let v4l2Output {
        do { try v4l2Output.writeFrame(jpeg) } catch { fail("\(error)") }
        if !saidReady {
            saidReady = true
            say(readyLine)
        }
    } else if let pipeWire {
        pipeWire.producer.latestJPEG.withLock { $0 = (jpeg, sentAt) }
        triggerProcess(pipeWire)
    }
}

// The render thread's body: frame n is due at origin + n/rate, whatever the consumers do.
// With --flash, frames are due on the whole-second grid of CLOCK_MONOTONIC (frame 0 on the next second).
let origin = flash ? (MonotonicClock.now() / 1_000_000_000 + 1) * 1_000_000_000 : MonotonicClock.now()
let grid = FrameGrid(origin: origin, rate: rate)
let framesPerSecond = UInt64(rate.numerator) / UInt64(max(rate.denominator, 1))
let renderFormat = CameraFormat(pixelFormat: wire == .nv12 ? .nv12 : .i420, width: width, height: height, frameRate: rate)
var noise = SensorNoise(amplitude: noiseAmplitude, seed: UInt64(truncatingIfNeeded: origin) | 1)
let noisyPool = FramePool(capacity: VideoFrame.byteCount(format: renderFormat.pixelFormat, width: width, height: height), limit: 4)
/// Hands the newest picture to the stream: into a buffer, queued, then a cycle of the graph (this
/// stream drives it), which carries it to the consumers at once.
func triggerProcess(_ pipeWire: (loop: OpaquePointer, stream: OpaquePointer, producer: Producer)) {
    pw_thread_loop_lock(pipeWire.loop)
    if pipeWire.producer.streaming {
        pipeWire.producer.send()
        _ = pw_stream_trigger_process(pipeWire.stream)
    }
    pw_thread_loop_unlock(pipeWire.loop)
}
if let replay {
    var tick: Int64 = 0
    while true {
        MonotonicClock.sleep(until: grid.time(ofFrame: tick))
        let jpeg = replay.loop.frame(tick: tick, phase: replay.phase)
        let sentAt = MonotonicClock.now()
        frameLog?.append(sequence: tick, bytes: jpeg, time: sentAt)
        sendJPEG(jpeg, sentAt: sentAt)
        tick += 1
    }
}
TestPatternCamera.renderFrames(of: CameraID(cameraName), format: renderFormat, count: Int.max) { pattern in
    let frame = noiseAmplitude > 0 ? noise.noisy(pattern, pool: noisyPool) : pattern
    let tick = Int64(frame.sequence)
    MonotonicClock.sleep(until: grid.time(ofFrame: tick))
    // When the frame is handed over: its stamp, and its buffer's pts (a JPEG's after its encode, the
    // time --log-frames writes).
    var sentAt = MonotonicClock.now()
    if stamp { CaptureStamp.draw(sentAt, into: frame) }
    let isFlash = flash && framesPerSecond > 0 && UInt64(tick) % framesPerSecond == 0
    if let encoder {
        guard var jpeg = encoder.encode(frame, white: isFlash) else { fail("the MJPEG encoder failed") }
        if corruptEvery > 0 && (tick + 1) % Int64(corruptEvery) == 0 { jpeg = Array(jpeg.prefix(jpeg.count / 3)) }
        sentAt = MonotonicClock.now()
        frameLog?.append(sequence: tick, bytes: jpeg, time: sentAt)
        sendJPEG(jpeg, sentAt: sentAt)
    } else if let pipeWire {
        pipeWire.producer.latest.withLock { $0 = (frame, isFlash, sentAt) }
        triggerProcess(pipeWire)
    }
}
