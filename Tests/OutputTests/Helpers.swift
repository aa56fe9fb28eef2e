#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Encoding
import Output
import TestSupport

/// Keeps every event, for assertions.
final class CollectingSink: EventSink {
    private let stored = Mutex<[StudioEvent]>([])
    func emit(_ event: StudioEvent) { stored.withLock { $0.append(event) } }
    var events: [StudioEvent] { stored.withLock { $0 } }
    func events(_ kind: EventKind) -> [StudioEvent] { events.filter { $0.kind == kind } }
    var outputKinds: [String] { events.map(\.kind.rawValue).filter { $0.hasPrefix("output_") || $0.hasPrefix("recording_") } }
}

let testSettings = VideoEncoderSettings(width: 320, height: 180, frameRate: Rational(30), bitRate: 300_000,
                                        preset: "ultrafast", keyframeIntervalSeconds: 1)

/// Real encoders fed with synthetic program media at the program's pace, delivering into a fan-out,
/// as the server's pipeline does.
final class ProgramFeed: Sendable {
    let video: VideoEncodingStage
    let audio: AudioEncodingStage
    let fanOut: OutputFanOut
    let settings: VideoEncoderSettings
    private let nextFrame = Mutex(0)
    private let origin = MonotonicClock.now()

    init(fanOut: OutputFanOut, events: EventSink = DiscardingEventSink(), settings: VideoEncoderSettings = testSettings,
         encoder: VideoEncoder? = nil, fallback: (@Sendable () throws -> VideoEncoder)? = nil) throws {
        self.fanOut = fanOut
        self.settings = settings
        video = VideoEncodingStage(encoder: try encoder ?? X264Encoder(settings: settings), queueCapacity: 16, events: events,
                                   fallback: fallback, deliver: fanOut.deliver)
        audio = AudioEncodingStage(encoder: try AACEncoder(), queueCapacity: 64, events: events, deliver: fanOut.deliver)
    }

    /// Colour of program frame n: red for the first 2 s, then blue, green, red...
    static func colour(_ n: Int) -> (UInt8, UInt8, UInt8) {
        [SyntheticMedia.red, SyntheticMedia.blue, SyntheticMedia.green][(n / 60) % 3]
    }

    /// Feeds `seconds` of program media in real time (frame n at origin + n/fps), continuing the timeline.
    func run(seconds: Double) {
        let fps = settings.frameRate
        let count = Int(seconds * fps.doubleValue)
        for _ in 0..<count {
            let n = nextFrame.withLock { value -> Int in defer { value += 1 }; return value }
            MonotonicClock.sleep(until: origin + UInt64(n) * fps.periodNanoseconds)
            let frame = SyntheticMedia.frame(width: settings.width, height: settings.height, yuv: Self.colour(n), index: n)
            video.submit(frame, pts: MediaTime(count: Int64(n), rate: fps))
            let first = Int64(n) * 48_000 * Int64(fps.denominator) / Int64(fps.numerator)
            let end = Int64(n + 1) * 48_000 * Int64(fps.denominator) / Int64(fps.numerator)
            audio.submit(SyntheticMedia.audio(firstSample: first, count: Int(end - first)))
        }
    }

    var framesFed: Int { nextFrame.withLock { $0 } }

    func finish() {
        video.finish()
        audio.finish()
    }
}

extension ProgramFeed {
    /// Feeds program media a tenth of a second at a time until `condition` holds; false after `timeout` s.
    func run(timeout: Double = 8, until condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        while !condition() {
            if MonotonicClock.now() > deadline { return false }
            run(seconds: 0.1)
        }
        return true
    }

    /// A recording output of this feed's program into `path`, trying the next file quickly after a
    /// failure (0.2 s growing to 0.4 s); started.
    func startRecording(_ path: URL, events: EventSink) -> MediaOutput {
        let video = self.video
        let output = MediaOutput(destination: OutputDestination(name: "recording", url: path.path), events: events,
                                 requestKeyframe: { video.requestKeyframe() },
                                 policy: OutputPolicy(initialBackoffSeconds: 0.2, maxBackoffSeconds: 0.4))
        fanOut.add(output)
        output.start()
        return output
    }
}


func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("output-test-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A free TCP port on 127.0.0.1 (nothing listens on it afterwards).
func freePort() throws -> Int {
    let fd = try syscall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
    defer { close(fd) }
    var address = NginxRTMP.loopbackAddress(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            try syscall("bind") { bind(fd, socketAddress, length) }
            try syscall("getsockname") { getsockname(fd, socketAddress, &length) }
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Listens on 127.0.0.1 but never accepts or answers: connects complete in the kernel, then silence.
final class BlackholeListener {
    let fd: Int32
    let port: Int
    init() throws {
        fd = try syscall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        var address = NginxRTMP.loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = self.fd
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                try syscall("bind") { bind(fd, socketAddress, length) }
                try syscall("listen") { listen(fd, 8) }
                try syscall("getsockname") { getsockname(fd, socketAddress, &length) }
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }
    deinit { close(fd) }
}
