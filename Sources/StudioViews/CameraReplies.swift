import Foundation
import StudioCore
import Control
import EventStore

// The replies about cameras: `cameras`, `camera` (mode), `controls`, `control`, `focus`.

// MARK: cameras

public struct CamerasReply: Codable, Sendable {
    public var cameras: [CameraView]
    /// On a capture node that measures it: its clock against its switcher's (as in `status`); null elsewhere.
    @Nullable public var switcherClock: ClockOffsetStatus?

    enum CodingKeys: String, CodingKey {
        case cameras
        case switcherClock = "switcher_clock"
    }

    public init(cameras: [CameraView], switcherClock: ClockOffsetStatus? = nil) {
        self.cameras = cameras
        self.switcherClock = switcherClock
    }
}

public struct CameraView: Codable, Sendable {
    public var name: String
    public var backend: String
    public var identity: String
    public var displayName: String
    /// `lost` while its device is gone or silent.
    public var state: String
    /// What it delivers, once it has.
    @Nullable public var format: FormatView?
    public var onProgram: Bool
    /// `program`, `preview` or `both` where it is seen (inside a scene too); null where it is not.
    @Nullable public var tally: String?
    /// On a capture node with `tally_from`: what its switcher shows of this camera (as `NODE/CAM`):
    /// `program`, `preview`, `both`, `none`, or `unknown` while the node has no connection to it; null elsewhere.
    @Nullable public var switcherTally: String?
    /// `removed` or `silent` while lost.
    @Nullable public var lostReason: String?
    public var frames: Int
    public var framesDropped: Int
    public var framesCorrupt: Int
    public var offeredModes: [OfferedModeView]
    /// A compressed (MJPEG or network) camera's decoding by demand; null for a camera that delivers raw frames.
    @Nullable public var decode: DecodeView?
    /// A network source's connection, buffer and clock; null for a camera on this PC.
    @Nullable public var network: NetworkSourceStatus?
    /// A player's item, position, remaining time and state (cued, playing, paused, ended); null for any other camera.
    @Nullable public var player: PlayerStatus?

    public struct DecodeView: Codable, Sendable {
        /// `full` (seen, recorded or forced) or `reduced` (only the tiles need it).
        public var demand: String
        /// Frames decoded at full size, at reduced size, and not decoded.
        public var full: Int
        public var reduced: Int
        public var skipped: Int

        public init(demand: String, full: Int, reduced: Int, skipped: Int) {
            self.demand = demand
            self.full = full
            self.reduced = reduced
            self.skipped = skipped
        }
    }

    public struct FormatView: Codable, Sendable {
        public var pixelFormat: String
        public var width: Int
        public var height: Int
        public var fps: Double

        enum CodingKeys: String, CodingKey {
            case width, height, fps
            case pixelFormat = "pixel_format"
        }

        public init(pixelFormat: String, width: Int, height: Int, fps: Double) {
            self.pixelFormat = pixelFormat
            self.width = width
            self.height = height
            self.fps = fps
        }
    }

    public struct OfferedModeView: Codable, Sendable {
        /// A fourcc or the backend's name of the format.
        public var format: String
        public var width: Int
        public var height: Int
        public var fps: [Double]
        /// `[min, max]`, only for a continuous range.
        public var fpsRange: [Double]?

        enum CodingKeys: String, CodingKey {
            case format, width, height, fps
            case fpsRange = "fps_range"
        }

        public init(format: String, width: Int, height: Int, fps: [Double], fpsRange: [Double]? = nil) {
            self.format = format
            self.width = width
            self.height = height
            self.fps = fps
            self.fpsRange = fpsRange
        }
    }

    enum CodingKeys: String, CodingKey {
        case name, backend, identity, state, format, frames, tally
        case displayName = "display_name"
        case onProgram = "on_program"
        case lostReason = "lost_reason"
        case framesDropped = "frames_dropped"
        case framesCorrupt = "frames_corrupt"
        case offeredModes = "offered_modes"
        case decode, network, player
        case switcherTally = "switcher_tally"
    }

    public init(name: String, backend: String, identity: String, displayName: String, state: String, format: FormatView? = nil, onProgram: Bool, tally: String? = nil, switcherTally: String? = nil, lostReason: String? = nil, frames: Int, framesDropped: Int, framesCorrupt: Int, offeredModes: [OfferedModeView], decode: DecodeView? = nil, network: NetworkSourceStatus? = nil, player: PlayerStatus? = nil) {
        self.switcherTally = switcherTally
        self.network = network
        self.player = player
        self.name = name
        self.backend = backend
        self.identity = identity
        self.displayName = displayName
        self.state = state
        self.format = format
        self.onProgram = onProgram
        self.tally = tally
        self.lostReason = lostReason
        self.frames = frames
        self.framesDropped = framesDropped
        self.framesCorrupt = framesCorrupt
        self.offeredModes = offeredModes
        self.decode = decode
    }
}

// MARK: camera, controls, control

/// `camera`: what the device granted (`requested` only when a size or rate was asked for).
public struct CameraModeReply: Codable, Sendable {
    public var camera: String
    public var requested: String?
    @Nullable public var granted: GrantedMode?
    /// What the change does beyond the camera (its passthrough ISO encoding raw frames meanwhile), or nil.
    public var warning: String?

    public struct GrantedMode: Codable, Sendable {
        public var pixelFormat: String
        public var width: Int
        public var height: Int
        public var fps: Double
        /// Exact, e.g. `25/2`.
        public var fpsText: String

        enum CodingKeys: String, CodingKey {
            case width, height, fps
            case pixelFormat = "pixel_format"
            case fpsText = "fps_text"
        }

        public init(pixelFormat: String, width: Int, height: Int, fps: Double, fpsText: String) {
            self.pixelFormat = pixelFormat
            self.width = width
            self.height = height
            self.fps = fps
            self.fpsText = fpsText
        }
    }

    public init(camera: String, requested: String? = nil, granted: GrantedMode? = nil, warning: String? = nil) {
        self.camera = camera
        self.requested = requested
        self.granted = granted
        self.warning = warning
    }
}

public struct ControlsReply: Codable, Sendable {
    public var camera: String
    public var controls: [CameraControlView]

    public init(camera: String, controls: [CameraControlView]) {
        self.camera = camera
        self.controls = controls
    }
}

/// `control`: the control read back after setting it.
public struct ControlSetReply: Codable, Sendable {
    public var camera: String
    public var control: CameraControlView

    public init(camera: String, control: CameraControlView) {
        self.camera = camera
        self.control = control
    }
}

/// `focus`: how the camera focused on the point, exactly.
public struct FocusReply: Codable, Sendable {
    public var camera: String
    /// The point, in fractions of the picture (0, 0 top left).
    public var x: Double
    public var y: Double
    /// `roi`, `one_shot_autofocus`, `continuous_autofocus` or `none`.
    public var method: String
    /// The automatic exposure mode set (`auto`, `aperture_priority`), or null.
    @Nullable public var exposure: String?
    /// `[left, top, width, height]` in the sensor's pixels for `roi`, else null.
    @Nullable public var region: [Int]?
    /// What the camera lacks (null for `roi`).
    @Nullable public var reason: String?

    public init(camera: String, x: Double, y: Double, method: String, exposure: String? = nil, region: [Int]? = nil, reason: String? = nil) {
        self.camera = camera
        self.x = x
        self.y = y
        self.method = method
        self.exposure = exposure
        self.region = region
        self.reason = reason
    }
}

public struct CameraControlView: Codable, Sendable {
    /// The name to set it by (`brightness`).
    public var name: String
    /// The device's own name.
    public var label: String
    public var type: String
    public var min: Double
    public var max: Double
    public var step: Double
    public var `default`: Double
    /// Null for buttons, write-only and string controls.
    @Nullable public var value: Double?
    @Nullable public var valueText: String?
    /// Menus only (left out otherwise); indices may have holes.
    public var menu: [MenuItem]?
    public var readOnly: Bool
    public var inactive: Bool
    /// One line for people.
    public var summary: String

    public struct MenuItem: Codable, Sendable {
        public var index: Double
        public var name: String

        public init(index: Double, name: String) {
            self.index = index
            self.name = name
        }
    }

    enum CodingKeys: String, CodingKey {
        case name, label, type, min, max, step, `default`, value, menu, inactive, summary
        case valueText = "value_text"
        case readOnly = "read_only"
    }

    public init(name: String, label: String, type: String, min: Double, max: Double, step: Double, default: Double, value: Double? = nil, valueText: String? = nil, menu: [MenuItem]? = nil, readOnly: Bool, inactive: Bool, summary: String) {
        self.name = name
        self.label = label
        self.type = type
        self.min = min
        self.max = max
        self.step = step
        self.`default` = `default`
        self.value = value
        self.valueText = valueText
        self.menu = menu
        self.readOnly = readOnly
        self.inactive = inactive
        self.summary = summary
    }
}
