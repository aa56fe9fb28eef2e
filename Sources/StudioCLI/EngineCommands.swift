// The commands that run in the engine library (`spec.engine`): declared here, so that `studio` has their
// help and options without loading the library; what they do is in StudioEngine (ServeCommand.swift,
// DoctorCommand.swift), each entered through its `@_cdecl` entry (`EngineLibrary.entryPoint(of:)`).
// A new engine command: its declaration here, its file in StudioEngine, one line in `studio`'s `Help.commands`.

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
        TCP connect to each RTMP destination (stream keys masked). Each line is OK, WARNING or PROBLEM
        with what to do. Exits 1 when there is a problem.
        """, engine: true)
}
