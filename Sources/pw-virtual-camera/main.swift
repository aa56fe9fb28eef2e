// pw-virtual-camera: a PipeWire Video/Source for tests and the benchmark. It publishes the pictures of a
// test-pattern camera (`TestPatternCamera`): the ident block in that camera's colour (tells cameras apart
// after scaling and H.264) and a running timecode (the frame counter), at a fixed size and rate.
//
//   pw-virtual-camera --node NODE_NAME --camera cam2 [--size 640x480] [--rate 30] [--format i420|nv12|yuy2|mjpeg]
//                     [--description TEXT] [--flash 1] [--corrupt-every N] [--noise N] [--quality Q] [--log-frames PATH]
//                     [--stamp 1] [--replay N [--replay-phase K] [--replay-file PATH]]
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
// It connects to PIPEWIRE_REMOTE (or pipewire-0 in XDG_RUNTIME_DIR), prints `ready` once its node is
// streaming-capable, and runs until it is killed. The stream is its own driver: a thread renders frame
// n at origin + n/rate and then triggers the stream's process, which copies the newest picture out.
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
    guard key.hasPrefix("--"), !argumentList.isEmpty else { fail("usage: --node NAME --camera camN [--size WxH] [--rate N] [--format i420|nv12|yuy2|mjpeg] [--corrupt-every N] [--noise N] [--quality Q] [--log-frames PATH] [--stamp 1] [--replay N [--replay-phase K] [--replay-file PATH]] [--object-path PATH]") }
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
guard let nodeName = options["--node"], let cameraName = options["--camera"] else { fail("--node and --camera are required") }
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

/// What the stream's callbacks need, reached through their `data` pointer (C callbacks cannot capture).
///
/// `@unchecked Sendable`: `streaming` is written by the loop thread in callbacks (which hold the loop
/// lock) and read by the render thread under that lock; `buffersSent` is the loop thread's alone; the
/// rest is immutable.
final class Producer: @unchecked Sendable {
    let stream: OpaquePointer
    let wire: WireFormat
    let width: Int
    let height: Int
    /// The newest rendered picture (and whether it is to be sent as a white flash instead), handed
    /// from the render thread to the process callback, with the CLOCK_MONOTONIC time it was handed over
    /// (its buffer's header pts).
    let latest = Mutex<(frame: VideoFrame, flash: Bool, sentAt: UInt64)?>(nil)
    /// With --format mjpeg: the newest JPEG (already white for a flash, already cut when corrupt) and
    /// the time it was handed over (the time --log-frames writes).
    let latestJPEG = Mutex<(bytes: [UInt8], sentAt: UInt64)?>(nil)
    var streaming = false
    var buffersSent: UInt64 = 0
    init(stream: OpaquePointer, wire: WireFormat, width: Int, height: Int) {
        self.stream = stream
        self.wire = wire
        self.width = width
        self.height = height
    }

    /// The stream's callbacks. Made here, not in top-level code: closures written at the top level of
    /// main.swift belong to the main actor, and Swift traps when the loop thread calls them.
    static func makeEvents() -> UnsafeMutablePointer<pw_stream_events> {
        let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, _, state, error in
            Unmanaged<Producer>.fromOpaque(data!).takeUnretainedValue().streaming = state == PW_STREAM_STATE_STREAMING
            if let error { say("pw-virtual-camera: stream error: \(String(cString: error))", to: 2) }
        }
        events.pointee.param_changed = { data, id, param in
            guard id == SPA_PARAM_Format.rawValue, param != nil else { return }
            let producer = Unmanaged<Producer>.fromOpaque(data!).takeUnretainedValue()
            // The format is fixed (we offered one); answer with the buffer layout it needs, and a header
            // meta on every buffer for the time each frame is sent (`Producer.stamp`).
            var buffer = [UInt8](repeating: 0, count: 512)
            buffer.withUnsafeMutableBytes { bytes in
                var builder = cpw_pod_builder(bytes.baseAddress, UInt32(bytes.count))
                var params = [cpw_build_video_buffers(&builder, UInt32(producer.wire.size(width: producer.width, height: producer.height)),
                                                      UInt32(producer.wire.stride(width: producer.width))),
                              cpw_build_meta_header(&builder)]
                _ = pw_stream_update_params(producer.stream, &params, UInt32(params.count))
            }
        }
        events.pointee.process = { data in
            let producer = Unmanaged<Producer>.fromOpaque(data!).takeUnretainedValue()
            let size = producer.wire.size(width: producer.width, height: producer.height), stride = producer.wire.stride(width: producer.width)
            guard let buffer = pw_stream_dequeue_buffer(producer.stream) else { return }
            defer { pw_stream_queue_buffer(producer.stream, buffer) }
            if producer.wire == .mjpeg {
                guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
                      let base = datas[0].data, let jpeg = producer.latestJPEG.withLock({ $0 }),
                      Int(datas[0].maxsize) >= jpeg.bytes.count else { return }
                jpeg.bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                producer.stamp(spaBuffer, sentAt: jpeg.sentAt)
                datas[0].chunk.pointee.offset = 0
                datas[0].chunk.pointee.size = UInt32(jpeg.bytes.count)
                datas[0].chunk.pointee.stride = 0
                datas[0].chunk.pointee.flags = 0
                return
            }
            guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
                  let base = datas[0].data, Int(datas[0].maxsize) >= size, let latest = producer.latest.withLock({ $0 }) else { return }
            if latest.flash {
                producer.writeWhite(to: base)
            } else {
                producer.write(latest.frame, to: base)
            }
            producer.stamp(spaBuffer, sentAt: latest.sentAt)
            datas[0].chunk.pointee.offset = 0
            datas[0].chunk.pointee.size = UInt32(size)
            datas[0].chunk.pointee.stride = Int32(stride)
            datas[0].chunk.pointee.flags = 0
        }
        return events
    }
}
extension Producer {
    /// Writes `sentAt` (CLOCK_MONOTONIC ns) as the pts of `buffer`'s header meta, when the link gave the
    /// buffers one: what a V4L2 node's buffers carry (the driver's time of the frame), so a consumer
    /// that dequeues the buffer late still knows when it was sent. Loop thread.
    func stamp(_ buffer: UnsafeMutablePointer<spa_buffer>, sentAt: UInt64) {
        guard let meta = spa_buffer_find_meta_data(buffer, SPA_META_Header.rawValue, MemoryLayout<spa_meta_header>.size) else { return }
        let header = meta.assumingMemoryBound(to: spa_meta_header.self)
        header.pointee.flags = 0
        header.pointee.offset = 0
        header.pointee.pts = Int64(sentAt)
        header.pointee.dts_offset = 0
        header.pointee.seq = buffersSent
        buffersSent += 1
    }

    /// A white picture in the wire layout (Y 235, chroma neutral).
    func writeWhite(to destination: UnsafeMutableRawPointer) {
        let bytes = destination.assumingMemoryBound(to: UInt8.self)
        switch wire {
        case .i420, .nv12:
            memset(bytes, 235, width * height)
            memset(bytes + width * height, 128, width * height / 2)
        case .yuy2:
            for pair in 0..<(width * height / 2) {
                bytes[pair * 4] = 235
                bytes[pair * 4 + 1] = 128
                bytes[pair * 4 + 2] = 235
                bytes[pair * 4 + 3] = 128
            }
        case .mjpeg:
            break  // JPEGs are made white by the encoder
        }
    }

    /// Copies `frame` (I420 or NV12 in the pipeline's padded layout) into `destination` in the wire layout.
    func write(_ frame: VideoFrame, to destination: UnsafeMutableRawPointer) {
        switch wire {
        case .mjpeg:
            break  // sent from `latestJPEG` instead
        case .i420, .nv12:
            var offset = 0
            for (index, plane) in frame.planes.enumerated() {
                let rowBytes = index == 0 ? width : (wire == .i420 ? width / 2 : width)
                for row in 0..<plane.rows {
                    (destination + offset).copyMemory(from: frame.plane(index) + row * plane.stride, byteCount: rowBytes)
                    offset += rowBytes
                }
            }
        case .yuy2:
            let y = frame.plane(0).assumingMemoryBound(to: UInt8.self), u = frame.plane(1).assumingMemoryBound(to: UInt8.self)
            let v = frame.plane(2).assumingMemoryBound(to: UInt8.self)
            let out = destination.assumingMemoryBound(to: UInt8.self)
            for row in 0..<height {
                let yRow = y + row * frame.planes[0].stride, uRow = u + (row / 2) * frame.planes[1].stride, vRow = v + (row / 2) * frame.planes[2].stride
                let line = out + row * width * 2
                for pair in 0..<(width / 2) {
                    line[pair * 4] = yRow[pair * 2]
                    line[pair * 4 + 1] = uRow[pair]
                    line[pair * 4 + 2] = yRow[pair * 2 + 1]
                    line[pair * 4 + 3] = vRow[pair]
                }
            }
        }
    }
}
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
say("ready \(nodeName) \(cameraName) \(wire.rawValue) \(width)x\(height)@\(rateValue)")

// The render thread's body: frame n is due at origin + n/rate, whatever the consumers do.
// With --flash, frames are due on the whole-second grid of CLOCK_MONOTONIC (frame 0 on the next second).
let origin = flash ? (MonotonicClock.now() / 1_000_000_000 + 1) * 1_000_000_000 : MonotonicClock.now()
let grid = FrameGrid(origin: origin, rate: rate)
let framesPerSecond = UInt64(rate.numerator) / UInt64(max(rate.denominator, 1))
let renderFormat = CameraFormat(pixelFormat: wire == .nv12 ? .nv12 : .i420, width: width, height: height, frameRate: rate)
var noise = SensorNoise(amplitude: noiseAmplitude, seed: UInt64(truncatingIfNeeded: origin) | 1)
let noisyPool = FramePool(capacity: VideoFrame.byteCount(format: renderFormat.pixelFormat, width: width, height: height), limit: 4)
/// Hands the newest picture to the stream: its process callback copies it into the next buffer.
func triggerProcess() {
    pw_thread_loop_lock(loop)
    if producer.streaming { _ = pw_stream_trigger_process(stream) }
    pw_thread_loop_unlock(loop)
}
if let replay {
    var tick: Int64 = 0
    while true {
        MonotonicClock.sleep(until: grid.time(ofFrame: tick))
        let jpeg = replay.loop.frame(tick: tick, phase: replay.phase)
        let sentAt = MonotonicClock.now()
        frameLog?.append(sequence: tick, bytes: jpeg, time: sentAt)
        producer.latestJPEG.withLock { $0 = (jpeg, sentAt) }
        triggerProcess()
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
        producer.latestJPEG.withLock { $0 = (jpeg, sentAt) }
    } else {
        producer.latest.withLock { $0 = (frame, isFlash, sentAt) }
    }
    triggerProcess()
}
