import FrameDrawing
import StudioCore

/// What a cut did: `camera` is on program from the frame `frameNumber` with pts `programTime` on.
public struct SwitchOutcome: Sendable, Hashable {
    public var camera: CameraID
    /// The camera on program before the cut (nil if none was).
    public var previous: CameraID?
    /// The pts of the first program frame showing `camera` (the FLV timestamp of the cut).
    public var programTime: MediaTime
    public var frameNumber: Int64

    public init(camera: CameraID, previous: CameraID?, programTime: MediaTime, frameNumber: Int64) {
        self.camera = camera
        self.previous = previous
        self.programTime = programTime
        self.frameNumber = frameNumber
    }
}

/// Why a cut did not happen.
public enum SwitchError: Error, Equatable, CustomStringConvertible {
    /// No source of that name; `available` lists the sources that exist, in order.
    case unknownCamera(CameraID, available: [CameraID])
    /// The switcher stopped before the cut reached a program frame.
    case stopped(CameraID)

    public var description: String {
        switch self {
        case let .unknownCamera(camera, available):
            let list = available.isEmpty ? "no cameras are available" : "available cameras: " + available.map(\.name).joined(separator: ", ")
            return "unknown camera '\(camera.name)'; \(list)"
        case let .stopped(camera):
            return "the program stopped before the cut to '\(camera.name)' went to air"
        }
    }
}

/// A snapshot of the program feed, cheap to take from any thread.
public struct SwitcherStatus: Sendable, Codable, Hashable {
    public var isRunning = false
    /// The camera selected for program (shown, or shown as a "CAMERA LOST" slate).
    public var programSource: CameraID?
    /// Every source the switcher can cut to, in order.
    public var sources: [CameraID] = []
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
    /// Program ticks skipped because the clock thread woke up too late (their frame numbers are skipped).
    public var lateTicks: Int64 = 0
    /// Number of the last delivered frame (-1 before the first); its pts is `MediaTime(count:rate:)`.
    public var frameNumber: Int64 = -1

    public init() {}
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

        public init(lossTimeout: Double? = nil, emitsLossEvents: Bool = false, threadName: String = "studio.program") {
            self.lossTimeout = lossTimeout
            self.emitsLossEvents = emitsLossEvents
            self.threadName = threadName
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
