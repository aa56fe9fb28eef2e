enum Help {
    static let overview = """
    studio — a live production and ingest server for a studio PC with several cameras.

    USAGE
      studio serve [options]          run the server in the foreground (Ctrl-C stops it cleanly)
      studio cameras [--json]         list cameras: name, backend, state, format
      studio switch NAME              cut the program to camera NAME (e.g. cam2)
      studio camera NAME [--fps F] [--size WxH]
                                      set a device camera's rate and/or size; prints what
                                      the device granted (no options: its current mode)
      studio controls NAME [--json]   a device camera's controls: ranges, menus, values
      studio control NAME CTRL=VALUE  set a control (e.g. brightness=140, test_pattern=0)
      studio status [--json]          session, uptime, program source and fps, encoder, outputs
      studio sessions [--json]        past and current sessions
      studio log [SESSION] [--json]   events of a session (default: the current or latest one)
      studio recordings [SESSION] [--json]
                                      program and ISO recording files of a session
      studio watch [--json]           follow events as they happen
      studio doctor [--json] [serve options]
                                      check this machine: cameras, GPU, groups, encoders,
                                      disk, database, RTMP destinations

    Client commands find the server through --socket, then $STUDIO_SOCKET, then
    $XDG_RUNTIME_DIR/studio/studio.sock (/run/studio/studio.sock as root,
    /tmp/studio-UID/studio.sock without XDG_RUNTIME_DIR), then /run/studio/studio.sock
    if that exists (the systemd service's socket).
    `sessions`, `log` and `recordings` read the database directly when no server runs
    (--db, then $STUDIO_DB, then the default path).

    Run `studio COMMAND --help` for a command's options.
    """

    static let serve = """
    studio serve — run the studio server in the foreground.

    USAGE
      studio serve [--config FILE] [--demo] [--rtmp URL]... [--record DIR] [--db FILE]
                   [--socket PATH] [--program WxH@FPS] [--preset NAME] [--bitrate RATE]
                   [--cameras N] [--camera-size WxH] [--audio tone|silence|pipewire[:NODE]]
                   [--no-iso] [--iso-preset NAME] [--encoder auto|vaapi|x264]
                   [--backends LIST] [--socket-group NAME]

    OPTIONS
      --config FILE       YAML config (see deploy/studio.yaml); flags override it
      --demo              test-pattern cameras (3 unless --cameras says otherwise) instead of
                          the real ones; no hardware needed
      --cameras N         number of test-pattern cameras (implies --demo; 0 allowed)
      --backends LIST     real cameras to look for: v4l2, pipewire (comma-separated) or none;
                          default: config cameras.backends (both), none with --demo
      --rtmp URL          push the program over RTMP to URL; repeat for several destinations
      --record DIR        also record the program to DIR/session-ID-program.mkv, and each
                          camera on its own (ISO) to DIR/session-ID-camN.mkv
      --no-iso            record only the program (config: cameras: iso: false)
      --iso-preset NAME   x264 preset of the ISO encoders (default ultrafast)
      --camera-size WxH   size of the test-pattern cameras (default 1280x720)
      --db FILE           SQLite event store (default: $STUDIO_DB, or the config, or
                          $XDG_DATA_HOME/studio/studio.db; /var/lib/studio/studio.db as root)
      --socket PATH       control socket (default: see `studio --help`)
      --socket-group NAME let members of group NAME use the control socket too (mode 0660);
                          default: owner only (config: socket_group)
      --program WxH@FPS   program format (default 1280x720@30)
      --preset NAME       x264 preset (default veryfast)
      --bitrate RATE      video bitrate, e.g. 4500k or 4.5M (default 4500k)
      --encoder CHOICE    program encoder: auto (VAAPI if the GPU has H.264 encode, else x264;
                          the default), vaapi (fail if unavailable) or x264
      --audio KIND        program audio: tone (default), silence, or a PipeWire microphone:
                          pipewire (the default Audio/Source) or pipewire:NODE (by node.name)
      --inject-encoder-fault N
                          testing aid: the program and ISO encoders fail after N frames, to
                          exercise the switch to x264 mid-show on a machine without a GPU

    If the hardware encoder fails mid-show, the program switches to x264 on the next frame (a new
    keyframe and sequence header; timestamps continue) and logs an encoder_fallback event.
    SIGINT, SIGTERM or SIGHUP stop the server cleanly: outputs drained, recordings finalised,
    session closed; a second signal during shutdown exits at once.
    """

    static let cameras = """
    studio cameras — list the server's cameras.

    USAGE
      studio cameras [--json] [--socket PATH]
    """

    static let switchCommand = """
    studio switch — cut the program feed to a camera.

    USAGE
      studio switch NAME [--socket PATH]

    Exits 0 once the server has put the camera on program, and prints the program time of the cut.
    An unknown NAME exits 1 and lists the cameras that exist.
    """

    static let status = """
    studio status — what the server is doing now.

    USAGE
      studio status [--json] [--socket PATH]
    """

    static let sessions = """
    studio sessions — past and current sessions.

    USAGE
      studio sessions [--json] [--limit N] [--socket PATH] [--db FILE]

    Asks the running server; with none running, reads the database directly.
    """

    static let log = """
    studio log — the events of a session, in order.

    USAGE
      studio log [SESSION] [--json] [--socket PATH] [--db FILE]

    SESSION defaults to the current session, or the latest one. In JSON each event has
    `kind`, `camera`, `wall_time` (ISO 8601), `program_ms` (program time in milliseconds,
    the clock of the FLV timestamps) and `details`.
    """

    static let doctor = """
    studio doctor — what this machine offers a studio, and what is wrong.

    USAGE
      studio doctor [--json] [--config FILE] [--rtmp URL]... [--record DIR] [--db FILE] ...

    Takes the same options as `studio serve` and checks the setup that serve would run: each V4L2
    camera (card, identity, the mode it would capture for the program, access, and which program
    holds it when busy; metadata/output nodes counted as skipped), the PipeWire socket, GPU render nodes, video/render group membership,
    FFmpeg encoders (libx264, aac, h264_vaapi), the database path, free disk for recordings, and a
    TCP connect to each RTMP destination (stream keys masked). Each line is OK, WARNING or PROBLEM
    with what to do. Exits 1 when there is a problem.
    """

    static let recordings = """
    studio recordings — the recording files of a session: the program and each camera's ISO.

    USAGE
      studio recordings [SESSION] [--json] [--socket PATH] [--db FILE]

    SESSION defaults to the current session, or the latest one. Lists each file with its camera
    ("program" for the program feed), when it started and ended, and its size on disk ("missing"
    when the file is gone). Asks the running server; with none running, reads the database directly.
    """

    static let watch = """
    studio watch — print events as the server emits them, until interrupted.

    USAGE
      studio watch [--json] [--socket PATH]
    """
}

extension Help {
    static let camera = """
    studio camera — set a device camera's frame rate and/or size while it runs.

    USAGE
      studio camera NAME [--fps RATE] [--size WxH] [--json] [--socket PATH]

    The camera asks the device for the nearest mode it offers (V4L2: VIDIOC_S_FMT and
    VIDIOC_S_PARM) and prints what the device granted, which may differ from the request.
    Without --fps and --size it prints the current mode. Each change is logged as an
    event (camera_mode_changed). Test-pattern cameras have no adjustable mode.
    """

    static let controls = """
    studio controls — list a device camera's controls.

    USAGE
      studio controls NAME [--json] [--socket PATH]

    One line per control: name (to set it by), type, current value, range or menu items,
    and whether it is read-only or inactive (overridden by another control, such as an
    automatic mode).
    """

    static let control = """
    studio control — set one control of a device camera.

    USAGE
      studio control NAME CONTROL=VALUE [--json] [--socket PATH]

    VALUE is a number, true/false (on/off) for switches, or a menu item's name or index.
    Unknown controls, values out of range, read-only and inactive controls are refused
    with the reason. Each change is logged as an event (camera_control_changed).
    """

    static func text(for command: String) -> String? {
        switch command {
        case "serve": serve
        case "cameras": cameras
        case "switch": switchCommand
        case "camera": camera
        case "controls": controls
        case "control": control
        case "status": status
        case "sessions": sessions
        case "log": log
        case "recordings": recordings
        case "watch": watch
        case "doctor": doctor
        case "": overview
        default: nil
        }
    }
}
