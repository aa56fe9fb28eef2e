import Foundation

/// The kind of a studio event, as stored in SQLite and shown by `studio log`.
public struct EventKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let sessionStarted = EventKind(rawValue: "session_started")
    public static let sessionEnded = EventKind(rawValue: "session_ended")
    public static let cameraAdded = EventKind(rawValue: "camera_added")
    public static let cameraLost = EventKind(rawValue: "camera_lost")
    public static let cameraReturned = EventKind(rawValue: "camera_returned")
    /// A camera taken out of the show for good while it ran (details: by, reason, backend, identity,
    /// audio_input): unlike a lost one it is no longer a source; the same identity added later is a
    /// fresh `camera_added` under its stable name.
    public static let cameraRemoved = EventKind(rawValue: "camera_removed")
    /// A camera lost and back too often to write each time (details: lost, returned, over_ms, state, ended, scope):
    /// one per episode, and per minute of a long one (`FlapFilter`).
    public static let cameraFlapping = EventKind(rawValue: "camera_flapping")
    /// A network publisher refused (details: protocol, address, app, reason; never the key).
    public static let ingestRefused = EventKind(rawValue: "ingest_refused")
    /// A camera's size or frame rate changed on the operator's request (details: requested, granted).
    public static let cameraModeChanged = EventKind(rawValue: "camera_mode_changed")
    /// A camera control was set (details: control, value, previous).
    public static let cameraControlChanged = EventKind(rawValue: "camera_control_changed")
    /// The operator asked a camera to focus and expose on a point of its picture (details: x, y, method,
    /// and exposure, region, reason where they apply).
    public static let cameraFocus = EventKind(rawValue: "camera_focus")
    public static let switchProgram = EventKind(rawValue: "switch")
    /// A player's item began to play (details: item, item_number, duration_ms where known).
    public static let clipStarted = EventKind(rawValue: "clip_started")
    /// A player's item stopped playing (details: item, item_number, duration_ms (as played), how: `end`
    /// (its last frame, then held or black), `loop`, `next`, `truncated` (the file ended early),
    /// `stopped`, `cued`; `next` also for the operator's `studio next`).
    public static let clipEnded = EventKind(rawValue: "clip_ended")
    /// A camera or scene put on preview (details: preview, previous).
    public static let preview = EventKind(rawValue: "preview")
    /// A transition began on the program (details: kind, frames, from, to); its program time is the
    /// first frame of it.
    public static let transitionStarted = EventKind(rawValue: "transition_started")
    /// A transition's last frame (all of the new source) went out, or it was taken over by a cut
    /// (details: kind, frames, shown, from, to, taken_over).
    public static let transitionEnded = EventKind(rawValue: "transition_ended")
    /// An overlay went on air (details: overlay); its program time is the first frame showing it.
    public static let overlayOn = EventKind(rawValue: "overlay_on")
    /// An overlay went off air (details: overlay); its program time is the first frame without it.
    public static let overlayOff = EventKind(rawValue: "overlay_off")
    /// What is on program and on preview changed for some cameras (details: program, preview: the
    /// comma-separated cameras now on each). Shown by `watch`; not stored (switch and preview events are).
    public static let tally = EventKind(rawValue: "tally")
    /// The camera on program was lost and the program cut to its backup on that frame (details: lost,
    /// backup, reason, back, skipped, cut_back).
    public static let backupTaken = EventKind(rawValue: "backup_taken")
    /// `studio reload` or SIGHUP applied the config file (details: file, changed, by).
    public static let configReloaded = EventKind(rawValue: "config_reloaded")
    /// A reload changed nothing because of a problem (details: file, reason, by).
    public static let configReloadFailed = EventKind(rawValue: "config_reload_failed")
    /// A camera's picture settings changed (`studio picture`, or its pin when it appeared); its program
    /// time is the first frame with the new settings (details: each changed setting, `old -> new`).
    public static let pictureChanged = EventKind(rawValue: "picture_changed")
    /// An input's mixer settings or the master changed (`studio audio`, a reload); its program time is the
    /// first sample mixed with them (details: input, and each changed setting `old -> new`).
    public static let audioChanged = EventKind(rawValue: "audio_changed")
    /// A PipeWire Audio/Source became an input of the mixer (details: input, identity, node, display_name, usb_device).
    public static let audioInputFound = EventKind(rawValue: "audio_input_found")
    /// An input's source went away: silence in its strip only (details: input, identity, node).
    public static let audioInputLost = EventKind(rawValue: "audio_input_lost")
    /// A lost input's source came back under its name (details as `audio_input_found`).
    public static let audioInputBack = EventKind(rawValue: "audio_input_back")
    /// An input's source lost and back too often to write each time (details: input, lost, returned, over_ms, state, ended).
    public static let audioInputFlapping = EventKind(rawValue: "audio_input_flapping")
    /// The operator added an output mid-show (details: output, url masked, kind, by: `socket` or `http`).
    public static let outputAdded = EventKind(rawValue: "output_added")
    /// The operator stopped an output; it stays listed, ready to start again (details: output, by).
    public static let outputStopped = EventKind(rawValue: "output_stopped")
    /// The operator started a stopped output again (details: output, by).
    public static let outputStarted = EventKind(rawValue: "output_started")
    /// The operator removed an output (details: output, url masked, by).
    public static let outputRemoved = EventKind(rawValue: "output_removed")
    public static let outputConnected = EventKind(rawValue: "output_connected")
    public static let outputDisconnected = EventKind(rawValue: "output_disconnected")
    public static let outputReconnectAttempt = EventKind(rawValue: "output_reconnect_attempt")
    public static let outputReconnected = EventKind(rawValue: "output_reconnected")
    public static let recordingStarted = EventKind(rawValue: "recording_started")
    public static let recordingStopped = EventKind(rawValue: "recording_stopped")
    public static let encoderChosen = EventKind(rawValue: "encoder_chosen")
    public static let encoderFallback = EventKind(rawValue: "encoder_fallback")
    public static let framesDropped = EventKind(rawValue: "frames_dropped")
    /// A video encoder too slow for the format on this machine: measured at `serve` start (details
    /// `by: start probe`) or seen dropping over 10 % of its frames for 5 s (`by: dropped frames`).
    public static let encoderOverloaded = EventKind(rawValue: "encoder_overloaded")
    /// The whole server stood still (SIGSTOP, a VM paused, a laptop lid): no camera is blamed for it.
    public static let serverStalled = EventKind(rawValue: "server_stalled")
    /// Written by the event store once the database takes writes again, when events were lost while it
    /// could not (details: lost, bound, first_lost_ms, last_lost_ms, error).
    public static let eventsLost = EventKind(rawValue: "events_lost")
    /// Written by the event store as the second event of a session that continues another in a new database
    /// file, after the old one was deleted or replaced mid-show (details: previous_session, reason, old_file,
    /// events_in_old_file, path).
    public static let databaseReplaced = EventKind(rawValue: "database_replaced")
    /// A capture node's clock against its switcher's, first measured or moved by more than 5 ms since
    /// last written (details: offset_ms, rtt_ms, switcher, first).
    public static let clockOffset = EventKind(rawValue: "clock_offset")
    /// On a switcher: a capture node's ISO file ended while the node ran on (its disk full, its encoder or
    /// camera failing: the node's own history says which), seen in its recordings (details: node, path, bytes).
    public static let nodeRecordingStopped = EventKind(rawValue: "node_recording_stopped")
    public static let error = EventKind(rawValue: "error")

    /// Every kind this binary emits, in the order of docs/schema.md's table (a test holds the two
    /// together); `studio log --kind` checks its words against it.
    public static let all: [EventKind] = [
        .sessionStarted, .databaseReplaced, .sessionEnded, .cameraAdded, .cameraLost, .cameraReturned, .cameraRemoved, .cameraFlapping, .ingestRefused, .cameraModeChanged,
        .cameraControlChanged, .cameraFocus, .switchProgram, .clipStarted, .clipEnded, .backupTaken, .preview, .transitionStarted, .transitionEnded,
        .pictureChanged, .overlayOn, .overlayOff, .tally, .configReloaded, .configReloadFailed, .audioChanged, .audioInputFound, .audioInputLost, .audioInputBack, .audioInputFlapping, .outputAdded, .outputStopped, .outputStarted, .outputRemoved, .outputConnected,
        .outputDisconnected, .outputReconnectAttempt, .outputReconnected, .recordingStarted, .recordingStopped, .encoderChosen,
        .encoderFallback, .framesDropped, .encoderOverloaded, .serverStalled, .clockOffset, .nodeRecordingStopped, .eventsLost, .error,
    ]

    public init(from decoder: Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Something that happened, for the event store and for control clients watching the server.
public struct StudioEvent: Sendable, Codable, Equatable {
    public var kind: EventKind
    public var camera: CameraID?
    /// Wall-clock time when it happened.
    public var wallTime: Date
    /// Program time it applies to, where it has one (for a switch: the pts of the first frame of the
    /// new camera, the same clock as the FLV timestamps).
    public var programTime: MediaTime?
    /// Free-form details (output name, reason, error text). Never contains a stream key.
    public var details: [String: String]

    public init(kind: EventKind, camera: CameraID? = nil, wallTime: Date = Date(), programTime: MediaTime? = nil,
                details: [String: String] = [:]) {
        self.kind = kind
        self.camera = camera
        self.wallTime = wallTime
        self.programTime = programTime
        self.details = details
    }
}

/// Where stages report events. Implementations must not block: they copy and enqueue.
public protocol EventSink: Sendable {
    func emit(_ event: StudioEvent)
}

/// Drops every event (tests and tools that do not record).
public struct DiscardingEventSink: EventSink {
    public init() {}
    public func emit(_ event: StudioEvent) {}
}
