import StudioCLI
import StudioCore
import StudioViews
import Control

// `studio play NAME [ITEM]`, `pause NAME`, `stop NAME`, `cue NAME ITEM [--at TIME]`, `seek NAME TIME`,
// `next NAME`: a player's transport, each printing where the player is after it.

/// What the transport commands share: the call, and the line it prints.
protocol PlayerTransportCommand: ClientCommand {
    associatedtype Signature: CommandSignature where Signature.Arguments == PlayerArguments, Signature.Reply == PlayerReply
    /// Whether the positional after NAME is a time (`seek`), not an item.
    static var takesTime: Bool { get }
}

extension PlayerTransportCommand {
    static var takesTime: Bool { false }

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let second = arguments.positionals.count > 1 ? arguments.positionals[1] : nil
        let player = PlayerArguments(player: arguments.positionals[0], item: takesTime ? nil : second,
                                     at: takesTime ? second : arguments.value(OptionSpec.playerTime.name))
        let reply = try call(socket, Signature.self, player)
        print(json ? reply.json.jsonText : Self.line(reply.value))
        return 0
    }

    /// `intro: playing intro.mov (1/2) at 1.200 s, 8.800 s left`.
    static func line(_ reply: PlayerReply) -> String { "\(reply.player): \(reply.status.summary)" }
}

enum PlayCommand: PlayerTransportCommand {
    typealias Signature = PlayerSignatures.Play
    static let spec = CommandSpec(
        "play", abstract: "play a player, or an item of it from its start.", summary: "play player NAME (from ITEM)",
        positionals: [PositionalSpec("NAME"), PositionalSpec("ITEM", optional: true)], options: [.json, .socket],
        positionalsError: "expected a player's name and maybe an item, e.g. `studio play intro` or `studio play breaks brb.mp4`",
        discussion: """
        Plays from where the player is (its cued first frame, or where it was paused); an
        ended player plays its item again. ITEM (a file name of its items, or its number from
        1) plays that item from its start. The picture goes by the program clock; the item's
        end does what the player's `end:` says (hold, black, loop, next).
        """)
}

enum PauseCommand: PlayerTransportCommand {
    typealias Signature = PlayerSignatures.Pause
    static let spec = CommandSpec(
        "pause", abstract: "pause a player on the frame it shows.", summary: "pause player NAME",
        positionals: [PositionalSpec("NAME")], options: [.json, .socket], positionalsError: "expected a player's name, e.g. `studio pause intro`")
}

enum StopCommand: PlayerTransportCommand {
    typealias Signature = PlayerSignatures.Stop
    static let spec = CommandSpec(
        "stop", abstract: "stop a player, back on its first item's first frame.", summary: "stop player NAME (cue its first item)",
        positionals: [PositionalSpec("NAME")], options: [.json, .socket], positionalsError: "expected a player's name, e.g. `studio stop intro`")
}

enum CueCommand: PlayerTransportCommand {
    typealias Signature = PlayerSignatures.Cue
    static let spec = CommandSpec(
        "cue", abstract: "cue an item of a player: its first frame shown, stopped.", summary: "cue ITEM on player NAME",
        positionals: [PositionalSpec("NAME"), PositionalSpec("ITEM")], options: [.playerTime, .json, .socket],
        positionalsError: "expected a player's name and an item, e.g. `studio cue breaks countdown.png` or `studio cue breaks 2`")
}

enum SeekCommand: PlayerTransportCommand {
    typealias Signature = PlayerSignatures.Seek
    static let takesTime = true
    static let spec = CommandSpec(
        "seek", abstract: "take a player to a time into its item.", summary: "seek player NAME to TIME",
        positionals: [PositionalSpec("NAME"), PositionalSpec("TIME")], options: [.json, .socket],
        positionalsError: "expected a player's name and a time, e.g. `studio seek intro 12.5` or `studio seek intro 1:30`",
        discussion: """
        TIME is \(PlayerSpec.timeForms), into the item on screen. A playing player plays on
        from there; otherwise it is cued there (that picture shown). The pictures before it
        are read and dropped from the item's start.
        """)
}

extension OptionSpec {
    /// `studio cue NAME ITEM --at TIME`.
    static let playerTime = OptionSpec("at", "TIME", help: "cue the item's picture at TIME into it: \(PlayerSpec.timeForms)")
}

enum NextCommand: PlayerTransportCommand {
    typealias Signature = PlayerSignatures.Next
    static let spec = CommandSpec(
        "next", abstract: "take a player on to its next item.", summary: "next item on player NAME",
        positionals: [PositionalSpec("NAME")], options: [.json, .socket], positionalsError: "expected a player's name, e.g. `studio next breaks`")
}
