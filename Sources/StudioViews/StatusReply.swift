import Foundation
import StudioCore
import Control
import EventStore

// `status`, `levels` and `metrics`: the running server's state and counters.

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
    /// Each player by name: its item, state, `position_ms` and `remaining_ms` (as `cameras` gives them).
    public var players: [String: PlayerStatus]
    /// A capture node's clock against its switcher's (`measured`, `offset_ms`, `rtt_ms`); null on a
    /// server that does not measure one (no node, or a node without `tally_from`).
    @Nullable public var switcherClock: ClockOffsetStatus?
    /// A capture node's senders, one per camera (`SenderView`); empty on any other server.
    public var senders: [SenderView]

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
        /// A network camera's own sound copied to the file's second audio track, in AAC packets (0: none).
        public var soundPackets: Int
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
            case soundPackets = "sound_packets"
            case bytesWritten = "bytes_written"
        }

        public init(camera: String, path: String, mode: String, codec: String, encoder: String, fallbackReason: String? = nil, generation: Int, preset: String, size: String? = nil, framesEncoded: Int, framesSkipped: Int, framesUnusable: Int, encodeErrors: Int, soundPackets: Int = 0, state: String, bytesWritten: Int, latency: [String: LatencyQuantiles] = [:]) {
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
            self.soundPackets = soundPackets
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
        case session, program, encoder, outputs, iso, cameras, audio, database, store, disk, players, senders
        case startedAt = "started_at"
        case uptimeSeconds = "uptime_s"
        case camerasLost = "cameras_lost"
        case audioInput = "audio_input"
        case switcherClock = "switcher_clock"
    }

    public init(session: Int64, startedAt: Date, uptimeSeconds: Double, program: ProgramView, encoder: EncoderView, outputs: [OutputView], iso: [IsoView], cameras: Int, camerasLost: Int, audioInput: AudioInputView, audio: AudioView, database: String, store: StoreView, disk: DiskView? = nil, players: [String: PlayerStatus] = [:], switcherClock: ClockOffsetStatus? = nil, senders: [SenderView] = []) {
        self.players = players
        self.senders = senders
        self.switcherClock = switcherClock
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
