import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture
import Encoding
import Switcher
import Output

/// What `studio status` shows for one ISO feed.
struct IsoStatistics: Sendable {
    var camera: CameraID
    var path: String
    var mode = IsoMode.encode
    /// Passthrough: the camera's codec (`mjpeg`); encoded: `h264`.
    var codec = "h264"
    var encoderName = "-"
    /// Why this ISO is not on the encoder asked for (auto without a GPU, or a mid-show fallback).
    var fallbackReason: String?
    /// +1 at each new stream (a size change, a fallback to x264): the file output starts `NAME-gN.mkv`.
    var generation = 0
    var width = 0
    var height = 0
    /// Frames encoded into the ISO file (passthrough: copied into it).
    var framesEncoded = 0
    /// Frames the ISO did not encode because its encoder was behind: refused by the encoder's full
    /// queue, or ticks its clock missed (passthrough: refused by its full queue).
    var framesSkipped = 0
    /// Frames the ISO could not use (a pixel format libswscale cannot convert).
    var framesUnusable = 0
    var encodeErrors = 0
}

/// One camera's ISO feed, built from the same pieces as the program: a one-source frame clock
/// (`SourceFrameClock`, thread `iso.camN`) takes the camera's newest frame on the camera's frame rate
/// (timed from the program's origin) and converts it to I420 at the camera's own size; a
/// `VideoEncodingStage` (thread `encode.camN`, stage `iso.camN`) encodes it, following the camera's
/// size and falling back to x264 once; an `OutputFanOut` hands the packets, with the program's audio,
/// to a Matroska file output (`DIR/session-ID-camN.mkv`, `-gN.mkv` from each new generation). It
/// never touches the program path: it reads the camera's `LatestValue` like the switcher does, and
/// when encoding falls behind the encoder's queue refuses frames, counts them and warns
/// (`frames_dropped`, stage `iso.camN`, at most once per 5 s).
///
/// In passthrough mode (`IsoMode`, a camera that sends MJPEG) the clock and encoder are not used: an
/// `IsoPassthrough` copies the camera's own frames into the same file output, stamped on the same grid.
final class IsoRecorder: Sendable {
    struct Settings: Sendable {
        var preset: String
        var bitRate: Int
        var keyframeIntervalSeconds: Double
        /// Rate used when the camera has not reported its own.
        var fallbackRate: Rational
        /// A frame older than this is not encoded (the camera stopped delivering).
        var staleAfterSeconds: Double
        /// auto (VAAPI where the machine has it), vaapi or x264; VAAPI falls back to x264 by itself.
        var encoder: VideoEncoderChoice = .x264
        /// Testing aid (`--inject-encoder-fault N`): the encoder fails after N frames.
        var faultInjectionAfterFrames: Int?
        /// Encode, or copy the camera's compressed frames (see `IsoMode.resolve`).
        var mode = IsoMode.encode
    }

    /// Frames waiting for the ISO encoder: a short burst is absorbed, a slower encoder drops.
    static let queueCapacity = 4

    /// The camera recorded; a returning device's new camera object replaces it (`rebind`).
    private let source: BoundCamera
    let cameraID: CameraID
    let path: String
    let output: MediaOutput
    private let settings: Settings
    private let fanOut: OutputFanOut
    private let events: any EventSink
    private let frameClock: SourceFrameClock
    /// Made at `start`, at the camera's rate then.
    private let encoder: EncoderSlot
    /// Passthrough mode's feed (nil when encoding).
    private let passthrough: IsoPassthrough?
    var mode: IsoMode { settings.mode }

    init(camera: any Camera, path: String, settings: Settings, events: any EventSink,
         clock: any Clock = .monotonic) {
        let source = BoundCamera(camera)
        self.source = source
        self.cameraID = camera.id
        self.path = path
        self.settings = settings
        self.events = events
        // Video from this ISO's encoder (or passthrough feed) plus the program audio: two producers end the stream.
        let fanOut = OutputFanOut(expectedEndOfStreams: 2)
        self.fanOut = fanOut
        passthrough = settings.mode == .passthrough
            ? IsoPassthrough(name: "iso.\(camera.id.name)", deliver: { fanOut.deliver($0) }) : nil
        let encoder = EncoderSlot()
        self.encoder = encoder
        output = MediaOutput(destination: OutputDestination(name: "iso-\(camera.id.name)", url: path), events: events,
                             requestKeyframe: { encoder.stage?.requestKeyframe() })
        fanOut.add(output)
        frameClock = SourceFrameClock(name: "iso.\(camera.id.name)", staleAfterSeconds: settings.staleAfterSeconds, clock: clock,
                                      frames: { source.camera.frames },
                                      submit: { frame, pts in _ = encoder.stage?.submit(frame, pts: pts) })
    }

    var camera: any Camera { source.camera }

    /// True when this ISO encodes the camera's decoded frames (it then needs every frame at full size);
    /// a passthrough ISO copies the compressed frames and leaves decoding to what the switcher shows.
    var needsDecodedFrames: Bool { passthrough == nil }

    /// Records `camera` from now on (the same device came back as a new camera object): same file,
    /// same timeline; the encoder is reopened if its size changed.
    func rebind(to camera: any Camera) {
        source.camera = camera
        passthrough?.rebind(to: camera)
    }

    /// The program audio's items (format, packets, end of stream) for this ISO's file. Never blocks.
    func deliverAudio(_ item: MediaItem) { fanOut.deliver(item) }

    var statistics: IsoStatistics {
        var statistics = IsoStatistics(camera: cameraID, path: path, mode: settings.mode)
        if let passthrough {
            let copied = passthrough.statistics
            statistics.codec = copied.codec?.rawValue ?? "-"
            statistics.encoderName = "none (passthrough)"
            statistics.generation = copied.generation
            statistics.width = copied.width
            statistics.height = copied.height
            statistics.framesEncoded = copied.framesWritten
            statistics.framesSkipped = passthrough.framesDropped
            return statistics
        }
        let ticks = frameClock.statistics
        statistics.framesUnusable = ticks.framesUnusable
        statistics.framesSkipped = ticks.ticksMissed
        guard let encoding = encoder.stage?.statistics else { return statistics }
        statistics.encoderName = encoding.encoderName
        statistics.fallbackReason = encoding.fallbackReason
        statistics.generation = encoding.generation
        statistics.width = encoding.width
        statistics.height = encoding.height
        statistics.framesEncoded = encoding.framesEncoded
        statistics.framesSkipped += encoding.framesDropped
        statistics.encodeErrors = encoding.encodeErrors
        return statistics
    }

    /// Starts the output, the encoder and the frame clock, ticking from the program's `origin`. Only
    /// the first call does anything.
    func start(origin: UInt64) {
        let rate = camera.currentFormat?.frameRate ?? settings.fallbackRate
        // Both modes stamp frames on this grid: the program's origin, the camera's rate.
        let grid = FrameGrid(origin: origin, rate: rate)
        if let passthrough {
            guard encoder.install(nil) else { return }
            output.start()
            passthrough.start(grid: grid, camera: camera)
            return
        }
        // The encoder is opened at the first frame's size; the stage reopens it when the size changes.
        var encoderSettings = VideoEncoderSettings(
            width: 0, height: 0, frameRate: rate, bitRate: settings.bitRate, preset: settings.preset,
            keyframeIntervalSeconds: settings.keyframeIntervalSeconds, encoder: settings.encoder)
        encoderSettings.faultInjectionAfterFrames = settings.faultInjectionAfterFrames
        let fanOut = self.fanOut, cameraID = self.cameraID, events = self.events
        guard encoder.install({
            VideoEncodingStage(settings: encoderSettings, role: .iso(cameraID), queueCapacity: Self.queueCapacity,
                               events: events, deliver: { fanOut.deliver($0) })
        }) else { return }
        output.start()
        frameClock.start(grid: grid)
    }

    /// Stops the frame clock, then ends the video stream within the stop budget (`StopBudget`): the
    /// encoder encodes what is queued until `deadline`, is flushed and sends end-of-stream (the file is
    /// finished once the program audio has ended too; `output.stop` then drains it).
    func stopEncoding(deadline: UInt64 = StopBudget.deadline()) {
        passthrough?.finish()
        frameClock.stop()
        encoder.stage?.finish(deadline: deadline)
    }
}

/// The camera an ISO feed records, replaced when the device comes back as a new object.
private final class BoundCamera: Sendable {
    private let value: Mutex<any Camera>
    init(_ camera: any Camera) { value = Mutex(camera) }
    var camera: any Camera {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// The ISO's encoding stage, made once at `start`.
private final class EncoderSlot: Sendable {
    private let value = Mutex<(installed: Bool, stage: VideoEncodingStage?)>((false, nil))
    var stage: VideoEncodingStage? { value.withLock { $0.stage } }

    /// Makes the stage (nil: a passthrough ISO's start, which has none) unless `install` was called
    /// before; false if it was.
    func install(_ make: (() -> VideoEncodingStage)?) -> Bool {
        value.withLock { slot in
            guard !slot.installed else { return false }
            slot = (true, make?())
            return true
        }
    }
}
