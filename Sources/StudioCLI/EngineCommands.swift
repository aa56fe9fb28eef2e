// The commands that run in the engine library (`spec.engine`): declared here, so that `studio` has their
// help and options without loading the library; what they do is in StudioEngine (ServeCommand.swift,
// DoctorCommand.swift, TranscodeCommand.swift), each entered through its `@_cdecl` entry (`EngineLibrary.entryPoint(of:)`).
// A new engine command: its declaration here, its file in StudioEngine, one line in `studio`'s `Help.commands`.

import StudioCore

/// `studio serve`: the server in the foreground, until a stop signal.
public enum ServeCommand: Command {
    public static let spec = CommandSpec(
        "serve", abstract: "run the studio server in the foreground.",
        summary: "run the server in the foreground (Ctrl-C stops it cleanly)", options: ServeFlags.options,
        discussion: """
        If the hardware encoder fails mid-show, the program switches to x264 on the next frame (a new
        keyframe and sequence header; timestamps continue) and logs an encoder_fallback event.
        SIGINT or SIGTERM stop the server cleanly: outputs drained, recordings finalised, session
        closed; a second signal during shutdown exits at once. SIGHUP re-reads the --config file,
        like `studio reload` (scenes, transition and backups change live; see its help).
        """, engine: true)
}

/// `studio doctor`: checks the machine for the server that `studio serve` with the same options would run.
public enum DoctorCommand: Command {
    public static let spec = CommandSpec(
        "doctor", abstract: "what this machine offers a studio, and what is wrong.",
        summary: "check this machine: cameras, GPU, groups, encoders and their speed,\ndisk, database, RTMP destinations (takes the serve options)",
        options: [.json] + ServeFlags.options,
        discussion: """
        Takes the same options as `studio serve` and checks the setup that serve would run: each V4L2
        camera (card, identity, the mode it would capture for the program, access, and which program
        holds it when busy; metadata/output nodes counted as skipped), the PipeWire socket, GPU render nodes, video/render group membership,
        FFmpeg encoders (libx264, aac, h264_vaapi), how fast the program encoder (x264 with the program's
        preset and bit rate, or VAAPI) encodes the program format here (half a second on camera-like
        pictures; a warning below 1.25 times the program's rate), the database path, free disk for recordings, and a
        TCP connect to each RTMP destination, and each SRT destination's host resolved (SRT is UDP: only
        a handshake, a publish, would tell more) (stream keys masked). Each line is OK, WARNING or PROBLEM
        with what to do. Exits 1 when there is a problem.
        """, engine: true)
}

/// `studio transcode`: passthrough ISO files (MJPEG in Matroska) into H.264 MOV/MP4 for editors that
/// do not read them (`Transcoder`), after the show. Each file on the process's own `transcode` thread;
/// with `--session` the files come from the database (read only: a server running another show is not
/// disturbed).
public enum TranscodeCommand: Command {
    public static let output = OptionSpec("output", "DIR", help: "write the files into DIR (default: beside each input)")
    public static let codec = OptionSpec("codec", "CODEC", help: "what to encode to (default: h264):"
        + TranscodeCodec.allCases.map { "\n  \($0.rawValue): \($0.summary)" }.joined())
    public static let quality = OptionSpec("crf", "N", help: "x264 constant quality, 0-51, lower is better (default: \(TranscodeSettings.defaultQuality))")
    public static let container = OptionSpec("container", "FORMAT", help: "the file format: \(TranscodeContainer.names) (default: mov)")
    public static let preset = OptionSpec("preset", "NAME", help: "x264 preset: slower is smaller at the same quality (default: \(TranscodeSettings.defaultPreset))")
    public static let session = OptionSpec("session", "N", help: "every passthrough ISO of session N, from the database\n(H.264 ISOs are skipped: they need no transcode)")

    public static let spec = CommandSpec(
        "transcode", abstract: "passthrough ISO files (MJPEG in Matroska) into H.264 MOV or MP4 for editors.",
        summary: "passthrough (MJPEG) ISO files into H.264 .mov for editors\nthat do not read them (Premiere, Final Cut Pro)",
        positionals: [PositionalSpec("FILE", optional: true, repeating: true)],
        options: [output, codec, quality, preset, container, session, .socket, .database],
        discussion: """
        Each FILE (or, with --session, each ISO file of that session) becomes NAME.mov beside it
        (or in --output DIR): H.264 from x264 at constant quality (CRF \(TranscodeSettings.defaultQuality), preset \(TranscodeSettings.defaultPreset), or --crf, --preset), no B-frames,
        the program audio copied. Every frame keeps its time, so the file starts at the same program
        time as the ISO and the cut lists of `studio export --iso` fit it (change .mkv to .mov in them).
        A file is written whole or not at all (a temporary file beside it, renamed); an existing file
        is never overwritten; Ctrl-C stops and removes the partial file. A bar shows the progress on a
        terminal; otherwise a line at every tenth. H.264 ISOs need no transcode and are refused (skipped
        with --session). Exits 1 if any file failed. Details: docs/architecture.md (compressed frames).
        """, engine: true)
}

/// `studio collect`: a switcher's session's node ISO files copied to this machine over the nodes' HTTP
/// APIs (`NodeCollector`), resumable and checked (SHA-256), into one folder per session.
public enum CollectCommand: Command {
    public static let to = OptionSpec("to", "DIR", help: "where the session's folder session-N goes (default: the current directory)")
    public static let config = OptionSpec("config", "FILE", help: "the switcher's config, whose network.srt.nodes give each node's\napi and token (default: the api in the session's config snapshot, no token)")

    public static let spec = CommandSpec(
        "collect", abstract: "copy the capture nodes' ISO files of a switcher's session to this machine.",
        summary: "copy the nodes' ISO files of a session here over their HTTP APIs\n(resumable, checked with SHA-256)",
        positionals: [PositionalSpec("SESSION")], options: [to, config, .database],
        positionalsError: "expected one session id",
        discussion: """
        SESSION is a session of this switcher whose history lists its nodes' files (`studio recordings
        SESSION` shows them). Each node ISO file is copied from the node's HTTP API (network.srt.nodes'
        api and token) into DIR/session-SESSION/NODE/FILE: the layout the references of `studio export
        SESSION --iso` use, so an OTIO or EDL exported into DIR/session-SESSION finds them. A partial copy
        continues from its size; each copy is checked against the node's SHA-256 and fetched again
        whole once when it differs. A line per file, redrawn in place on a terminal. Reads --db, else
        $STUDIO_DB or the default path. Exits 1 if any file could not be copied or checked.
        """, engine: true)
}
