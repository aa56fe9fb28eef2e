import Foundation
import StudioCore
import Output
import LivePictures
import HTTPConsole

/// The server's counters in the Prometheus text exposition format (version 0.0.4), made from the same
/// replies as `status` and `cameras`: one place reads the pipeline, this only renders. Served by the
/// control command `metrics` (`studio metrics`) and by the HTTP console's `GET /metrics`.
///
/// Naming follows Prometheus: everything is `studio_...`, counters end in `_total`, units are in the
/// name (`_bytes`, `_seconds`), and a state is a state set (one sample per possible state, 1 for the
/// current one). Program audio levels are gauges in dBFS by channel (`left`, `right`), at the floor
/// (-96) in silence; the mixer's inputs likewise, by `input` and `channel`, with the program's loudness (LUFS).
public enum Metrics {
    public static func render(status: StatusReply, cameras: CamerasReply, tiles: TileMetrics? = nil, http: HTTPMetrics? = nil) -> String {
        var text = MetricsText()
        text.gauge("studio_session_id", "The current session's id (see `studio sessions`).", Double(status.session))
        text.gauge("studio_start_time_seconds", "When the server started, in seconds since the Unix epoch.",
                   status.startedAt.timeIntervalSince1970)
        text.gauge("studio_uptime_seconds", "Seconds since the server started.", status.uptimeSeconds)

        // The program.
        let program = status.program
        text.gauge("studio_program_fps", "Program frames delivered per second, measured.", program.fps)
        text.counter("studio_program_frames_total", "Program frames delivered to the encoder.", program.frames)
        text.counter("studio_program_late_ticks_total", "Program ticks that came late (the program thread was behind).", program.lateTicks)
        text.counter("studio_program_slate_frames_total", "Program frames that showed the slate (no source to show).", program.slateFrames)
        text.counter("studio_program_reduced_frames_total", "Camera pictures shown on program at reduced size (a full decode not ready in time).",
                     program.reducedFrames)
        text.counter("studio_program_held_ticks_total", "Program ticks a take waited for its camera's first full-size picture.",
                     program.heldTicks)
        text.counter("studio_program_composed_frames_total", "Program frames composed from a scene's layers.", program.composedFrames)
        text.counter("studio_program_transition_frames_total", "Program frames that were part of a transition.", program.transitionFrames)
        text.gauge("studio_program_time_seconds", "Program time of the latest frame (the clock of the stream's timestamps).",
                   Double(program.programMilliseconds) / 1000)

        // The program's video encoder.
        let encoder = status.encoder
        text.gauge("studio_encoder_info", "The encoders in use (value 1), with what was asked for.",
                   [(["video": encoder.video, "audio": encoder.audio, "choice": encoder.choice, "preset": encoder.preset], 1)])
        text.counter("studio_encoder_frames_encoded_total", "Program frames the video encoder took.", encoder.framesEncoded)
        text.counter("studio_encoder_frames_dropped_total", "Program frames dropped because the video encoder was behind.", encoder.framesDropped)
        text.counter("studio_encoder_errors_total", "Video encode errors.", encoder.encodeErrors)
        text.gauge("studio_encoder_overloaded", "1 while the video encoder drops over 10 % of its frames for 5 s, else 0.",
                   encoder.overloadedFPS == nil ? 0 : 1)
        text.gauge("studio_encoder_generation", "The video encoder's generation: +1 at each mid-show fallback.", Double(encoder.generation))
        text.gauge("studio_encoder_bitrate_bits_per_second", "The configured video bitrate.", Double(encoder.bitrate))

        // Outputs (stream destinations and the program recording), by name: never by URL (stream keys).
        // A capture node's senders' connections (`send-cam1`) are outputs here too.
        let outputs = status.outputs + status.senders.map(\.output)
        func perOutput(_ value: (StatusReply.OutputView) -> Int) -> [([String: String], Double)] {
            outputs.map { (["output": $0.name], Double(value($0))) }
        }
        text.counter("studio_output_sent_bytes_total", "Bytes an output has written (sent to the server or to the file).",
                     perOutput(\.bytesSent))
        text.counter("studio_output_sent_packets_total", "Packets an output has written.", perOutput(\.packetsSent))
        text.counter("studio_output_dropped_packets_total", "Packets an output dropped because it was behind, by media.",
                     outputs.flatMap { [(["output": $0.name, "media": "video"], Double($0.droppedVideo)),
                                        (["output": $0.name, "media": "audio"], Double($0.droppedAudio))] })
        text.counter("studio_output_reconnects_total", "Connections an output made again after losing one.", perOutput(\.reconnects))
        text.counter("studio_output_reconnect_attempts_total", "Connection attempts after a failure, successful or not.",
                     perOutput(\.reconnectAttempts))
        text.gauge("studio_output_sent_bits_per_second", "What an output wrote per second over the last second or two (0 while not connected).",
                   perOutput(\.bitsPerSecond))
        text.gauge("studio_output_latency_seconds",
                   "The program's latency by stage over the last packets written (quantile 0.5 and 0.95; see docs/latency.md).",
                   outputs.flatMap { latencySamples($0.latency, labels: ["output": $0.name]) })
        text.gauge("studio_output_up", "1 while an output is connected (or its file open), else 0.",
                   outputs.map { (["output": $0.name], $0.state == OutputState.connected.rawValue ? 1 : 0) })
        text.gauge("studio_output_state", "An output's state: 1 for the current one.",
                   outputs.flatMap { output in
                       OutputState.allCases.map { (["output": output.name, "state": $0.rawValue], output.state == $0.rawValue ? 1 : 0) }
                   })

        // Cameras.
        text.gauge("studio_cameras", "Cameras the session has seen, lost ones included.", Double(status.cameras))
        text.gauge("studio_cameras_lost", "Cameras lost now (unplugged or silent).", Double(status.camerasLost))
        let all = cameras.cameras
        func perCamera(_ value: (CameraView) -> Int) -> [([String: String], Double)] {
            all.map { (["camera": $0.name], Double(value($0))) }
        }
        text.counter("studio_camera_frames_total", "Frames a camera captured.", perCamera(\.frames))
        text.counter("studio_camera_dropped_frames_total", "Frames a camera dropped (its queue was full).", perCamera(\.framesDropped))
        text.counter("studio_camera_corrupt_frames_total", "Damaged frames a camera discarded.", perCamera(\.framesCorrupt))
        let compressed = all.compactMap { camera in camera.decode.map { (camera.name, $0) } }
        text.counter("studio_camera_decoded_frames_total", "Frames a compressed camera decoded, by size (full, or reduced for the tiles only).",
                     compressed.flatMap { name, decode in [(["camera": name, "size": "full"], Double(decode.full)),
                                                           (["camera": name, "size": "reduced"], Double(decode.reduced))] })
        text.counter("studio_camera_undecoded_frames_total", "Frames a compressed camera did not decode (nobody needed them).",
                     compressed.map { (["camera": $0.0], Double($0.1.skipped)) })
        text.gauge("studio_camera_full_decode", "1 while a compressed camera is decoded at full size (seen, recorded or forced), else 0.",
                   compressed.map { (["camera": $0.0], $0.1.demand == DecodeDemand.full.rawValue ? 1 : 0) })
        text.gauge("studio_camera_up", "1 while a camera is live, else 0.",
                   all.map { (["camera": $0.name], $0.state == CameraState.live.rawValue ? 1 : 0) })
        text.gauge("studio_camera_state", "A camera's state: 1 for the current one.",
                   all.flatMap { camera in
                       CameraState.allCases.map { (["camera": camera.name, "state": $0.rawValue], camera.state == $0.rawValue ? 1 : 0) }
                   })
        text.gauge("studio_camera_info", "A camera's backend and identity (value 1).",
                   all.map { (["camera": $0.name, "backend": $0.backend, "identity": $0.identity], 1) })

        // Network cameras: connection, buffer, clock; SRT's own figures.
        let network = all.compactMap { camera in camera.network.map { (["camera": camera.name], $0) } }
        text.gauge("studio_network_connected", "1 while a network camera's connection is up, else 0.", network.map { ($0.0, $0.1.connected ? 1 : 0) })
        text.counter("studio_network_connection_attempts_total", "Connections a network camera tried.", network.map { ($0.0, Double($0.1.attempts)) })
        text.gauge("studio_network_received_bits_per_second", "What a network camera received over the last second.", network.map { ($0.0, Double($0.1.bitRate)) })
        text.counter("studio_network_pictures_total", "A network camera's pictures: decoded (in), shown, shown again (repeated), dropped (late, stale or over the buffer).",
                     network.flatMap { labels, status in
                         [("in", status.picturesIn), ("shown", status.picturesShown), ("repeated", status.picturesRepeated), ("dropped", status.picturesDropped)]
                             .map { (labels.merging(["fate": $0.0]) { a, _ in a }, Double($0.1)) }
                     })
        text.counter("studio_network_undecodable_packets_total", "Video packets a network camera's decoder refused (a damaged stream or a broken codec configuration).",
                     network.map { ($0.0, Double($0.1.packetsUndecodable)) })
        text.gauge("studio_network_buffer_seconds", "How long a network camera's newest picture waits in its buffer.",
                   network.map { ($0.0, Double($0.1.bufferMilliseconds) / 1000) })
        text.gauge("studio_network_buffer_target_seconds", "What a network camera's buffer aims for.", network.map { ($0.0, Double($0.1.targetMilliseconds) / 1000) })
        text.gauge("studio_network_drift_ppm", "A network camera's clock against this machine's (positive: it runs slow), once measured.",
                   network.compactMap { labels, status in status.driftPPM.map { (labels, $0) } })
        text.gauge("studio_network_decoder_info", "How a network camera's video is decoded (value 1): libavcodec's decoder, its threads, the hardware (vaapi, or none).",
                   network.compactMap { labels, status in
                       status.decoder.map { decoder in
                           (labels.merging(["decoder": decoder.name, "threads": String(decoder.threads),
                                            "hardware": decoder.hardware == nil ? "none" : "vaapi"]) { a, _ in a }, 1)
                       }
                   })
        let srt = network.compactMap { labels, status in status.srt.map { (labels, $0) } }
        text.gauge("studio_network_srt_rtt_seconds", "An SRT connection's round trip (libsrt).", srt.map { ($0.0, $0.1.rttMilliseconds / 1000) })
        text.counter("studio_network_srt_packets_total", "An SRT connection's packets lost on the way, retransmitted, and dropped too late (libsrt).",
                     srt.flatMap { labels, stats in
                         [("lost", stats.packetsLost), ("retransmitted", stats.packetsRetransmitted), ("dropped", stats.packetsDropped)]
                             .map { (labels.merging(["fate": $0.0]) { a, _ in a }, Double($0.1)) }
                     })

        // Players: where each is in its item, and its state.
        let players = all.compactMap { camera in camera.player.map { (["camera": camera.name], $0) } }
        text.gauge("studio_player_position_seconds", "Where a player is in its item.", players.map { ($0.0, Double($0.1.positionMilliseconds) / 1000) })
        text.gauge("studio_player_remaining_seconds", "What is left of a player's item (once its length is known).",
                   players.compactMap { labels, status in status.remainingMilliseconds.map { (labels, Double($0) / 1000) } })
        text.gauge("studio_player_state", "A player's state: 1 for the current one.",
                   players.flatMap { labels, status in
                       PlayerStatus.State.allCases.map { (labels.merging(["state": $0.rawValue]) { a, _ in a }, status.state == $0 ? 1 : 0) }
                   })
        text.counter("studio_player_frames_total", "A player's program ticks that showed a picture again (repeated) and pictures never shown (skipped).",
                     players.flatMap { labels, status in
                         [("repeated", status.repeatedFrames), ("skipped", status.skippedFrames)].map { (labels.merging(["fate": $0.0]) { a, _ in a }, Double($0.1)) }
                     })

        // ISO recordings, one per camera.
        let iso = status.iso
        func perFeed(_ value: (StatusReply.IsoView) -> Int) -> [([String: String], Double)] {
            iso.map { (["camera": $0.camera], Double(value($0))) }
        }
        text.counter("studio_iso_frames_encoded_total", "Frames an ISO feed encoded.", perFeed(\.framesEncoded))
        text.counter("studio_iso_frames_skipped_total", "Frames an ISO feed skipped because its encoder was behind.", perFeed(\.framesSkipped))
        text.counter("studio_iso_frames_unusable_total", "Frames an ISO feed could not use.", perFeed(\.framesUnusable))
        text.counter("studio_iso_encode_errors_total", "An ISO feed's encode errors.", perFeed(\.encodeErrors))
        text.counter("studio_iso_written_bytes_total", "Bytes an ISO feed wrote to its file.", perFeed(\.bytesWritten))
        text.gauge("studio_iso_latency_seconds",
                   "An ISO feed's latency by stage over the last frames written (capture_to_written: capture to file; see docs/latency.md).",
                   iso.flatMap { latencySamples($0.latency, labels: ["camera": $0.camera]) })

        // Program audio levels, as the encoder gets it.
        let levels = status.audio.levels
        func perChannel(_ values: [Double]) -> [([String: String], Double)] {
            values.enumerated().map { (["channel": Self.channelName($0.offset, of: values.count)], $0.element) }
        }
        text.gauge("studio_audio_peak_dbfs", "Program audio peak over the last 100 ms, in dBFS (-96 in silence).", perChannel(levels.peakDBFS))
        text.gauge("studio_audio_rms_dbfs", "Program audio RMS over the last 100 ms, in dBFS (-96 in silence).", perChannel(levels.rmsDBFS))
        text.gauge("studio_audio_peak_hold_dbfs", "Program audio's highest peak over the last 1.5 s, in dBFS.", perChannel(levels.peakHoldDBFS))

        // Program audio input.
        let audio = status.audioInput
        text.gauge("studio_audio_input_info", "Where the program audio comes from (value 1).", [(["source": audio.source], 1)])
        if let captured = audio.capturedSeconds {
            text.counter("studio_audio_input_captured_seconds_total", "Seconds of audio the microphone delivered.", captured)
        }
        if let silence = audio.silenceSeconds {
            text.counter("studio_audio_input_silence_seconds_total", "Seconds of program audio filled with silence while the microphone was missing.",
                         silence)
        }
        if let discarded = audio.discardedSamples {
            text.counter("studio_audio_input_discarded_samples_total", "Microphone samples discarded (they came faster than the program takes them).",
                         discarded)
        }

        // The mixer: per input (after its fader) and the program's loudness (EBU R128), where measured.
        let mixer = status.audio.mixer
        func perInput(_ values: (LevelsReply) -> [Double]) -> [([String: String], Double)] {
            mixer.inputs.flatMap { input in
                values(input.levels).enumerated().map {
                    (["input": input.name, "channel": Self.channelName($0.offset, of: input.levels.peakDBFS.count)], $0.element)
                }
            }
        }
        text.gauge("studio_audio_input_peak_dbfs", "An input's peak over the last 100 ms after its fader, pan, mute and follow, in dBFS.",
                   perInput(\.peakDBFS))
        text.gauge("studio_audio_input_rms_dbfs", "An input's RMS over the last 100 ms after its fader, pan, mute and follow, in dBFS.",
                   perInput(\.rmsDBFS))
        text.gauge("studio_audio_input_muted", "1 while an input is muted, else 0.", mixer.inputs.map { (["input": $0.name], $0.muted ? 1 : 0) })
        text.gauge("studio_audio_input_up", "1 while an input's source is present, else 0 (lost).",
                   mixer.inputs.map { (["input": $0.name], $0.state == "lost" ? 0 : 1) })
        let loudness: [(String, String, Double?)] = [
            ("studio_audio_momentary_lufs", "Program loudness over the last 400 ms (EBU R128 M), in LUFS.", mixer.program.momentaryLUFS),
            ("studio_audio_short_term_lufs", "Program loudness over the last 3 s (EBU R128 S), in LUFS.", mixer.program.shortTermLUFS),
            ("studio_audio_integrated_lufs", "Program loudness since the start, gated (EBU R128 I), in LUFS.", mixer.program.integratedLUFS),
            ("studio_audio_sample_peak_dbfs", "The program's highest sample since the start, in dBFS.", mixer.program.samplePeakDBFS),
        ]
        for (name, help, value) in loudness { if let value { text.gauge(name, help, value) } }

        // The event store.
        let store = status.store
        text.gauge("studio_event_store_queued_events", "Events waiting on the store thread for the database.", Double(store.queued))
        text.counter("studio_event_store_written_events_total", "Events written to the database.", store.written)
        text.counter("studio_event_store_lost_events_total", "Events that will never be stored.", store.lost)
        text.counter("studio_event_store_replacements_total", "Times the database file was deleted or replaced mid-show.", store.replacements)
        text.gauge("studio_event_store_retrying", "1 while writes to the database fail and are retried, else 0.",
                   store.retryingSince == nil ? 0 : 1)

        if let tiles {
            // The console's live tiles and the requests for them.
            let counters = tiles.counters
            text.counter("studio_tile_pictures_total", "Tile pictures (JPEGs) made for the console.", Double(counters.pictures))
            text.counter("studio_tile_scene_compositions_total", "Scene tiles composed at tile size.", Double(counters.sceneCompositions))
            text.counter("studio_tile_unchanged_total", "Watched tiles not made again because their source had not changed.",
                         Double(counters.unchanged))
            text.counter("studio_tile_skipped_rounds_total", "Tile rounds skipped, by reason.", [
                (["reason": "program_behind"], Double(counters.skippedProgramBehind)),
                (["reason": "over_budget"], Double(counters.skippedOverBudget)),
                (["reason": "overrun"], Double(counters.skippedOverrun)),
            ])
            text.counter("studio_tile_cpu_seconds_total", "CPU time of the tile thread.", Double(counters.cpuNanoseconds) / 1e9)
            text.counter("studio_http_tile_requests_total", "HTTP requests to the tile routes, by route.",
                         tiles.requests.map { (["route": $0.route], Double($0.count)) })
        }

        if let http {
            // The HTTP console's connections (see HTTPConnections) and event-stream clients.
            let connections = http.connections
            text.gauge("studio_http_connections", "HTTP connections open now, by what they do.", [
                (["state": "waiting"], Double(connections.waiting)),
                (["state": "answering"], Double(connections.answering)),
                (["state": "stream"], Double(connections.streams)),
            ])
            text.counter("studio_http_connections_refused_total", "HTTP connections refused at accept, by reason.",
                         HTTPConnections.Refusal.allCases.map { (["reason": $0.rawValue], Double(connections.refused[$0] ?? 0)) })
            text.counter("studio_http_connections_cut_total", "HTTP connections the console ended itself, by reason.",
                         HTTPConnections.Cut.allCases.map { (["reason": $0.rawValue], Double(connections.cut[$0] ?? 0)) })
            text.gauge("studio_http_event_clients", "Clients of the HTTP event stream now.", Double(http.eventClients))
            text.counter("studio_http_event_clients_dropped_total", "Event-stream clients dropped because they did not read.",
                         http.eventClientsDropped)
            text.counter("studio_http_throttled_requests_total", "HTTP requests refused (429) because their address had spent its budget.",
                         http.throttledRequests)
        }

        if let disk = status.disk, let free = disk.freeBytes {
            text.gauge("studio_disk_free_bytes", "Free space in the recording directory.", [(["path": disk.path], Double(free))])
        }
        return text.output
    }

    /// `left` and `right` for stereo, `mono` for one channel, else the channel's number from 1.
    /// A latency budget's samples (seconds), p50 and p95 per stage, in the stages' order, with `labels`.
    static func latencySamples(_ latency: [String: LatencyQuantiles], labels: [String: String]) -> [([String: String], Double)] {
        LatencyStage.allCases.flatMap { stage -> [([String: String], Double)] in
            guard let q = latency[stage.rawValue] else { return [] }
            return [(labels.merging(["stage": stage.rawValue, "quantile": "0.5"]) { $1 }, q.p50 / 1000),
                    (labels.merging(["stage": stage.rawValue, "quantile": "0.95"]) { $1 }, q.p95 / 1000)]
        }
    }

    static func channelName(_ index: Int, of count: Int) -> String {
        switch (count, index) {
        case (1, _): "mono"
        case (2, 0): "left"
        case (2, 1): "right"
        default: String(index + 1)
        }
    }
}

/// Builds the text format: each family once, `# HELP` and `# TYPE` before its samples, label values
/// and help text escaped as the format says.
struct MetricsText {
    private(set) var output = ""

    mutating func counter(_ name: String, _ help: String, _ value: Int) { family(name, "counter", help, [([:], Double(value))]) }
    mutating func counter(_ name: String, _ help: String, _ value: Double) { family(name, "counter", help, [([:], value)]) }
    mutating func counter(_ name: String, _ help: String, _ samples: [([String: String], Double)]) { family(name, "counter", help, samples) }
    mutating func gauge(_ name: String, _ help: String, _ value: Double) { family(name, "gauge", help, [([:], value)]) }
    mutating func gauge(_ name: String, _ help: String, _ samples: [([String: String], Double)]) { family(name, "gauge", help, samples) }

    private mutating func family(_ name: String, _ type: String, _ help: String, _ samples: [([String: String], Double)]) {
        output += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n"
        for (labels, value) in samples {
            let labelText = labels.isEmpty ? "" :
                "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(Self.escapeLabel($0.value))\"" }.joined(separator: ",") + "}"
            output += "\(name)\(labelText) \(Self.number(value))\n"
        }
    }

    /// `\` and newline in help text.
    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// `\`, `"` and newline in a label value.
    static func escapeLabel(_ text: String) -> String {
        escapeHelp(text).replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// Whole numbers without a fraction; `+Inf`, `-Inf`, `NaN` as the format spells them.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// The HTTP console's part of the metrics.
public struct HTTPMetrics: Sendable {
    public var connections: HTTPConnections.Counts
    public var eventClients: Int
    public var eventClientsDropped: Int
    public var throttledRequests: Int

    init(_ console: HTTPConsole) {
        connections = console.connectionCounts
        eventClients = console.events.clientCount
        eventClientsDropped = console.events.droppedClientCount
        throttledRequests = console.throttledCount
    }
}

/// The tiles' part of the metrics: the tile thread's counters and the requests to the tile routes.
public struct TileMetrics: Sendable {
    public var counters: TileCounters
    public var requests: [(route: String, count: Int)]
}
