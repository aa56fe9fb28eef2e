import Foundation
import StudioCore
import StudioViews
import Control
import StudioCLI

/// `studio audio`: the program audio's inputs and master with their levels; `studio audio mic2 --gain -6
/// --mute on`, `studio audio mic1 --follow cam1`, `studio audio master --gain -3` change them live.
enum AudioCommand: ClientCommand {
    static let gain = OptionSpec("gain", "DB", help: "fader in dB: \(MixerLimit.gain.rangeText) (-inf: off)")
    static let mute = OptionSpec("mute", "on|off", help: "mute or unmute the input (with its fade)")
    static let pan = OptionSpec("pan", "P", help: "\(MixerLimit.pan.rangeText) (left .. right), or mono (both channels to the middle)")
    static let delay = OptionSpec("delay", "MS", help: "delay in ms, \(MixerLimit.delay.rangeText) (line a microphone up with a camera)")
    static let follow = OptionSpec("follow", "NAME", help: "audio-follow-video: up only while camera or scene NAME is on air\n(none: always up)")
    static let fade = OptionSpec("fade", "MS", help: "how long mute and follow fade, \(MixerLimit.fade.rangeText)")
    static let ceiling = OptionSpec("ceiling", "DBFS", help: "master only: the limiter's ceiling, \(MixerLimit.ceiling.rangeText)")

    static let spec = CommandSpec(
        "audio", abstract: "show or set the program audio's mixer.",
        summary: "the audio inputs and master with their levels and\nloudness; set an input's gain, mute, pan, delay, follow",
        positionals: [PositionalSpec("INPUT", optional: true)], options: [gain, mute, pan, delay, follow, fade, ceiling, .json, .socket],
        positionalsError: "expected one input name (or master), e.g. `studio audio mic2 --gain -6`",
        discussion: """
        Without INPUT, lists every input (name, source, state, the camera it belongs to,
        gain, mute, pan, delay, follow, peak and RMS) and the program (master gain, limiter
        ceiling, EBU R128 loudness: momentary, short-term, integrated; peak). With INPUT
        (or master) and options, changes them from the program's audio now on: each change
        is an event (audio_changed) with the program time of its first sample. Not written
        to the config file (audio: inputs: in the config gives the settings a show starts with).
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        var request = AudioArguments(input: arguments.positionals.first)
        if let text = arguments.value(gain.name) {
            request.gain = .init(decibels: text.lowercased() == "-inf" || text.lowercased() == "off" ? -.infinity : try number(text, gain))
        }
        if let text = arguments.value(mute.name) {
            switch text.lowercased() {
            case "on", "true", "yes": request.mute = true
            case "off", "false", "no": request.mute = false
            default: throw UsageError("studio audio: --mute takes on or off, got \"\(text)\"")
            }
        }
        if let text = arguments.value(pan.name) { request.pan = text.lowercased() == "mono" ? .mono : .position(try number(text, pan)) }
        if let text = arguments.value(delay.name) { request.delay = try number(text, delay) }
        if let text = arguments.value(fade.name) { request.fade = try number(text, fade) }
        if let text = arguments.value(ceiling.name) { request.ceiling = try number(text, ceiling) }
        if let text = arguments.value(follow.name) { request.follow = text }
        let reply = try call(socket, AudioSignatures.Audio.self, request)
        print(json ? reply.json.jsonText : Format.audio(reply.value))
        return 0
    }

    private static func number(_ text: String, _ option: OptionSpec) throws -> Double {
        guard let value = Double(text), value.isFinite else { throw UsageError("studio audio: --\(option.name) takes a number, got \"\(text)\"") }
        return value
    }
}

extension Format {
    /// One line per input, then the program; a change first says what changed and when.
    static func audio(_ reply: AudioReply) -> String {
        var lines: [String] = []
        if let change = reply.changed {
            let what = change.changed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append("\(change.input): \(what.isEmpty ? "nothing changed" : what) from program time \(programTime(change.programMilliseconds))")
        }
        func db(_ value: Double?) -> String { value.map { String(format: "%+.1f", $0) } ?? "-inf" }
        func level(_ levels: LevelsReply) -> String {
            "peak \(levels.peakDBFS.map { String(format: "%.1f", $0) }.joined(separator: "/")) RMS \(levels.rmsDBFS.map { String(format: "%.1f", $0) }.joined(separator: "/"))"
        }
        if reply.inputs.isEmpty { lines.append("no inputs (source \(reply.source))") }
        if let reason = reply.silenceReason { lines.append("the program is silence: \(reason)") }
        for input in reply.inputs {
            var parts = ["\(input.name)", input.source, input.state]
            if let camera = input.camera { parts.append("camera \(camera)") }
            parts.append("gain \(db(input.gainDB)) dB")
            if input.muted { parts.append("MUTED") }
            switch input.pan {
            case .mono: parts.append("pan mono")
            case .position(let value) where value != 0: parts.append(String(format: "pan %+.2f", value))
            case .position: break
            }
            if input.delayMS > 0 { parts.append("delay \(AudioNumbers.text(input.delayMS)) ms") }
            if let follow = input.follow { parts.append("follows \(follow)") }
            parts.append(level(input.levels))
            lines.append(parts.joined(separator: "  "))
        }
        let program = reply.program
        func lufs(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "-" }
        lines.append("program  master \(db(reply.master.gainDB)) dB  ceiling \(AudioNumbers.text(reply.master.ceilingDBFS)) dBFS  \(level(program.levels))")
        lines.append("loudness  M \(lufs(program.momentaryLUFS))  S \(lufs(program.shortTermLUFS))  I \(lufs(program.integratedLUFS)) LUFS  peak \(lufs(program.samplePeakDBFS)) dBFS")
        return lines.joined(separator: "\n")
    }
}

private enum AudioNumbers {
    static func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
}
