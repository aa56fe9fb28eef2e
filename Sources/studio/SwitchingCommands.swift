import Foundation
import StudioCore
import StudioViews
import StudioConfig
import Control
import StudioCLI

/// The vision mixer from the command line: each sends one request and prints what went on air, once
/// it has (or the reason it could not).

/// `--frames N` / `--ms N`: a transition's length, as `auto` and `transition` take it.
private let lengthOptions = [OptionSpec("frames", "N", help: "length in program frames"),
                             OptionSpec("ms", "N", help: "length in milliseconds (rounded to whole frames)")]

/// The request's `kind`, `frames` and `ms` from the command line (each only when given).
private func transitionArguments(_ arguments: ParsedArguments) throws -> TransitionArguments {
    TransitionArguments(kind: try arguments.parse(positional: 0, "TRANSITION", .transitionKind)?.rawValue,
                        frames: try arguments.parse("frames", .positive("a number of frames")),
                        ms: try arguments.parse("ms", .positive("a number of milliseconds")))
}

/// "program: pip at program time 00:01:02.300" and, for a transition, its kind and length; `--json`:
/// the server's own JSON.
private func describe(_ reply: TypedReply<SwitchReply>, _ bus: String, json: Bool) -> String {
    guard !json else { return reply.json.jsonText }
    let result = reply.value
    let at = " at program time \(Format.programTime(result.programMilliseconds))"
    if let transition = result.transition {
        return "\(bus): \(transition.kind) to \(result.source) over \(transition.frames) frames, starting\(at)"
    }
    return "\(bus): \(result.source)\(at)"
}

enum SwitchCommand: ClientCommand {
    static let spec = CommandSpec(
        "switch", abstract: "cut the program to a camera or a scene.", summary: "cut the program to camera or scene NAME (e.g. cam2)",
        positionals: [PositionalSpec("NAME")], options: [.json, .socket],
        positionalsError: "expected one camera or scene name, e.g. `studio switch cam2`",
        discussion: """
        Exits 0 once the server has put NAME on program, and prints the program time of the cut.
        A cut during a transition completes the transition first. An unknown NAME exits 1 and
        lists the cameras and scenes that exist.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        print(describe(try call(socket, SwitcherSignatures.Switch.self, SourceArguments(source: arguments.positionals[0])), "program", json: json))
        return 0
    }
}

enum SceneCommand: ClientCommand {
    static let spec = CommandSpec(
        "scene", abstract: "cut the program to a scene.", summary: "cut the program to scene NAME (switch, for scenes)",
        positionals: [PositionalSpec("NAME")], options: [.json, .socket],
        positionalsError: "expected one scene name, e.g. `studio scene pip`",
        discussion: "Like `studio switch`, but NAME must be a scene (see `studio scenes`).")

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        print(describe(try call(socket, SwitcherSignatures.Scene.self, SceneArguments(scene: arguments.positionals[0])), "program", json: json))
        return 0
    }
}

enum PreviewCommand: ClientCommand {
    static let spec = CommandSpec(
        "preview", abstract: "put a camera or a scene on preview.", summary: "put camera or scene NAME on preview",
        positionals: [PositionalSpec("NAME")], options: [.json, .socket],
        positionalsError: "expected one camera or scene name, e.g. `studio preview interview`",
        discussion: "`studio cut` or `studio auto` then takes it to program.")

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        print(describe(try call(socket, SwitcherSignatures.Preview.self, SourceArguments(source: arguments.positionals[0])), "preview", json: json))
        return 0
    }
}

enum CutCommand: ClientCommand {
    static let spec = CommandSpec(
        "cut", abstract: "swap preview and program on the next frame.", summary: "swap preview and program (a hard cut)",
        options: [.json, .socket],
        discussion: """
        What was on program goes to preview. During a transition, completes it at once.
        With nothing on preview, exits 1 and says so.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        print(describe(try call(socket, SwitcherSignatures.Cut.self, NoArguments()), "program", json: json))
        return 0
    }
}

enum AutoCommand: ClientCommand {
    static let spec = CommandSpec(
        "auto", abstract: "run a transition from program to preview.",
        summary: "transition from program to preview (default: the\nconfigured transition)",
        positionals: [PositionalSpec("TRANSITION", optional: true)], options: lengthOptions + [.json, .socket],
        positionalsError: "expected at most one transition, e.g. `studio auto mix --frames 15`",
        discussion: """
        TRANSITION is one of \(TransitionKind.names).
        The transition starts on the next frame and lasts exactly the frames given; at its
        end program and preview swap. Exits once its first frame is on air.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        print(describe(try call(socket, SwitcherSignatures.Auto.self, try transitionArguments(arguments)), "program", json: json))
        return 0
    }
}

enum TransitionCommand: ClientCommand {
    static let spec = CommandSpec(
        "transition", abstract: "set or show the transition `studio auto` runs.",
        summary: "set (or show) auto's transition: KIND [--frames N | --ms N]",
        positionals: [PositionalSpec("KIND", optional: true)], options: lengthOptions + [.json, .socket],
        positionalsError: "expected at most one transition, e.g. `studio transition wipe-right --ms 500`",
        discussion: "KIND is one of \(TransitionKind.names). Without arguments, prints the current one.")

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let reply = try call(socket, SwitcherSignatures.Transition.self, try transitionArguments(arguments))
        let transition = reply.value
        print(json ? reply.json.jsonText : "transition: \(transition.kind) \(transition.frames) frames (\(transition.ms) ms)")
        return 0
    }
}

enum OverlayCommand: ClientCommand {
    static let spec = CommandSpec(
        "overlay", abstract: "switch an overlay (a logo, a lower third) on or off.",
        summary: "switch overlay NAME on or off (toggle without on|off)",
        positionals: [PositionalSpec("NAME"), PositionalSpec("on|off", optional: true)], options: [.json, .socket],
        positionalsError: "expected an overlay name and optionally on or off, e.g. `studio overlay logo on`",
        discussion: """
        Overlays are declared under overlays: in the config file and drawn over every scene and
        transition. The change takes effect on the next program frame; exits 0 once it is on air
        and prints its program time. `studio scenes` lists the overlays and their state.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let overlay = OverlayArguments(name: arguments.positionals[0], on: try arguments.parse(positional: 1, "on|off", .boolean))
        let reply = try call(socket, SwitcherSignatures.Overlay.self, overlay)
        let result = reply.value
        let already = result.changed ? "" : " (it already was)"
        print(json ? reply.json.jsonText
              : "overlay \(result.overlay): \(result.on ? "on" : "off") at program time \(Format.programTime(result.programMilliseconds))\(already)")
        return 0
    }
}

enum ScenesCommand: ClientCommand {
    static let spec = CommandSpec("scenes", abstract: "list the scenes with their layers and tally.",
                                  summary: "list scenes: layout, sources, tally", options: [.json, .socket])

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let (socket, json) = common(arguments, environment)
        let reply = try call(socket, SwitcherSignatures.Scenes.self, NoArguments())
        print(json ? reply.json.jsonText : Format.scenes(reply.json))
        return 0
    }
}
