import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture
import Encoding
import Switcher
import Output

/// What `studio status` shows for one ISO feed.
public struct IsoStatistics: Sendable {
    public var camera: CameraID
    public var path: String
    /// How it records now (a passthrough ISO encodes while its camera sends raw frames).
    public var mode = IsoMode.encode
    /// Passthrough: the camera's codec (`mjpeg`, a network camera's `h264` or `hevc`); encoded: `h264`.
    public var codec = "h264"
    public var encoderName = "-"
    /// Why this ISO is not on the encoder asked for (auto without a GPU, or a mid-show fallback).
    public var fallbackReason: String?
    /// +1 at each new stream (a size change, a fallback to x264, passthrough to encoding and back): the
    /// file output starts `NAME-gN.mkv`.
    public var generation = 0
    public var width = 0
    public var height = 0
    /// Frames encoded into the ISO file (passthrough: copied into it).
    public var framesEncoded = 0
    /// Frames the ISO did not encode because its encoder was behind: refused by the encoder's full
    /// queue, or ticks its clock missed (passthrough: refused by its full queue, and a network camera's
    /// H.264/HEVC packets set aside until the next keyframe after a refusal, a reconnect or a jump).
    public var framesSkipped = 0
    /// Frames the ISO could not use (a pixel format libswscale cannot convert).
    public var framesUnusable = 0
    public var encodeErrors = 0
    /// A network camera's own sound (AAC) copied to the file's second audio track, in packets.
    public var soundPackets = 0
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
/// In passthrough mode (`IsoMode`, a camera that sends MJPEG) an `IsoPassthrough` copies the camera's
/// own frames into the same file output, stamped on the same grid; the clock and encoder start only if
/// the camera sends raw frames (switched to a mode its device offers raw only, or back from a loss
/// sending raw), and the file's stream goes to whichever of the two the camera's state calls for
/// (`IsoVideoSplice`: a new file at each change, `-gN.mkv`, on one timeline).
public final class IsoRecorder: Sendable {
    public struct Settings: Sendable {
        public var preset: String
        public var bitRate: Int
        public var keyframeIntervalSeconds: Double
        /// Rate used when the camera has not reported its own.
        public var fallbackRate: Rational
        /// A frame older than this is not encoded (the camera stopped delivering).
        public var staleAfterSeconds: Double
        /// auto (VAAPI where the machine has it), vaapi or x264; VAAPI falls back to x264 by itself.
        public var encoder: VideoEncoderChoice = .x264
        /// Testing aid (`--inject-encoder-fault N`): the encoder fails after N frames.
        public var faultInjectionAfterFrames: Int?
        /// Encode, or copy the camera's compressed frames (see `IsoMode.resolve`).
        public var mode = IsoMode.encode
        /// An ISO file, or a capture node's stream of the camera to its switcher (`path` is then the SRT URL).
        public var feed = Feed.iso
        /// The size every frame is encoded at (a node's sender); nil: the camera's own, followed.
        public var size: (width: Int, height: Int)?
        /// Rewrites each encoded video packet before the output (a node's sender adds the picture's
        /// capture time, `CaptureTimeSEI`); on the encoder's thread, so it must be quick. nil: none.
        public var stamp: (@Sendable (EncodedPacket) -> EncodedPacket)?
        /// An ISO file's tags from the program's origin (monotonic ns), the program time of the file's first
        /// video packet and the file's frame rate, asked for as each file is opened, once its first keyframe
        /// has come (`StudioServer.isoTimeTags`: the time base an editor lines the files up on, and the
        /// file's timecode). nil: none.
        public var fileTags: (@Sendable (_ origin: UInt64, _ firstVideo: MediaTime?, _ rate: Rational) -> [String: String])?

        public init(preset: String, bitRate: Int, keyframeIntervalSeconds: Double, fallbackRate: Rational, staleAfterSeconds: Double) {
            self.preset = preset
            self.bitRate = bitRate
            self.keyframeIntervalSeconds = keyframeIntervalSeconds
            self.fallbackRate = fallbackRate
            self.staleAfterSeconds = staleAfterSeconds
        }
    }

    /// What the feed is for: its threads', stage's and output's names say it.
    public enum Feed: String, Sendable {
        /// The camera's own file (`iso.camN`, `encode.camN`, output `iso-camN`).
        case iso
        /// A capture node's stream of the camera to the switcher (`send.camN`, `sendenc.camN`, output `send-camN`).
        case send
    }

    /// Frames waiting for the ISO encoder: a short burst is absorbed, a slower encoder drops.
    public static let queueCapacity = 4
    /// A passthrough ISO's JPEGs waiting for its thread (`IsoPassthrough`): a full queue refuses the newest.
    public static var passthroughQueueCapacity: Int { IsoPassthrough.queueCapacity }

    /// The ISO feed's thread (its frame clock's, or its passthrough's): `iso.camN`.
    public static func threadName(of camera: CameraID, feed: Feed = .iso) -> String { "\(feed.rawValue).\(camera.name)" }

    /// The camera recorded; a returning device's new camera object replaces it (`rebind`).
    private let source: BoundCamera
    public let cameraID: CameraID
    public let path: String
    public let output: MediaOutput
    private let settings: Settings
    private let fanOut: OutputFanOut
    private let events: any EventSink
    private let frameClock: SourceFrameClock
    /// Made when encoding starts (at `start`, or when a passthrough ISO's camera first sends raw frames).
    private let encoder: EncoderSlot
    /// Passthrough mode's feed (nil when encoding).
    private let passthrough: IsoPassthrough?
    private let splice: IsoVideoSplice
    /// The mode asked for at creation (`passthrough` also encodes while the camera sends raw frames).
    public var mode: IsoMode { settings.mode }

    public init(camera: any Camera, path: String, settings: Settings, events: any EventSink, report: (@Sendable (String) -> Void)? = nil,
         clock: any Clock = .monotonic) {
        let source = BoundCamera(camera)
        self.source = source
        self.cameraID = camera.id
        self.path = path
        self.settings = settings
        self.events = events
        // Video from this ISO's splice of its encoder and passthrough feed, plus the program audio: two producers end the stream.
        let fanOut = OutputFanOut(expectedEndOfStreams: 2)
        self.fanOut = fanOut
        let passes = settings.mode == .passthrough, name = camera.id.name, thread = Self.threadName(of: camera.id, feed: settings.feed)
        let encoder = EncoderSlot()
        self.encoder = encoder
        let splice = IsoVideoSplice(
            wanted: { passes && source.sendsCompressed ? .passthrough : .encoder },
            forward: { [stamp = settings.stamp] item in
                if let stamp, case .packet(let packet) = item, packet.kind == .video { fanOut.deliver(.packet(stamp(packet))) } else { fanOut.deliver(item) }
            },
            handedOver: { _, to in
                report?(to == .encoder
                    ? "\(name)'s ISO: the camera sends raw frames now; they are encoded into the next file until it sends JPEGs again"
                    : "\(name)'s ISO: the camera sends JPEGs again; they are copied into the next file")
            },
            requestKeyframe: { if $0 == .encoder { encoder.stage?.requestKeyframe() } })
        self.splice = splice
        passthrough = passes ? IsoPassthrough(name: thread, deliver: { splice.deliver($0, from: .passthrough) },
                                              deliverAudio: { fanOut.deliver($0) }) : nil
        if passes { splice.expect(.passthrough) }
        var fileTags: (@Sendable (MediaTime?) -> [String: String])?
        if let tags = settings.fileTags {
            fileTags = { @Sendable (first: MediaTime?) -> [String: String] in
                guard let grid = encoder.grid else { return [:] }
                return tags(grid.origin, first, grid.rate)
            }
        }
        output = MediaOutput(destination: OutputDestination(name: "\(settings.feed.rawValue)-\(name)", url: path), events: events,
                             requestKeyframe: { encoder.stage?.requestKeyframe() }, fileTags: fileTags)
        fanOut.add(output)
        var accepts: (@Sendable (VideoFrame) -> Bool)?
        if passes { accepts = { source.isRawFrame($0) } }
        frameClock = SourceFrameClock(name: thread, staleAfterSeconds: settings.staleAfterSeconds, clock: clock, size: settings.size,
                                      frames: { source.camera.frames },
                                      accepts: accepts,
                                      submit: { frame, pts in _ = encoder.stage?.submit(frame, pts: pts) })
    }

    public var camera: any Camera { source.camera }

    /// True when this ISO encodes the camera's decoded frames (it then needs every frame at full size);
    /// a passthrough ISO copies the compressed frames and leaves decoding to what the switcher shows.
    public var needsDecodedFrames: Bool { passthrough == nil }

    /// Records `camera` from now on (the same device came back as a new camera object): same file,
    /// same timeline; the encoder is reopened if its size changed. A passthrough ISO's camera that came
    /// back sending raw frames is encoded from here on.
    public func rebind(to camera: any Camera) {
        source.camera = camera
        passthrough?.rebind(to: camera)
        followCamera()
    }

    /// The camera's mode changed (`studio camera`): a passthrough ISO starts encoding if the camera
    /// now sends raw frames.
    public func cameraModeChanged() { followCamera() }

    /// The program audio's items (format, packets, end of stream) for this ISO's file. Never blocks.
    public func deliverAudio(_ item: MediaItem) { fanOut.deliver(item) }

    public var statistics: IsoStatistics {
        let spliced = splice.statistics
        let encoding = encoder.stage?.statistics
        let ticks = frameClock.statistics
        let copied = passthrough?.statistics
        let isCopying = passthrough != nil && spliced.active != .encoder
        var statistics = IsoStatistics(camera: cameraID, path: path, mode: isCopying ? .passthrough : .encode)
        statistics.generation = spliced.generation
        statistics.framesEncoded = (copied?.framesWritten ?? 0) + (encoding?.framesEncoded ?? 0)
        statistics.framesSkipped = (passthrough?.framesDropped ?? 0) + (copied?.framesSetAside ?? 0) + ticks.ticksMissed
            + (encoding?.framesDropped ?? 0)
        statistics.framesUnusable = ticks.framesUnusable
        statistics.soundPackets = copied?.soundPackets ?? 0
        statistics.encodeErrors = encoding?.encodeErrors ?? 0
        if isCopying, let copied {
            statistics.codec = copied.codec?.rawValue ?? "-"
            statistics.encoderName = "none (passthrough)"
            (statistics.width, statistics.height) = (copied.width, copied.height)
        } else if let encoding {
            statistics.encoderName = encoding.encoderName
            statistics.fallbackReason = encoding.fallbackReason
            (statistics.width, statistics.height) = (encoding.width, encoding.height)
        }
        return statistics
    }

    /// Starts the output, then the passthrough feed or the encoder and the frame clock, ticking from the
    /// program's `origin`. Only the first call does anything.
    public func start(origin: UInt64) {
        let rate = camera.currentFormat?.frameRate ?? settings.fallbackRate
        // Both ways stamp frames on this grid: the program's origin, the camera's rate.
        guard encoder.begin(grid: FrameGrid(origin: origin, rate: rate)) else { return }
        output.start()
        if let passthrough, let grid = encoder.grid {
            // A network camera tells its codec only once connected: one whose stream cannot be copied
            // (MPEG-2, say) sends no packets, and its pictures are encoded from then on.
            passthrough.start(grid: grid, camera: camera, idle: { [weak self] in self?.followCamera() })
        }
        followCamera()
    }

    /// Starts encoding once this ISO needs it (an encoded ISO at its start; a passthrough one the first
    /// time its camera sends raw frames), unless it has not started or has stopped.
    private func followCamera() {
        guard passthrough == nil || !source.sendsCompressed else { return }
        // The encoder is opened at the first frame's size; the stage reopens it when the size changes.
        var encoderSettings = VideoEncoderSettings(
            width: settings.size?.width ?? 0, height: settings.size?.height ?? 0, frameRate: encoder.grid?.rate ?? settings.fallbackRate, bitRate: settings.bitRate,
            preset: settings.preset, keyframeIntervalSeconds: settings.keyframeIntervalSeconds, encoder: settings.encoder)
        encoderSettings.faultInjectionAfterFrames = settings.faultInjectionAfterFrames
        let splice = self.splice, cameraID = self.cameraID, events = self.events, feed = settings.feed
        encoder.startEncoding(clock: frameClock) {
            splice.expect(.encoder)
            return VideoEncodingStage(settings: encoderSettings, role: feed == .iso ? .iso(cameraID) : .send(cameraID), queueCapacity: Self.queueCapacity,
                                      events: events, deliver: { splice.deliver($0, from: .encoder) })
        }
    }

    /// Stops the feeds, then ends the video stream within the stop budget (`StopBudget`): the encoder
    /// encodes what is queued until `deadline`, is flushed and sends end-of-stream (the file is finished
    /// once the program audio has ended too; `output.stop` then drains it).
    public func stopEncoding(deadline: UInt64 = StopBudget.deadline()) {
        let stage = encoder.end()
        passthrough?.finish()
        frameClock.stop()
        stage?.finish(deadline: deadline)
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

    /// The camera's current mode delivers compressed frames (its JPEGs reach a passthrough feed).
    var sendsCompressed: Bool { camera.sendsCompressedFrames }

    /// A frame a passthrough ISO may encode while its camera sends raw ones: full size, at the camera's
    /// current size (not a JPEG decoded before the mode changed, nor one decoded at reduced size).
    func isRawFrame(_ frame: VideoFrame) -> Bool {
        let camera = self.camera
        guard !camera.sendsCompressedFrames, frame.reduction == 1 else { return false }
        guard let format = camera.currentFormat else { return true }
        return frame.width == format.width && frame.height == format.height
    }
}

/// The ISO's grid (known at `start`) and encoding stage (made once, when encoding starts), and
/// whether it has stopped: a stage is never made, nor its clock started, after `end`.
private final class EncoderSlot: Sendable {
    private struct State {
        var grid: FrameGrid?
        var stage: VideoEncodingStage?
        var ended = false
    }
    private let state = Mutex(State())
    var stage: VideoEncodingStage? { state.withLock { $0.stage } }
    var grid: FrameGrid? { state.withLock { $0.grid } }

    /// Keeps the grid; false if `begin` was called before.
    func begin(grid: FrameGrid) -> Bool {
        state.withLock { state in
            guard state.grid == nil else { return false }
            state.grid = grid
            return true
        }
    }

    /// Makes the stage and starts `clock` on the grid, the first time only, once begun and before `end`.
    func startEncoding(clock: SourceFrameClock, make: () -> VideoEncodingStage) {
        state.withLock { state in
            guard let grid = state.grid, !state.ended, state.stage == nil else { return }
            state.stage = make()
            clock.start(grid: grid)
        }
    }

    /// No stage from now on; the one made, if any, to finish.
    func end() -> VideoEncodingStage? {
        state.withLock { state in
            state.ended = true
            return state.stage
        }
    }
}
