/// One option of a command, declared once: the parser, `studio COMMAND --help` and the synopsis
/// come from it.
public struct OptionSpec: Sendable {
    /// Without the dashes: `bitrate` for `--bitrate`.
    public var name: String
    /// What the value is called in help (`RATE`); nil for a switch that takes no value.
    public var valueName: String?
    /// Whether it may be given more than once (`--rtmp URL...`); otherwise the last one counts.
    public var repeatable: Bool
    /// What it does, one or more lines.
    public var help: String

    public init(_ name: String, _ valueName: String? = nil, repeatable: Bool = false, help: String) {
        self.name = name
        self.valueName = valueName
        self.repeatable = repeatable
        self.help = help
    }

    public var takesValue: Bool { valueName != nil }

    /// `[--rtmp URL]...`
    public var synopsis: String {
        "[--\(name)\(valueName.map { " " + $0 } ?? "")]" + (repeatable ? "..." : "")
    }

    // Options that several commands share.

    public static let json = OptionSpec("json", help: "print JSON for scripts instead of a table")
    public static let socket = OptionSpec("socket", "PATH", help: "control socket of the server (default: see `studio --help`)")
    public static let database = OptionSpec("db", "FILE", help: "read this database when no server answers (default: $STUDIO_DB, or the default path)")
}

/// A positional argument (`NAME`, `[SESSION]`).
public struct PositionalSpec: Sendable {
    public var name: String
    public var optional: Bool
    /// Takes any number of words (`FILE...`); only the last positional may.
    public var repeating: Bool
    public init(_ name: String, optional: Bool = false, repeating: Bool = false) {
        self.name = name
        self.optional = optional
        self.repeating = repeating
    }
    public var synopsis: String { (optional ? "[\(name)]" : name) + (repeating ? "..." : "") }
}

/// One `studio` command, declared once: its name, what it does, its positionals and options. The
/// parser (`ParsedArguments`), `studio COMMAND --help` (`helpText`) and the overview's command
/// list (`CommandSpec.overview`) all come from it.
public struct CommandSpec: Sendable {
    public var name: String
    /// After the name in `studio NAME — ...` at the top of its help.
    public var abstract: String
    /// Its line in the overview.
    public var summary: String
    public var positionals: [PositionalSpec]
    public var options: [OptionSpec]
    /// Said when the positionals do not fit (`expected one camera name, e.g. ...`); nil: the usual
    /// "unexpected argument".
    public var positionalsError: String?
    /// The paragraphs after the options in its help.
    public var discussion: String
    /// Left out of the overview's list (`help`, `version`).
    public var listed: Bool
    /// Runs in the engine library (`EngineLibrary`): it needs the media stack (FFmpeg, PipeWire, VAAPI...),
    /// which `studio` itself does not load. Every other command runs in `studio` and starts fast.
    public var engine: Bool

    public init(_ name: String, abstract: String, summary: String, positionals: [PositionalSpec] = [], options: [OptionSpec] = [],
                positionalsError: String? = nil, discussion: String = "", listed: Bool = true, engine: Bool = false) {
        self.name = name
        self.abstract = abstract
        self.summary = summary
        self.positionals = positionals
        self.options = options
        self.positionalsError = positionalsError
        self.discussion = discussion
        self.listed = listed
        self.engine = engine
    }

    public func option(_ name: String) -> OptionSpec? { options.first { $0.name == name } }

    /// `studio serve [--config FILE] [--demo] ...`, wrapped under its first line.
    public var synopsis: String {
        let head = (["studio", name] + positionals.map(\.synopsis)).joined(separator: " ")
        return wrap(head, options.map(\.synopsis), width: 96)
    }

    /// `studio COMMAND --help`.
    public var helpText: String {
        var text = "studio \(name) — \(abstract)\n\nUSAGE\n" + synopsis.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "  " + $0 }.joined(separator: "\n")
        if !options.isEmpty {
            text += "\n\nOPTIONS\n" + options.map(Self.helpLines).joined(separator: "\n")
        }
        if !discussion.isEmpty { text += "\n\n" + discussion }
        if engine {
            text += "\n\nRuns in the engine library \(EngineLibrary.fileName) (with FFmpeg, PipeWire, VAAPI), which studio\n"
                + "loads from beside its binary or from ../lib/studio/: install it with studio (docs/install.md)."
        }
        return text
    }

    /// `  --config FILE       YAML config ...`, the help in a column; a long name puts it on the next line.
    static func helpLines(_ option: OptionSpec) -> String {
        let column = 22
        let label = "  --" + option.name + (option.valueName.map { " " + $0 } ?? "")
        let help = option.help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let indent = String(repeating: " ", count: column)
        var lines: [String]
        if label.count + 2 <= column {
            lines = [label.padding(toLength: column, withPad: " ", startingAt: 0) + help[0]]
        } else {
            lines = [label, indent + help[0]]
        }
        lines += help.dropFirst().map { indent + $0 }
        return lines.joined(separator: "\n")
    }

    /// The overview's line: `studio cameras [--json]`, the options that are not shared by every
    /// client (`--socket`, `--db`), or `[options]` when there are many.
    var overviewUsage: String {
        let own = options.filter { $0.name != "socket" && $0.name != "db" }
        let flags = own.count > 3 ? ["[options]"] : own.map(\.synopsis)
        return (["studio", name] + positionals.map(\.synopsis) + flags).joined(separator: " ")
    }

    /// `studio --help`: the listed commands, each with its usage and summary, between `header` and `footer`.
    public static func overview(_ commands: [CommandSpec], header: String, footer: String) -> String {
        let column = 32
        var lines: [String] = []
        for command in commands where command.listed {
            let usage = "  " + command.overviewUsage
            let summary = command.summary.split(separator: "\n").map(String.init)
            let indent = String(repeating: " ", count: column + 2)
            if usage.count + 2 <= column + 2 {
                lines.append(usage.padding(toLength: column + 2, withPad: " ", startingAt: 0) + summary[0])
            } else {
                lines.append(usage)
                lines.append(indent + summary[0])
            }
            lines += summary.dropFirst().map { indent + $0 }
        }
        return header + "\n\nUSAGE\n" + lines.joined(separator: "\n") + "\n\n" + footer
    }
}

/// Words after `head`, wrapped at `width` with continuation lines under the first word after `head`.
func wrap(_ head: String, _ words: [String], width: Int) -> String {
    let indent = String(repeating: " ", count: head.count + 1)
    var lines: [String] = []
    var line = head
    for word in words {
        if line.count + 1 + word.count > width, line != head, line != indent {
            lines.append(line)
            line = indent + word
        } else {
            line += (line == indent ? "" : " ") + word
        }
    }
    lines.append(line)
    return lines.joined(separator: "\n")
}
