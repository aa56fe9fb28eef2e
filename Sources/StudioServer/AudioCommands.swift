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
                name: input.name, source: input.source, node: capture?.node, identity: input.identity,
                displayName: input.displayName, state: input.present ? (capture?.streamState ?? "playing") : "lost", camera: camera,
                gainDB: setting.gainDB == -.infinity ? nil : setting.gainDB, muted: setting.muted, pan: AudioReply.PanView(setting.pan),
                delayMS: setting.delayMS, follow: setting.follow, fadeMS: setting.fadeMS, levels: LevelsReply(levels),
                latencyMS: audio.latency(of: capture).map { ($0 * 10_000).rounded() / 10 },
                compensationMS: (audio.compensation(of: input.name) * 10_000).rounded() / 10,
                clockPPM: capture.flatMap { $0.node == nil ? nil : ($0.estimatedPPM * 10).rounded() / 10 })
        }
        let master = audio.master
        let loudness = meters.loudness
        func tenths(_ value: Double?) -> Double? { value.map { ($0 * 10).rounded() / 10 } }
        return AudioReply(
            source: audio.source.description, silenceReason: audio.silenceReason, inputs: inputs,
            master: AudioReply.MasterView(gainDB: master.gainDB == -.infinity ? nil : master.gainDB, ceilingDBFS: master.ceilingDBFS),
            program: AudioReply.ProgramView(
                levels: LevelsReply(meters.program), momentaryLUFS: tenths(loudness.momentaryLUFS), shortTermLUFS: tenths(loudness.shortTermLUFS),
                integratedLUFS: tenths(loudness.integratedLUFS), rangeLU: tenths(loudness.rangeLU),
                samplePeakDBFS: tenths(loudness.samplePeakDBFS), truePeakDBTP: tenths(loudness.truePeakDBTP)),
            lateChanges: audio.lateChanges)
    }
}

