import StudioCLI

/// `studio --help` (the overview, its command list from the commands' declarations), `studio help
/// [COMMAND]` and `studio version`.
enum Help {
    /// Every command, in the order of the overview: `studio NAME` runs the one whose spec has that name.
    static var commands: [any Command.Type] {
        [ServeCommand.self, CamerasCommand.self, SwitchCommand.self, PreviewCommand.self, CutCommand.self, AutoCommand.self,
         TransitionCommand.self, SceneCommand.self, ScenesCommand.self, OverlayCommand.self, CameraCommand.self, ControlsCommand.self,
         SetControlCommand.self, FocusCommand.self, PictureCommand.self,
         PlayCommand.self, PauseCommand.self, StopCommand.self, CueCommand.self, SeekCommand.self, NextCommand.self, AudioCommand.self, StatusCommand.self, OutputsCommand.self, OutputCommand.self, MetricsCommand.self, ReloadCommand.self, SessionsCommand.self, LogCommand.self,
         OnAirCommand.self, ReportCommand.self, ExportCommand.self, RecordingsCommand.self, PruneCommand.self, WatchCommand.self,
         DoctorCommand.self,
         TranscodeCommand.self, CollectCommand.self,
         HelpCommand.self, VersionCommand.self]
    }

    static let header = "studio — a live production and ingest server for a studio PC with several cameras."

    static let footer = """
    Client commands find the server through --socket, then $STUDIO_SOCKET, then
    $XDG_RUNTIME_DIR/studio/studio.sock (/run/studio/studio.sock as root,
    /tmp/studio-UID/studio.sock without XDG_RUNTIME_DIR), then /run/studio/studio.sock
    if that exists (the systemd service's socket).
    `sessions`, `log`, `onair`, `report`, `recordings` and `prune` use the database directly when no server runs
    (--db, then $STUDIO_DB, then the default path); `export` always reads it (a running server's).

    Run `studio COMMAND --help` for a command's options.
    """

    static var overview: String { CommandSpec.overview(commands.map { $0.spec }, header: header, footer: footer) }

    /// Other spellings: `studio --help`, `studio -h`, `studio --version`.
    static var aliases: [String: any Command.Type] { ["--help": HelpCommand.self, "-h": HelpCommand.self, "--version": VersionCommand.self] }

    static let version = "studio 0.1.0"
}

/// `studio help [COMMAND]`.
enum HelpCommand: Command {
    static let spec = CommandSpec("help", abstract: "the overview, or a command's options.", summary: "this overview, or a command's help",
                                  positionals: [PositionalSpec("COMMAND", optional: true)], listed: false)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let topic = arguments.positionals.first.flatMap { name in Help.commands.first { $0.spec.name == name } }
        print(topic?.spec.helpText ?? Help.overview)
        return 0
    }
}

/// `studio version` (also `studio --version`).
enum VersionCommand: Command {
    static let spec = CommandSpec("version", abstract: "print the version.", summary: "the version", listed: false)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        print(Help.version)
        return 0
    }
}
