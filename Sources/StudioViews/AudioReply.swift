import Foundation
import StudioCore
import Control

/// `audio`'s reply (and `status`'s `audio.mixer`).
public struct AudioReply: Codable, Sendable {
    /// `audio.source` as configured (`microphones`, `pipewire:all`, `tone`...).
    public var source: String
    /// Why the program's audio is silence ("no microphone: ..."); null while it has an input.
    @Nullable public var silenceReason: String?
    public var inputs: [InputView]
    public var master: MasterView
    public var program: ProgramView
    /// Changes that reached the mixer after their sample was mixed (applied at the next block).
    public var lateChanges: Int
    /// For a change: what it changed and when (absent when listing).
    public var changed: ChangeView?

    public struct InputView: Codable, Sendable {
        public var name: String
        /// `pipewire:NODE`, `tone`.
        public var source: String
        /// The node captured now (null while none).
        @Nullable public var node: String?
        @Nullable public var identity: String?
        @Nullable public var displayName: String?
        /// The capture stream's state (`streaming`...), `playing` for a tone, `lost` while its source is gone.
        public var state: String
        /// The camera on the same USB device (a webcam's own microphone), null when none.
        @Nullable public var camera: String?
        /// null: -inf (off).
        @Nullable public var gainDB: Double?
        public var muted: Bool
        public var pan: PanView
        public var delayMS: Double
        @Nullable public var follow: String?
        public var fadeMS: Double
        /// After its fader, pan, mute and follow.
        public var levels: LevelsReply
        /// Milliseconds from capture to the encoder's input now: the input's jitter buffer (its level and
        /// the resampler's half filter), the clock's block and the mixer's lag; null while it does not
        /// play (a tone has no buffer: the block and the lag).
        @Nullable public var latencyMS: Double?
        /// Milliseconds its audio is placed earlier on the program timeline than it reached the program
        /// clock (its jitter buffer's time, up to the mixer's lag), so it sits at its capture time, as
        /// the cameras' pictures do; 0 for a tone.
        public var compensationMS: Double
        /// The input's clock against the program's, as the resampling follows it (ppm; null for a tone).
        @Nullable public var clockPPM: Double?

        enum CodingKeys: String, CodingKey {
            case name, source, node, identity, state, camera, muted, pan, follow, levels
            case latencyMS = "latency_ms"
            case compensationMS = "compensation_ms"
            case clockPPM = "clock_ppm"
            case displayName = "display_name"
            case gainDB = "gain_db"
            case delayMS = "delay_ms"
            case fadeMS = "fade_ms"
        }

        public init(name: String, source: String, node: String? = nil, identity: String? = nil, displayName: String? = nil, state: String, camera: String? = nil, gainDB: Double? = nil, muted: Bool, pan: PanView, delayMS: Double, follow: String? = nil, fadeMS: Double, levels: LevelsReply, latencyMS: Double? = nil, compensationMS: Double = 0, clockPPM: Double? = nil) {
            self.name = name
            self.source = source
            self.node = node
            self.identity = identity
            self.displayName = displayName
            self.state = state
            self.camera = camera
            self.gainDB = gainDB
            self.muted = muted
            self.pan = pan
            self.delayMS = delayMS
            self.follow = follow
            self.fadeMS = fadeMS
            self.levels = levels
            self.latencyMS = latencyMS
            self.compensationMS = compensationMS
            self.clockPPM = clockPPM
        }
    }

    /// A number (-1 left .. +1 right) or `"mono"`.
    public enum PanView: Codable, Sendable {
        case position(Double)
        case mono

        public init(_ pan: AudioPan) {
            switch pan {
            case .position(let value): self = .position(value)
            case .monoToBoth: self = .mono
            }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            self = (try? container.decode(Double.self)).map(PanView.position) ?? .mono
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .position(let value): try container.encode(value)
            case .mono: try container.encode("mono")
            }
        }
    }

    public struct MasterView: Codable, Sendable {
        /// null: -inf.
        @Nullable public var gainDB: Double?
        public var ceilingDBFS: Double

        enum CodingKeys: String, CodingKey {
            case gainDB = "gain_db"
            case ceilingDBFS = "ceiling_dbfs"
        }

        public init(gainDB: Double? = nil, ceilingDBFS: Double) {
            self.gainDB = gainDB
            self.ceilingDBFS = ceilingDBFS
        }
    }

    /// The program after the master and the limiter: levels, and its EBU R128 loudness (null while
    /// there is too little audio, or only silence).
    public struct ProgramView: Codable, Sendable {
        public var levels: LevelsReply
        @Nullable public var momentaryLUFS: Double?
        @Nullable public var shortTermLUFS: Double?
        @Nullable public var integratedLUFS: Double?
        @Nullable public var rangeLU: Double?
        @Nullable public var samplePeakDBFS: Double?
        @Nullable public var truePeakDBTP: Double?

        enum CodingKeys: String, CodingKey {
            case levels
            case momentaryLUFS = "momentary_lufs"
            case shortTermLUFS = "short_term_lufs"
            case integratedLUFS = "integrated_lufs"
            case rangeLU = "range_lu"
            case samplePeakDBFS = "sample_peak_dbfs"
            case truePeakDBTP = "true_peak_dbtp"
        }

        public init(levels: LevelsReply, momentaryLUFS: Double? = nil, shortTermLUFS: Double? = nil, integratedLUFS: Double? = nil, rangeLU: Double? = nil, samplePeakDBFS: Double? = nil, truePeakDBTP: Double? = nil) {
            self.levels = levels
            self.momentaryLUFS = momentaryLUFS
            self.shortTermLUFS = shortTermLUFS
            self.integratedLUFS = integratedLUFS
            self.rangeLU = rangeLU
            self.samplePeakDBFS = samplePeakDBFS
            self.truePeakDBTP = truePeakDBTP
        }
    }

    public struct ChangeView: Codable, Sendable {
        /// The input's name, or `master`.
        public var input: String
        /// Per setting, `old -> new`.
        public var changed: [String: String]
        /// The program time of the first sample mixed with the change.
        public var programMilliseconds: Int64
        /// That sample on the program's audio timeline (48 kHz).
        public var sample: Int64

        enum CodingKeys: String, CodingKey {
            case input, changed, sample
            case programMilliseconds = "program_ms"
        }

        public init(input: String, changed: [String: String], programMilliseconds: Int64, sample: Int64) {
            self.input = input
            self.changed = changed
            self.programMilliseconds = programMilliseconds
            self.sample = sample
        }
    }

    enum CodingKeys: String, CodingKey {
        case source, inputs, master, program, changed
        case silenceReason = "silence_reason"
        case lateChanges = "late_changes"
    }

    public init(source: String, silenceReason: String? = nil, inputs: [InputView], master: MasterView, program: ProgramView, lateChanges: Int, changed: ChangeView? = nil) {
        self.source = source
        self.silenceReason = silenceReason
        self.inputs = inputs
        self.master = master
        self.program = program
        self.lateChanges = lateChanges
        self.changed = changed
    }
}
