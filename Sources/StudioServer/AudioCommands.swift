import Foundation
import StudioCore
import Capture
import Control

/// `audio`: the program audio's inputs and master, with their meters; with an input (or `master`) and
/// settings, changes them from the program's audio now on, each change an `audio_changed` event at
/// the program time of its first sample.
enum AudioCommands {
    enum Audio: ControlCommand {
        static let name = "audio"
        static let httpRoute: ControlHTTPRoute? = .get("/api/v1/audio")
        static let otherHTTPRoutes: [ControlHTTPRoute] = [.post("/api/v1/audio/{input}")]
        static let summary = "the program audio's inputs (gain, mute, pan, delay, follow, levels) and master (gain, ceiling, loudness); with an input, sets it"

        struct Arguments: Decodable, Sendable {
            /// An input's name, or `master`; nil: list.
            var input: String?
            var gain: Level?
            var mute: Bool?
            var pan: Pan?
            var delay: Double?
            var fade: Double?
            /// A camera or scene name, or `none`.
            var follow: String?
            var ceiling: Double?

            /// Settings only an input has (the master takes gain and ceiling).
            var setsInputOnly: Bool { mute != nil || pan != nil || delay != nil || fade != nil || follow != nil }
        }

        /// A gain: a number of dB, or `-inf` / `off` (a fader all the way down).
        struct Level: Decodable, Sendable {
            var decibels: Double
            init(from decoder: any Decoder) throws {
                let value = try decoder.singleValueContainer()
                if let number = try? value.decode(Double.self) { decibels = number; return }
                let text = try value.decode(String.self).lowercased()
                if text == "-inf" || text == "off" { decibels = -.infinity; return }
                guard let number = Double(text) else {
                    throw DecodingError.dataCorruptedError(in: value, debugDescription: "must be a number of dB or -inf, got \"\(text)\"")
                }
                decibels = number
            }
        }

        /// A pan: -1..+1, or `mono` (both channels summed to the middle).
        struct Pan: Decodable, Sendable {
            var value: AudioPanChoice
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Double.self) { value = .position(number); return }
                let text = try container.decode(String.self).lowercased()
                if text == "mono" { value = .mono; return }
                guard let number = Double(text) else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be -1..+1 or mono, got \"\(text)\"")
                }
                value = .position(number)
            }
        }

        static func run(_ arguments: Arguments, in server: StudioServer) throws -> AudioReply {
            let audio = server.audio
            guard let input = arguments.input else { return server.audioView() }
            do {
                if input == "master" {
                    if arguments.setsInputOnly {
                        throw ControlError(.invalidArgument, "audio: master takes gain and ceiling only (mute, pan, delay, fade and follow are an input's)")
                    }
                    let old = audio.master
                    let new = try MixerMasterSettings(gainDB: arguments.gain?.decibels ?? old.gainDB,
                                                      ceilingDBFS: arguments.ceiling ?? old.ceilingDBFS)
                    guard new != old else { return server.audioView() }
                    let sample = audio.setMaster(new)
                    return server.announce(input: "master", changes: AudioChanges.master(old, new), sample: sample)
                }
                guard let old = audio.settings[input] ?? (audio.inputs.contains { $0.name == input } ? MixerInputSettings.unity : nil) else {
                    let names = audio.inputs.map(\.name)
                    throw ControlError(.notFound, "audio: no input \"\(input)\"; the inputs are "
                        + (names.isEmpty ? "none" : names.joined(separator: ", ")) + " (and master)")
                }
                if arguments.ceiling != nil { throw ControlError(.invalidArgument, "audio: --ceiling is the master's (studio audio master --ceiling -1)") }
                let follow = arguments.follow.map { $0 == "none" ? nil : $0 } ?? old.follow
                if let name = arguments.follow, name != "none" {
                    // A camera of the session (lost ones too) or a scene; a typo would keep the input down for good.
                    let known = Set(server.cameras.all.map(\.id.name)).union(server.switcher.status.scenes)
                    guard known.contains(name) else {
                        throw ControlError(.invalidArgument, "audio: \(input): no camera or scene \"\(name)\" to follow; they are "
                            + known.sorted().joined(separator: ", ") + " (or none)")
                    }
                }
                let pan: AudioPan = switch arguments.pan?.value {
                case nil: old.pan
                case .mono: .monoToBoth
                case .position(let position): try AudioPan.checked(position)
                }
                let new = try MixerInputSettings(gainDB: arguments.gain?.decibels ?? old.gainDB, muted: arguments.mute ?? old.muted, pan: pan,
                                                 delayMS: arguments.delay ?? old.delayMS, follow: follow, fadeMS: arguments.fade ?? old.fadeMS)
                guard new != old, let sample = audio.set(input, to: new) else { return server.audioView() }
                return server.announce(input: input, changes: AudioChanges.input(old, new), sample: sample)
            } catch let error as MixerSettingError {
                throw ControlError(.invalidArgument, "audio: \(input): \(error)")
            }
        }
    }

    enum AudioPanChoice: Sendable {
        case position(Double)
        case mono
    }
}

/// What a mixer change changed, `old -> new` per setting, as `audio_changed` and the reply say it.
enum AudioChanges {
    static func input(_ old: MixerInputSettings, _ new: MixerInputSettings) -> [String: String] {
        var changes: [String: String] = [:]
        func note(_ key: String, _ a: String, _ b: String) { if a != b { changes[key] = "\(a) -> \(b)" } }
        note("gain", decibels(old.gainDB), decibels(new.gainDB))
        note("mute", old.muted ? "on" : "off", new.muted ? "on" : "off")
        note("pan", old.pan.description, new.pan.description)
        note("delay", number(old.delayMS), number(new.delayMS))
        note("follow", old.follow ?? "none", new.follow ?? "none")
        note("fade", number(old.fadeMS), number(new.fadeMS))
        return changes
    }

    static func master(_ old: MixerMasterSettings, _ new: MixerMasterSettings) -> [String: String] {
        var changes: [String: String] = [:]
        if old.gainDB != new.gainDB { changes["gain"] = "\(decibels(old.gainDB)) -> \(decibels(new.gainDB))" }
        if old.ceilingDBFS != new.ceilingDBFS { changes["ceiling"] = "\(number(old.ceilingDBFS)) -> \(number(new.ceilingDBFS))" }
        return changes
    }

    static func decibels(_ value: Double) -> String { value == -.infinity ? "-inf" : number(value) }
    static func number(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value) }
}

extension StudioServer {
    /// The `audio_changed` event for a change that applies at `sample`, and the reply saying it.
    func announce(input: String, changes: [String: String], sample: Int64, by trigger: String = "audio") -> AudioReply {
        let time = audio.programTime(ofSample: sample)
        events.emit(StudioEvent(kind: .audioChanged, programTime: time, details: changes.merging(["input": input, "by": trigger]) { a, _ in a }))
        log.info("audio \(input): " + changes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        var reply = audioView()
        reply.changed = AudioReply.ChangeView(input: input, changed: changes, programMilliseconds: time.milliseconds, sample: sample)
        return reply
    }

    func audioView() -> AudioReply {
        let audio = self.audio, meters = audio.meters, settings = audio.settings, status = audio.status
        let cameras = self.cameras.all
        let inputs = audio.inputs.map { input -> AudioReply.InputView in
            let setting = settings[input.name] ?? .unity
            let levels = meters.inputs[input.name] ?? .silent(channels: audio.format.channels)
            let capture = status[input.name]
            let camera = ProgramAudio.camera(of: input, among: cameras.map { ($0.id.name, $0.identity) })
            return AudioReply.InputView(
                name: input.name, source: input.source.description, node: capture?.node, identity: input.identity,
                displayName: input.displayName, state: input.present ? (capture?.streamState ?? "playing") : "lost", camera: camera,
                gainDB: setting.gainDB == -.infinity ? nil : setting.gainDB, muted: setting.muted, pan: AudioReply.PanView(setting.pan),
                delayMS: setting.delayMS, follow: setting.follow, fadeMS: setting.fadeMS, levels: LevelsReply(levels),
                latencyMS: audio.latency(of: capture).map { ($0 * 10_000).rounded() / 10 },
                clockPPM: capture.flatMap { $0.node == nil ? nil : ($0.estimatedPPM * 10).rounded() / 10 })
        }
        let master = audio.master
        let loudness = meters.loudness
        func tenths(_ value: Double?) -> Double? { value.map { ($0 * 10).rounded() / 10 } }
        return AudioReply(
            source: audio.source.description, inputs: inputs,
            master: AudioReply.MasterView(gainDB: master.gainDB == -.infinity ? nil : master.gainDB, ceilingDBFS: master.ceilingDBFS),
            program: AudioReply.ProgramView(
                levels: LevelsReply(meters.program), momentaryLUFS: tenths(loudness.momentaryLUFS), shortTermLUFS: tenths(loudness.shortTermLUFS),
                integratedLUFS: tenths(loudness.integratedLUFS), rangeLU: tenths(loudness.rangeLU),
                samplePeakDBFS: tenths(loudness.samplePeakDBFS), truePeakDBTP: tenths(loudness.truePeakDBTP)),
            lateChanges: audio.lateChanges)
    }
}

/// `audio`'s reply (and `status`'s `audio.mixer`).
public struct AudioReply: Codable, Sendable {
    /// `audio.source` as configured (`pipewire:all`, `tone`...).
    public var source: String
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
        /// The input's clock against the program's, as the resampling follows it (ppm; null for a tone).
        @Nullable public var clockPPM: Double?

        enum CodingKeys: String, CodingKey {
            case name, source, node, identity, state, camera, muted, pan, follow, levels
            case latencyMS = "latency_ms"
            case clockPPM = "clock_ppm"
            case displayName = "display_name"
            case gainDB = "gain_db"
            case delayMS = "delay_ms"
            case fadeMS = "fade_ms"
        }
    }

    /// A number (-1 left .. +1 right) or `"mono"`.
    public enum PanView: Codable, Sendable {
        case position(Double)
        case mono

        init(_ pan: AudioPan) {
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
    }

    enum CodingKeys: String, CodingKey {
        case source, inputs, master, program, changed
        case lateChanges = "late_changes"
    }
}
