import Foundation
import StudioCore
import StudioViews
import Control
import StudioCLI

/// `studio outputs`: where the program goes; `studio output add|stop|start|remove NAME` changes that
/// mid-show (the server's `outputs` and `output` commands; nothing is written to the config file).
enum OutputsCommand: ClientCommand {
    static let spec = CommandSpec(
        "outputs", abstract: "list where the program goes.", summary: "the program's outputs: kind, origin, state, counters",
        options: [.json, .socket],
        discussion: """
        One line per output: its name, URL (stream keys, SRT stream ids and passphrases
        masked) or file, kind (rtmp, rtmps, srt, file), where it came from (config, record,
        or added mid-show, and by whom), state and counters.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let client = try connect(socket)
        let reply: TypedReply<OutputsReply>
        do { reply = try client.call(OutputSignatures.List.self, NoArguments()) } catch { throw ClientFailure(error.message) }
        let outputs = reply.value.outputs
        let lines = (outputs.isEmpty ? ["no outputs"] : outputs.map(Format.output))
            + ["\(outputs.filter { $0.origin != "record" }.count) of at most \(reply.value.limit)"]
        print(json ? reply.json.jsonText : lines.joined(separator: "\n"))
        return 0
    }
}

enum OutputCommand: ClientCommand {
    static let record = OptionSpec("record", help: "add: record the program into the server's recording directory\n(session-ID-output-NAME.mkv) instead of sending it")
    static let usage = "expected \(OutputChange.Action.names) and an output name, e.g. `studio output add backup rtmp://host/live/KEY`"
    static let spec = CommandSpec(
        "output", abstract: "add, stop, start or remove an output while on air.",
        summary: "add an output mid-show (URL or --record), or stop,\nstart or remove one",
        positionals: [PositionalSpec("ACTION"), PositionalSpec("NAME"), PositionalSpec("URL", optional: true)],
        options: [record, .json, .socket], positionalsError: usage,
        discussion: """
        add NAME URL sends the program to URL as well (rtmp://, rtmps://, or srt://HOST:PORT
        with streamid= and passphrase= as the listener wants them: MPEG-TS over SRT); add NAME
        --record records it into the server's recording directory. A new output starts on the
        encoder's next keyframe, asked for at once; the others go on untouched. stop ends
        one (drained, file closed) and keeps it listed; start starts it again (a new
        connection or file); remove stops and forgets it. Each is an event in the history
        (output_added, output_stopped, output_started, output_removed) saying who asked.
        Nothing is written to the config file: outputs added here are gone after a restart.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let change = OutputChange(output: arguments.positionals[1], action: arguments.positionals[0],
                                  url: arguments.positionals.count > 2 ? arguments.positionals[2] : nil,
                                  record: arguments.flag(record.name) ? true : nil)
        let client = try connect(socket)
        let reply: TypedReply<OutputReply>
        do { reply = try client.call(OutputSignatures.Change.self, change) } catch { throw refusal(error, "output") }
        let done = OutputChange.Action(rawValue: reply.value.action)?.done ?? reply.value.action
        print(json ? reply.json.jsonText : "\(done) " + Format.output(reply.value.output))
        return 0
    }
}

extension Format {
    /// One output on one line: name, URL or file, kind and origin, state and counters.
    static func output(_ output: OutputView) -> String {
        var origin = output.origin
        if let by = output.addedBy { origin += " by \(by)" }
        var line = "\(output.name) \(output.url) (\(output.kind), \(origin)): \(output.state) · \(output.bytesSent) bytes · dropped \(output.droppedVideo) video / \(output.droppedAudio) audio · \(output.reconnects) reconnects (\(output.reconnectAttempts) attempts)"
        if output.bitsPerSecond > 0 { line += String(format: " · %.0f kbit/s", Double(output.bitsPerSecond) / 1000) }
        if let next = output.nextAttemptInSeconds { line += String(format: " · next attempt in %.1f s", next) }
        if let error = output.lastError { line += " · last error: \(error)" }
        return line
    }
}
