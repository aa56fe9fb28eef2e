import FrameDrawing
import StudioCore

/// What the program (or preview) shows: a camera, or a composed scene. Cameras and scenes share one
/// namespace; a name that is both means the scene.
public enum ProgramSource: Sendable, Hashable, Codable, CustomStringConvertible {
    case camera(CameraID)
    case scene(String)

    public var name: String {
        switch self {
        case .camera(let camera): return camera.name
        case .scene(let name): return name
        }
    }

    public var camera: CameraID? {
        if case .camera(let camera) = self { return camera }
        return nil
    }

    public var description: String { name }
}

/// What a cut, a take or a preview did: `source` is on program (or preview) from frame `frameNumber`,
/// pts `programTime`, on. For a transition, the frame it started on.
public struct SwitchOutcome: Sendable, Hashable {
    public var source: ProgramSource
    /// What was there before (nil if nothing was).
    public var previous: ProgramSource?
    /// The pts of the first program frame showing `source` (the FLV timestamp of the cut), or the first
    /// frame of the transition to it.
    public var programTime: MediaTime
    public var frameNumber: Int64
    /// The transition that started (nil for a cut or a preview).
    public var transition: TransitionSpec?

    public init(source: ProgramSource, previous: ProgramSource?, programTime: MediaTime, frameNumber: Int64,
                transition: TransitionSpec? = nil) {
        self.source = source
        self.previous = previous
        self.programTime = programTime
        self.frameNumber = frameNumber
        self.transition = transition
    }

    /// The camera now on program, when the source is a camera.
    public var camera: CameraID? { source.camera }
}

/// What an overlay change did: `name` is on air (`on`) or off from frame `frameNumber`, pts
/// `programTime`, on. `changed` is false when it already was.
public struct OverlayOutcome: Sendable, Hashable {
    public var name: String
    public var on: Bool
    public var changed: Bool
    public var programTime: MediaTime
    public var frameNumber: Int64
}

/// An overlay and whether it is on air.
public struct OverlayStatus: Sendable, Codable, Hashable {
    public var name: String
    public var on: Bool

    public init(name: String, on: Bool) {
        self.name = name
        self.on = on
    }
}

/// Why a cut, take or preview did not happen.
public enum SwitchError: Error, Equatable, CustomStringConvertible {
    /// No camera of that name (and no scenes are declared); `available` lists the cameras, in order.
    case unknownCamera(CameraID, available: [CameraID])
    /// Neither a camera nor a scene of that name.
    case unknownSource(String, cameras: [CameraID], scenes: [String])
    /// A camera that was a source and was removed from the show (`removeSource`); `available` lists the
    /// cameras there are.
    case removedCamera(CameraID, available: [CameraID])
    /// `scene NAME` for a name that is no scene.
    case unknownScene(String, scenes: [String])
    /// `cut` or `auto` while nothing is on preview.
    case nothingOnPreview
    /// `auto` while a transition runs.
    case transitionRunning(String)
    /// A transition that cannot run (its length out of range).
    case invalidTransition(String)
    /// Scenes that cannot be composed (the reason names the scene).
    case invalidScene(String)
    /// Picture settings that cannot be applied (`PictureSettings.problem`).
    case invalidPicture(String)
    /// No overlay of that name; `overlays` lists those that exist.
    case unknownOverlay(String, overlays: [String])
    /// Overlays that cannot be drawn (the reason names the overlay).
    case invalidOverlay(String)
    /// The switcher stopped before the cut reached a program frame.
    case stopped(CameraID)
    /// The switcher stopped before the command reached a program frame.
    case stoppedBefore(String)

    public var description: String {
        func list(_ names: [String], _ noun: String) -> String {
            names.isEmpty ? "no \(noun)s" : "\(noun)s: " + names.joined(separator: ", ")
        }
        switch self {
        case let .unknownCamera(camera, available):
            let list = available.isEmpty ? "no cameras are available" : "available cameras: " + available.map(\.name).joined(separator: ", ")
            return "unknown camera '\(camera.name)'; \(list)"
        case let .removedCamera(camera, available):
            let list = available.isEmpty ? "no cameras are available" : "available cameras: " + available.map(\.name).joined(separator: ", ")
            return "camera '\(camera.name)' was removed from the show; it is no source until it is added again; \(list)"
        case let .unknownSource(name, cameras, scenes):
            return "no camera or scene '\(name)'; \(list(cameras.map(\.name), "camera")); \(list(scenes, "scene"))"
        case let .unknownScene(name, scenes):
            return "no scene '\(name)'; \(list(scenes, "scene"))"
        case .nothingOnPreview:
            return "nothing is on preview: put a camera or scene there first (`studio preview NAME`)"
        case let .transitionRunning(what):
            return "a transition is running (\(what)); `studio cut` completes it now"
        case let .invalidTransition(why), let .invalidScene(why), let .invalidPicture(why), let .invalidOverlay(why):
            return why
        case let .unknownOverlay(name, overlays):
            return "no overlay '\(name)'; \(list(overlays, "overlay"))"
        case let .stopped(camera):
            return "the program stopped before the cut to '\(camera.name)' went to air"
        case let .stoppedBefore(what):
            return "the program stopped before \(what) went to air"
        }
    }
}

/// Whether a camera or scene is seen: on program (red), on preview (green), or both.
public enum Tally: String, Sendable, Codable, Hashable {
    case program, preview, both
}

/// A transition on air.
public struct TransitionStatus: Sendable, Codable, Hashable {
    public var kind: TransitionKind
    public var frames: Int
    /// Frames of it shown so far.
    public var shown: Int
    public var from: String?
    public var to: String
}

/// A snapshot of the program feed, cheap to take from any thread.
public struct SwitcherStatus: Sendable, Codable, Hashable {
    public var isRunning = false
    /// What is selected for program: a camera (shown, or shown as a "CAMERA LOST" slate) or a scene.
    public var program: ProgramSource?
    /// What is on preview, ready for `cut` or `auto`.
    public var preview: ProgramSource?
    /// The transition on air, if one is.
    public var transition: TransitionStatus?
    /// The backup on program in place of a lost camera or scene, until the operator cuts (or it cuts back).
    public var backup: BackupStatus?
    /// `auto`'s transition when it names none.
    public var defaultTransition = TransitionSpec(kind: .mix, frames: 15)
    /// Every camera and scene seen on program or preview (cameras inside a scene too), by name.
    public var tally: [String: Tally] = [:]
    /// Every source the switcher can cut to, in order.
    public var sources: [CameraID] = []
    /// The scenes it can show, in declared order.
    public var scenes: [String] = []
    /// The picture settings in force, by camera name: only cameras whose settings change their picture.
    public var pictures: [String: PictureSettings] = [:]
    /// The overlays, in drawing order (as declared), each on air or not.
    public var overlays: [OverlayStatus] = []
    /// The slate on program now, nil while a camera's picture is shown: `"CAMERA LOST cam2"` (its newest
    /// frame is older than the loss timeout, or it was removed), `"WAITING FOR cam2"` (it has not delivered
    /// a frame yet), `"NO CAMERA"` (none selected), `"CAMERA ERROR cam2"` (its frames cannot be converted).
    public var slate: String?
    public var framesDelivered: Int64 = 0
    /// Frames delivered per second, measured over the last ~2 seconds.
    public var deliveredFPS: Double = 0
    public var slateFrames: Int64 = 0
    /// Frames converted by libswscale (size or pixel format differed from the program's).
    public var scaledFrames: Int64 = 0
    /// Frames handed on as they came (same size, I420): no copy.
    public var passThroughFrames: Int64 = 0
    /// Frames composed from a scene's layers, or a camera's frame copied to draw overlays on.
    public var composedFrames: Int64 = 0
    /// Frames of transitions.
    public var transitionFrames: Int64 = 0
    /// Program ticks skipped because the clock thread woke up too late (their frame numbers are skipped).
    public var lateTicks: Int64 = 0
    /// Camera pictures shown on program at reduced size (scaled up), one per camera per frame: a camera
    /// whose full-size decode was not ready when it went on air (see `CameraDemand`). 0 normally.
    public var reducedFrames: Int64 = 0
    /// Ticks a take waited for its camera's first full-size picture (a camera nobody needed until the
    /// take: its decode had just started), at most `ProgramSwitcher.Core.maximumHold` per take.
    public var heldTicks: Int64 = 0
    /// Number of the last delivered frame (-1 before the first); its pts is `MediaTime(count:rate:)`.
    public var frameNumber: Int64 = -1

    public init() {}

    /// The camera on program, when program is a camera.
    public var programSource: CameraID? { program?.camera }
}

extension ProgramSwitcher {
    /// Tunables; the defaults suit the live program.
    public struct Configuration: Sendable, Hashable {
        /// A source whose newest frame is older than this is shown as a "CAMERA LOST" slate. Nil: the
        /// larger of 3 program frame intervals and 300 ms.
        public var lossTimeout: Double?
        /// Emit `.cameraLost` / `.cameraReturned` (details `scope: program`, with the program time) when the
        /// camera on program goes to a "CAMERA LOST" slate and comes back. Off by default: the server's
        /// camera watch reports losses of every camera, and these would duplicate them.
        public var emitsLossEvents = false
        /// The program clock thread's name.
        public var threadName = "studio.program"
        /// The longest a tick waits past its due time for a picture captured before it that has not
        /// reached the switcher yet (`OnAirWait`), seconds. Nil: a quarter of the program frame interval;
        /// 0: never wait.
        public var onAirWait: Double?

        public init(lossTimeout: Double? = nil, emitsLossEvents: Bool = false, threadName: String = "studio.program",
                    onAirWait: Double? = nil) {
            self.lossTimeout = lossTimeout
            self.emitsLossEvents = emitsLossEvents
            self.threadName = threadName
            self.onAirWait = onAirWait
        }

        public func onAirWaitNanoseconds(for format: ProgramFormat) -> UInt64 {
            if let onAirWait { return UInt64(max(0, onAirWait) * 1e9) }
            return format.frameRate.periodNanoseconds / 4
        }

        public func lossTimeoutNanoseconds(for format: ProgramFormat) -> UInt64 {
            if let lossTimeout { return UInt64(max(0, lossTimeout) * 1e9) }
            return max(3 * format.frameRate.periodNanoseconds, 300_000_000)
        }
    }

    /// Slate background: neutral dark grey, RGB (48, 48, 48) = Y'CbCr (57, 128, 128). Slates have plain
    /// background in their top quarter (text sits lower), so a sample there tells a slate from a camera.
    public static let slateColor = YUVColor.grey(48)
    /// Slate text colour.
    public static let slateTextColor = YUVColor.white
    /// The part of every slate that is only background.
    public static let slateBackgroundRegion = RelativeRect(x: 0, y: 0, width: 1, height: 0.25)
}
