import Foundation
import StudioCore
import Control
import EventStore

// The `result` of each control command, one Codable type per shape. The server encodes them with
// `ControlCoding.encoder`; the CLI decodes them (`studio status` prints a `StatusReply`). Keys are
// declared in each `CodingKeys`; `@Nullable` values are `null` when absent, plain optionals are left out.
// docs/control-protocol.md describes the same shapes.

public struct PingReply: Codable, Sendable {
    public var pong = true

    public init(pong: Bool = true) {
        self.pong = pong
    }
}

// MARK: cameras

public struct CamerasReply: Codable, Sendable {
    public var cameras: [CameraView]

    public init(cameras: [CameraView]) {
        self.cameras = cameras
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
    /// `removed` or `silent` while lost.
    @Nullable public var lostReason: String?
    public var frames: Int
    public var framesDropped: Int
    public var framesCorrupt: Int
    public var offeredModes: [OfferedModeView]
    /// A compressed (MJPEG) camera's decoding by demand; null for a camera that delivers raw frames.
    @Nullable public var decode: DecodeView?

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
        case decode
    }

    public init(name: String, backend: String, identity: String, displayName: String, state: String, format: FormatView? = nil, onProgram: Bool, tally: String? = nil, lostReason: String? = nil, frames: Int, framesDropped: Int, framesCorrupt: Int, offeredModes: [OfferedModeView], decode: DecodeView? = nil) {
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

// MARK: status

public struct StatusReply: Codable, Sendable {
    public var session: Int64
    public var startedAt: Date
    public var uptimeSeconds: Double
    public var program: ProgramView
    public var encoder: EncoderView
    public var outputs: [OutputView]
    public var iso: [IsoView]
    /// How many cameras the session has seen, and how many of them are lost.
    public var cameras: Int
    public var camerasLost: Int
    public var audioInput: AudioInputView
    /// The program audio as it goes to the encoder.
    public var audio: AudioView
    public var database: String
    public var store: StoreView
    /// The recording directory's free space; null when not recording.
    @Nullable public var disk: DiskView?

    public struct DiskView: Codable, Sendable {
        public var path: String
        @Nullable public var freeBytes: Int64?

        enum CodingKeys: String, CodingKey {
            case path
            case freeBytes = "free_bytes"
        }

        public init(path: String, freeBytes: Int64? = nil) {
            self.path = path
            self.freeBytes = freeBytes
        }
    }

    public struct ProgramView: Codable, Sendable {
        @Nullable public var source: String?
        /// `camera` or `scene`.
        @Nullable public var sourceKind: String?
        @Nullable public var preview: String?
        /// The transition on air.
        @Nullable public var transition: TransitionView?
        /// What `auto` runs.
        public var defaultTransition: TransitionReply
        /// Every camera and scene seen, by name: `program`, `preview` or `both`.
        public var tally: [String: String]
        @Nullable public var slate: String?
        /// The backup on program in place of a lost camera or scene, until the operator cuts.
        @Nullable public var backup: BackupView?
        public var format: String
        public var fps: Double
        public var frames: Int
        public var slateFrames: Int
        public var composedFrames: Int
        public var transitionFrames: Int
        public var lateTicks: Int
        /// Camera pictures shown at reduced size (scaled up): a full-size decode not ready in time. 0 normally.
        public var reducedFrames: Int
        /// Ticks a take waited for its camera's first full-size picture (a camera just woken from idle).
        public var heldTicks: Int
        public var programMilliseconds: Int64
        /// The picture settings in force, by camera: only cameras whose settings change their picture.
        public var pictures: [String: PictureSettings] = [:]
        /// The overlays, in drawing order, each on air or not.
        public var overlays: [OverlayView]

        public struct OverlayView: Codable, Sendable {
            public var name: String
            public var on: Bool

            public init(name: String, on: Bool) {
                self.name = name
                self.on = on
            }
        }

        public struct TransitionView: Codable, Sendable {
            public var kind: String
            public var frames: Int
            public var shown: Int
            @Nullable public var from: String?
            public var to: String

            public init(kind: String, frames: Int, shown: Int, from: String? = nil, to: String) {
                self.kind = kind
                self.frames = frames
                self.shown = shown
                self.from = from
                self.to = to
            }
        }

        public struct BackupView: Codable, Sendable {
            /// What was lost on program, the backup on air, and `auto` or `manual`.
            public var lost: String
            public var onAir: String
            public var back: String
            /// How the program gets back: `studio switch cam1`, or by itself.
            public var cutBack: String

            enum CodingKeys: String, CodingKey {
                case lost, back
                case onAir = "on_air"
                case cutBack = "cut_back"
            }

            public init(lost: String, onAir: String, back: String, cutBack: String) {
                self.lost = lost
                self.onAir = onAir
                self.back = back
                self.cutBack = cutBack
            }
        }

        enum CodingKeys: String, CodingKey {
            case source, preview, transition, tally, slate, backup, format, fps, frames, pictures, overlays
            case sourceKind = "source_kind"
            case defaultTransition = "default_transition"
            case composedFrames = "composed_frames"
            case transitionFrames = "transition_frames"
            case slateFrames = "slate_frames"
            case lateTicks = "late_ticks"
            case reducedFrames = "reduced_frames"
            case heldTicks = "held_ticks"
            case programMilliseconds = "program_ms"
        }

        public init(source: String? = nil, sourceKind: String? = nil, preview: String? = nil, transition: TransitionView? = nil, defaultTransition: TransitionReply, tally: [String: String], slate: String? = nil, backup: BackupView? = nil, format: String, fps: Double, frames: Int, slateFrames: Int, composedFrames: Int, transitionFrames: Int, lateTicks: Int, reducedFrames: Int, heldTicks: Int, programMilliseconds: Int64, pictures: [String: PictureSettings] = [:], overlays: [OverlayView]) {
            self.source = source
            self.sourceKind = sourceKind
            self.preview = preview
            self.transition = transition
            self.defaultTransition = defaultTransition
            self.tally = tally
            self.slate = slate
            self.backup = backup
            self.format = format
            self.fps = fps
            self.frames = frames
            self.slateFrames = slateFrames
            self.composedFrames = composedFrames
            self.transitionFrames = transitionFrames
            self.lateTicks = lateTicks
            self.reducedFrames = reducedFrames
            self.heldTicks = heldTicks
            self.programMilliseconds = programMilliseconds
            self.pictures = pictures
            self.overlays = overlays
        }
    }

    public struct EncoderView: Codable, Sendable {
        /// libx264 or h264_vaapi.
        public var video: String
        /// +1 at each mid-show fallback.
        public var generation: Int
        /// auto, vaapi or x264.
        public var choice: String
        /// Why auto did not use the GPU.
        @Nullable public var fallbackReason: String?
        public var preset: String
        public var bitrate: Int
        public var framesEncoded: Int
        public var framesDropped: Int
        public var encodeErrors: Int
        /// While the encoder cannot keep up (over 10 % of its frames dropped for 5 s): the frames per
        /// second it manages; null while it keeps up.
        @Nullable public var overloadedFPS: Double?
        /// What the encoder sustained at start on camera-like pictures (formats above 1280x720@30 only; null otherwise).
        @Nullable public var probeFPS: Double?
        public var audio: String

        enum CodingKeys: String, CodingKey {
            case video, generation, choice, preset, bitrate, audio
            case fallbackReason = "fallback_reason"
            case framesEncoded = "frames_encoded"
            case framesDropped = "frames_dropped"
            case encodeErrors = "encode_errors"
            case overloadedFPS = "overloaded_fps"
            case probeFPS = "probe_fps"
        }

        public init(video: String, generation: Int, choice: String, fallbackReason: String? = nil, preset: String, bitrate: Int, framesEncoded: Int, framesDropped: Int, encodeErrors: Int, overloadedFPS: Double? = nil, probeFPS: Double? = nil, audio: String) {
            self.video = video
            self.generation = generation
            self.choice = choice
            self.fallbackReason = fallbackReason
            self.preset = preset
            self.bitrate = bitrate
            self.framesEncoded = framesEncoded
            self.framesDropped = framesDropped
            self.encodeErrors = encodeErrors
            self.overloadedFPS = overloadedFPS
            self.probeFPS = probeFPS
            self.audio = audio
        }
    }

    /// An output as `status` lists it (the same view as `outputs`).
    public typealias OutputView = StudioViews.OutputView

    public struct IsoView: Codable, Sendable {
        public var camera: String
        public var path: String
        /// `passthrough` (the camera's own compressed frames, copied) or `encode`.
        public var mode: String
        /// What the file's video is: `h264`, or passthrough the camera's codec (`mjpeg`).
        public var codec: String
        public var encoder: String
        /// Why not the encoder asked for (auto without a GPU, or a mid-show fallback).
        @Nullable public var fallbackReason: String?
        public var generation: Int
        public var preset: String
        /// `WIDTHxHEIGHT` once known.
        @Nullable public var size: String?
        public var framesEncoded: Int
        public var framesSkipped: Int
        public var framesUnusable: Int
        public var encodeErrors: Int
        public var state: String
        public var bytesWritten: Int
        /// The feed's latency over the last frames written, p50 and p95 in ms by stage (`capture_to_written`:
        /// capture to file; an encoded feed also by its stages): empty until known.
        public var latency: [String: LatencyQuantiles] = [:]

        enum CodingKeys: String, CodingKey {
            case camera, path, mode, codec, encoder, generation, preset, size, state
            case latency = "latency_ms"
            case fallbackReason = "fallback_reason"
            case framesEncoded = "frames_encoded"
            case framesSkipped = "frames_skipped"
            case framesUnusable = "frames_unusable"
            case encodeErrors = "encode_errors"
            case bytesWritten = "bytes_written"
        }

        public init(camera: String, path: String, mode: String, codec: String, encoder: String, fallbackReason: String? = nil, generation: Int, preset: String, size: String? = nil, framesEncoded: Int, framesSkipped: Int, framesUnusable: Int, encodeErrors: Int, state: String, bytesWritten: Int, latency: [String: LatencyQuantiles] = [:]) {
            self.camera = camera
            self.path = path
            self.mode = mode
            self.codec = codec
            self.encoder = encoder
            self.fallbackReason = fallbackReason
            self.generation = generation
            self.preset = preset
            self.size = size
            self.framesEncoded = framesEncoded
            self.framesSkipped = framesSkipped
            self.framesUnusable = framesUnusable
            self.encodeErrors = encodeErrors
            self.state = state
            self.bytesWritten = bytesWritten
            self.latency = latency
        }
    }

    /// Where the program audio comes from; a PipeWire microphone adds which node it has and how it is
    /// doing (the other members are left out for other sources).
    public struct AudioInputView: Codable, Sendable {
        /// `tone`, `silence`, `pipewire` or `pipewire:NODE`.
        public var source: String
        /// The node captured (null while none).
        public var node: Nullable<String>?
        /// The default microphone: what the daemon's default.audio.source names (only when following it).
        public var defaultNode: Nullable<String>?
        public var state: String?
        public var connections: Int?
        public var capturedSeconds: Double?
        /// Program audio filled with silence while the microphone was missing.
        public var silenceSeconds: Double?
        public var discardedSamples: Int?

        enum CodingKeys: String, CodingKey {
            case source, node, state, connections
            case defaultNode = "default_node"
            case capturedSeconds = "captured_s"
            case silenceSeconds = "silence_s"
            case discardedSamples = "discarded_samples"
        }

        public init(source: String, node: Nullable<String>? = nil, defaultNode: Nullable<String>? = nil, state: String? = nil, connections: Int? = nil, capturedSeconds: Double? = nil, silenceSeconds: Double? = nil, discardedSamples: Int? = nil) {
            self.source = source
            self.node = node
            self.defaultNode = defaultNode
            self.state = state
            self.connections = connections
            self.capturedSeconds = capturedSeconds
            self.silenceSeconds = silenceSeconds
            self.discardedSamples = discardedSamples
        }
    }

    public struct AudioView: Codable, Sendable {
        /// The encoder's input (the program after the mixer).
        public var levels: LevelsReply
        /// The mixer: inputs, master, program loudness (`audio`'s reply).
        public var mixer: AudioReply

        public init(levels: LevelsReply, mixer: AudioReply) {
            self.levels = levels
            self.mixer = mixer
        }
    }

    /// The event store's writer: what waits for the database, what reached it, what never will.
    public struct StoreView: Codable, Sendable {
        /// Events waiting on the store thread for the database (it is busy or failing).
        public var queued: Int
        public var written: Int
        /// Events that will never be stored (queue or backlog full, or a write no retry can fix).
        public var lost: Int
        /// Since when writes have been failing and are retried; null while the database takes them.
        @Nullable public var retryingSince: Date?
        @Nullable public var lastError: String?
        /// Times the database file was deleted or replaced mid-show and the store carried on at its path.
        public var replacements: Int
        /// While the store cannot write to a database at its path (deleted or replaced, or the path holds
        /// another file): what is wrong. Null otherwise.
        @Nullable public var fileProblem: String?

        public init(_ statistics: EventStoreStatistics) {
            queued = statistics.eventsQueued
            written = statistics.eventsWritten
            lost = statistics.eventsLost
            retryingSince = statistics.failingSince
            lastError = statistics.lastWriteError
            replacements = statistics.databaseReplacements
            fileProblem = statistics.databaseProblem
        }

        enum CodingKeys: String, CodingKey {
            case queued, written, lost, replacements
            case retryingSince = "retrying_since"
            case lastError = "last_error"
            case fileProblem = "file_problem"
        }
    }

    enum CodingKeys: String, CodingKey {
        case session, program, encoder, outputs, iso, cameras, audio, database, store, disk
        case startedAt = "started_at"
        case uptimeSeconds = "uptime_s"
        case camerasLost = "cameras_lost"
        case audioInput = "audio_input"
    }

    public init(session: Int64, startedAt: Date, uptimeSeconds: Double, program: ProgramView, encoder: EncoderView, outputs: [OutputView], iso: [IsoView], cameras: Int, camerasLost: Int, audioInput: AudioInputView, audio: AudioView, database: String, store: StoreView, disk: DiskView? = nil) {
        self.session = session
        self.startedAt = startedAt
        self.uptimeSeconds = uptimeSeconds
        self.program = program
        self.encoder = encoder
        self.outputs = outputs
        self.iso = iso
        self.cameras = cameras
        self.camerasLost = camerasLost
        self.audioInput = audioInput
        self.audio = audio
        self.database = database
        self.store = store
        self.disk = disk
    }
}

/// `levels` (and `status`'s `audio.levels`): the program audio's levels in dBFS, one number per channel
/// (left, right), over the last 100 ms; the peak hold is the highest peak over the last 1.5 s. Silence
/// reads `floor_dbfs` (-96), never -inf.
public struct LevelsReply: Codable, Sendable, Equatable {
    public var peakDBFS: [Double]
    public var rmsDBFS: [Double]
    public var peakHoldDBFS: [Double]
    public var floorDBFS = AudioLevels.floor

    public init(_ levels: AudioLevels) {
        func tenths(_ values: [Double]) -> [Double] { values.map { ($0 * 10).rounded() / 10 } }
        peakDBFS = tenths(levels.peakDBFS)
        rmsDBFS = tenths(levels.rmsDBFS)
        peakHoldDBFS = tenths(levels.peakHoldDBFS)
    }

    enum CodingKeys: String, CodingKey {
        case peakDBFS = "peak_dbfs"
        case rmsDBFS = "rms_dbfs"
        case peakHoldDBFS = "peak_hold_dbfs"
        case floorDBFS = "floor_dbfs"
    }
}

/// `metrics`: the Prometheus text exposition format (0.0.4), one string.
public struct MetricsReply: Codable, Sendable {
    public var text: String

    public init(text: String) {
        self.text = text
    }
}

// MARK: sessions, log, recordings

public struct SessionView: Codable, Sendable {
    public var id: Int64
    public var startedAt: Date
    @Nullable public var endedAt: Date?
    @Nullable public var endReason: String?
    public var switchCount: Int
    public var eventCount: Int
    /// The program's integrated loudness (EBU R128, LUFS) and highest sample (dBFS), kept when the
    /// session stopped; left out while open, after a crash, or for a silent program.
    public var integratedLUFS: Double?
    public var peakDBFS: Double?

    enum CodingKeys: String, CodingKey {
        case id
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case endReason = "end_reason"
        case switchCount = "switch_count"
        case eventCount = "event_count"
        case integratedLUFS = "integrated_lufs"
        case peakDBFS = "peak_dbfs"
    }

    public init(id: Int64, startedAt: Date, endedAt: Date? = nil, endReason: String? = nil, switchCount: Int, eventCount: Int, integratedLUFS: Double? = nil, peakDBFS: Double? = nil) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.endReason = endReason
        self.switchCount = switchCount
        self.eventCount = eventCount
        self.integratedLUFS = integratedLUFS
        self.peakDBFS = peakDBFS
    }
}

/// `sessions`: newest first.
public struct SessionsReply: Codable, Sendable {
    public var sessions: [SessionView]

    public init(sessions: [SessionView]) {
        self.sessions = sessions
    }
}

/// `log`: a session and its events, oldest first; `session` is null when the events come from every
/// session (filters without a session: each event says its session).
public struct LogReply: Codable, Sendable {
    @Nullable public var session: SessionView?
    public var events: [EventView]
    /// The `after_id` that asks for the next page; null when this page ends the log.
    @Nullable public var nextAfterID: Int64?

    enum CodingKeys: String, CodingKey {
        case session, events
        case nextAfterID = "next_after_id"
    }

    public init(session: SessionView? = nil, events: [EventView], nextAfterID: Int64? = nil) {
        self.session = session
        self.events = events
        self.nextAfterID = nextAfterID
    }
}

/// `recordings`: a session's files, the program's first, then the ISO feeds by camera.
public struct RecordingsReply: Codable, Sendable {
    public var session: SessionView
    public var recordings: [RecordingView]

    public init(session: SessionView, recordings: [RecordingView]) {
        self.session = session
        self.recordings = recordings
    }
}

public struct RecordingView: Codable, Sendable {
    public var id: Int64
    /// `program` or the camera's name.
    public var camera: String
    /// `program` or `iso`.
    public var kind: String
    public var path: String
    public var startedAt: Date
    /// Null while recording, or when the server was killed.
    @Nullable public var endedAt: Date?
    /// Size on disk; null when the file is gone.
    @Nullable public var bytes: Int?

    enum CodingKeys: String, CodingKey {
        case id, camera, kind, path, bytes
        case startedAt = "started_at"
        case endedAt = "ended_at"
    }

    public init(id: Int64, camera: String, kind: String, path: String, startedAt: Date, endedAt: Date? = nil, bytes: Int? = nil) {
        self.id = id
        self.camera = camera
        self.kind = kind
        self.path = path
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.bytes = bytes
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
